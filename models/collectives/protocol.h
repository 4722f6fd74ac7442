// NCCL's three protocols as wire formats and synchronisation, and the library constants
// that cut a collective into channels and steps. Plain C++, no SystemC.
//
//   simple  bulk data; after each step the writer fences (its writes are acknowledged)
//           and then writes a flag the reader polls: data, ack and flag cross the fabric
//           (the engine's fence_flag handshake). Wire bytes = data bytes.
//   ll      "low latency": 8-byte lines of 4 B data + 4 B flag, written together, so the
//           reader polls the data itself and no separate flag message exists. Wire bytes
//           = ceil(D / 4) x 8: twice the data.
//   ll128   128-byte lines of 120 B data + 8 B flag: the same inline flag, at 120/128 of
//           the bandwidth; correct only where 128-byte stores arrive whole and in order
//           (NCCL enables it on NVLink-attached Volta, Ampere and Hopper GPUs). Wire bytes
//           = ceil(D / 120) x 128.
//
// Sources: NVIDIA/nccl v2.19 src/include/device.h (ncclLLFifoLine, NCCL_LL128_LINESIZE,
// NCCL_LL128_DATAELEMS, NCCL_STEPS, NCCL_*_MAX_NTHREADS), src/init.cc (DEFAULT_*_BUFFSIZE),
// src/include/comm.h (NCCL_*_THREAD_THRESHOLD), src/enqueue.cc (channel tuning:
// `while (nBytes < nc*nt*threadThreshold) nc--`), src/graph/tuning.cc (LL's threshold is
// multiplied by the ranks for rings).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim::coll {

enum class Protocol : uint8_t { kSimple, kLL, kLL128 };
constexpr int kProtocols = 3;

// "simple", "ll", "ll128".
const char* protocol_name(Protocol p);
// The protocol named `name`; throws InternalError for another name.
Protocol protocol_from_name(const std::string& name);

// Bytes the protocol writes to the fabric for `data` payload bytes (its line format; the
// link's own framing comes on top).
uint64_t protocol_bytes(Protocol p, uint64_t data);
// Payload fraction of the protocol's format for large messages: 1, 1/2, 120/128.
double protocol_efficiency(Protocol p);

// The library's per-protocol constants (workload keys; defaults are NCCL 2.19's).
struct ProtocolConfig {
  // Data bytes of one step of a connection: a piece of a message, one buffer slot.
  // simple: chunk_bytes (NCCL: 4 MiB buffer / 8 steps = 512 KiB); ll: 512 KiB of lines / 8
  // steps / 2 = 32 KiB; ll128: 4,915,200 B / 8 steps x 120/128 = 576,000 B.
  uint64_t step_bytes[kProtocols] = {0, 0, 0};
  // Channels at size S: NCCL drops a channel while S < channels x threshold (one thread
  // block's threads x bytes per thread): simple 512 x 64 B, ll128 640 x 8 B, ll 512 x 8 B
  // x ranks (rings).
  uint64_t channel_threshold[kProtocols] = {0, 0, 0};
  uint32_t slots = 0;  // buffer slots per connection (NCCL_STEPS); 0: unbounded
  // The in-switch algorithms (NCCL's NVLS): their channels (NCCL_NVLS_NCHANNELS 16) and
  // largest piece (NCCL: 128 KiB, halved for small sizes, see nvls_piece_bytes).
  int nvls_channels = 0;
  uint64_t nvls_chunk_bytes = 0;
  // Tree/Simple: halve the piece for small sizes (NCCL 2.19 and older, CollParams::
  // tree_nccl_chunks); false: whole steps at every size (NCCL 2.20 and later).
  bool tree_chunk_halving = true;
};

// NCCL's NVLS chunk at `bytes` per rank with `concurrent` = channels x ranks reducing at
// once: nvls_chunk_bytes, cut to 64 KiB below 64 x concurrent x chunk, to 32 KiB below 8 x,
// to 16 KiB below 2 x (src/enqueue.cc, NVLS), never above nvls_chunk_bytes.
uint64_t nvls_piece_bytes(const ProtocolConfig& c, uint64_t bytes, uint64_t concurrent);

// Channels the library uses for a collective of `bytes` per rank on `ranks` ranks with at
// most `max_channels`: the largest c <= max_channels with bytes >= c x threshold, at least 1
// (threshold 0: max_channels).
int protocol_channels(const ProtocolConfig& c, Protocol p, uint64_t bytes, int ranks,
                      int max_channels);

}  // namespace fabricsim::coll
