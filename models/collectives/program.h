// Per-rank collective programs: plain data, no SystemC. An algorithm turns
// (operation, ranks, element count, chunking) into one Program per rank; the SystemC
// engine (engine.h) runs them on a fabric and the functional executor (functional.h)
// runs them on real numbers to prove they compute the right result.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "models/collectives/protocol.h"

namespace fabricsim::coll {

// How a receive learns that its data is complete, and the run-wide costs of the library's
// kernels (engine.h, "The protocol model").
struct SyncProtocol {
  // false: a receive completes when its data has arrived (an ideal notification), and
  // nothing below but launch_latency applies: the idealised transport.
  // true (NCCL Simple): the receiver answers the data with an ack of `ack_bytes`; the
  // sender's fence completes when the ack arrives, then it writes a flag of `flag_bytes`;
  // the receive completes when the flag arrives. Every step of this handshake is real
  // fabric traffic, so its latency comes from the fabric. LL and LL128 schedules
  // (Schedule::protocol) always run the protocol model, with their flags in the data.
  bool fence_flag = false;
  uint64_t ack_bytes = 0;
  uint64_t flag_bytes = 0;          // also the payload of a slot release (kHead)
  uint64_t launch_latency_ps = 0;   // from start() until the first ops may run (kernel launch)
  uint64_t completion_latency_ps = 0;  // last op done -> the collective is seen complete
  uint32_t slots = 0;  // buffer slots per connection (NCCL_STEPS); 0: unbounded, no kHead
};

enum class OpKind : uint8_t {
  kSend,     // send elems [offset, offset+count) of this rank's buffer to `peer`
  kRecv,     // receive `count` elems from `peer` into [offset, offset+count), copy or reduce
  kCompute,  // occupy the rank's compute unit for `duration_ps` (no data); compute ops of
             // one rank run one at a time, in the order they become ready
  kDelay,    // complete `duration_ps` after it starts, occupying nothing (0: a join point
             // that completes with its deps; e.g. a per-collective launch cost on a stream)
  // In-switch collectives (NVLS). A rank's NVLS group is the ranks of its domain
  // (Schedule::nvls_group), the ranks linked to the same NVLS switches:
  kNvlsReduce,  // [offset, offset+count) of this rank := the sum over its group of that
                // range, reduced by the switches (multimem.ld_reduce); completes when the
                // result has arrived
  kNvlsStore,   // multicast [offset, offset+count) to every rank of its group, this one
                // included (multimem.st); each of them (also the sender) receives it with
                // a kRecv whose peer is the sender and tag is `tag`; completes when sent
};

enum class RecvMode : uint8_t { kCopy, kReduceSum };

struct Op {
  OpKind kind = OpKind::kSend;
  int peer = -1;              // rank for kSend/kRecv
  uint64_t tag = 0;           // matches a kSend on `peer` with a kRecv on the receiver
  uint64_t offset = 0;        // in elements, into the rank's buffer
  uint64_t count = 0;         // in elements
  RecvMode mode = RecvMode::kCopy;
  uint64_t duration_ps = 0;   // kCompute and kDelay only
  // The rank's sequential executor (an NCCL channel's thread block) that issues this send
  // under the protocol model: sends of one stream run one at a time, in program order;
  // -1: issued as soon as its deps are met. A receive with a stream runs in that stream's
  // order too (its turn comes after the stream's earlier ops).
  int32_t stream = -1;
  // The channel whose connection to `peer` carries this send or receive under the protocol
  // model: a connection is (writer, reader, stream, channel), with its own `slots` buffer
  // slots and, over a NIC, its own proxies (engine.h). As NCCL's channels: every channel
  // has its own connectors to its peers (src/include/comm.h, ncclChannel::peers). Set by
  // generators whose ops have no stream (their channel would otherwise share one
  // connection per peer); -1: the stream alone names the connection. Not a thread block:
  // it serialises nothing. Read for kSend and kRecv only.
  int32_t channel = -1;
  std::vector<uint32_t> deps; // indices of ops of the same rank that must complete first
};

struct Program {
  std::vector<Op> ops;
};

// A whole collective: one program per rank plus what it computes.
struct Schedule {
  std::string algorithm;           // "ring", ...
  int ranks = 0;
  uint64_t count = 0;              // elements per rank buffer
  std::vector<Program> programs;   // size == ranks
  // NVLS group size G: rank r's group is the G ranks (r / G) * G .. (r / G) * G + G - 1
  // (a two-level system's domain); 0 = every rank. Must divide ranks.
  int nvls_group = 0;
  Protocol protocol = Protocol::kSimple;  // wire format and synchronisation (protocol.h)
};

// First rank and size of rank r's NVLS group in `s`.
inline int nvls_group_first(const Schedule& s, int r) {
  return s.nvls_group > 0 ? (r / s.nvls_group) * s.nvls_group : 0;
}
inline int nvls_group_size(const Schedule& s) {
  return s.nvls_group > 0 ? s.nvls_group : s.ranks;
}

// Checks structural invariants: one program per rank; deps point to earlier ops of the
// same rank; kSend/kRecv peers in [0, ranks) and != self; [offset, offset+count) within
// `count`; every kSend (rank r, peer p, tag t) has exactly one kRecv on rank p with peer r,
// tag t and the same count, and vice versa (so tags are unique per directed pair).
// Throws InternalError naming the offending op(s) on the first violation.
void validate(const Schedule& s);

// One-line description of op `index` of `rank` for error messages, e.g.
// "rank 3 op 17 (send peer=4 tag=0x200000001 offset=10 count=5)".
std::string describe_op(int rank, std::size_t index, const Op& op);

}  // namespace fabricsim::coll
