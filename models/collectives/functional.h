// Functional executor: runs a Schedule on real numbers, without SystemC and without time,
// to prove that an algorithm computes the right result in every valid execution order.
//
// Semantics (the contract the SystemC engine implements with timing added):
//   * an op may execute once all its deps have completed;
//   * kSend copies elems [offset, offset+count) of the sender's buffer AS THEY ARE when
//     it executes into a message keyed by (sender, receiver, tag), and completes;
//     messages are buffered without limit;
//   * kRecv completes once its deps are met and the matching message exists; it copies
//     the message into [offset, offset+count) (kCopy) or adds it element-wise
//     (kReduceSum), then consumes the message;
//   * kCompute and kDelay complete immediately (they have no data effect);
//   * kNvlsReduce sets [offset, offset+count) of its rank to the sum over all ranks of
//     that range as it is when it executes, and completes;
//   * kNvlsStore sends [offset, offset+count) as one message to every rank, itself
//     included (keys (sender, r, tag)), and completes.
// The executor does not call validate(): it checks only what it needs for memory safety
// and matching (peers, ranges, dep indices, counts, duplicate in-flight tags), so that
// schedules that are structurally valid but wrong are caught by their behaviour.
#pragma once
#include <cstdint>
#include <vector>

#include "models/collectives/program.h"

namespace fabricsim::coll {

struct FunctionalResult {
  std::vector<std::vector<double>> buffers;  // final buffer of each rank
  uint64_t messages = 0;                     // sends executed
  uint64_t elements_moved = 0;               // sum of the sends' counts, in elements
};

// Runs `s` with inputs[r] as rank r's initial buffer (inputs.size() == s.ranks, each of
// s.count elements). shuffle_seed == 0 executes from a FIFO worklist seeded in program
// order (rank 0's ops first); any other value picks the next op uniformly at random among
// the executable ones with a xorshift64 generator seeded by it, so different seeds give
// different valid interleavings. Throws InternalError on deadlock (ops remain but none can
// run; the message names the stuck ops), on a message left unconsumed at the end, and on
// malformed ops.
FunctionalResult run_functional(const Schedule& s,
                                const std::vector<std::vector<double>>& inputs,
                                uint64_t shuffle_seed = 0);

}  // namespace fabricsim::coll
