// NCCL-style ring all-reduce: schedule generator and closed-form timing for tests.
//
// Layout of one rank's buffer of `count` elements:
//   channels: split_even(count, channels) contiguous ranges, channel c first;
//   blocks:   each channel range split_even(channel_count, ranks) contiguous blocks;
//   pieces:   each block cut into pieces of ring_chunk_elems() elements (the last piece
//             of a block may be shorter; an empty block has no pieces and no ops).
//
// Steps s = 0 .. 2n-3 (n = ranks); rank r's successor is (r+1)%n, predecessor (r-1+n)%n.
// At every step, for every channel and piece, rank r
//   sends    block (r - s)     mod n to   its successor, and
//   receives block (r - 1 - s) mod n from its predecessor,
// with RecvMode::kReduceSum for reduce-scatter steps s <= n-2 and kCopy for the
// all-gather steps s >= n-1. After step n-2 rank r holds the full sum of block (r+1)%n,
// which it sends at step n-1; from then on each step forwards the block just received.
// (In all-gather-local numbering t = s-(n-1) the sent block is (r + 1 - t) mod n.)
//
// Dependencies, per rank, channel c and piece j:
//   send(s, c, j)  deps = { recv(s-1, c, j) }   for s >= 1   (same block: it is the one
//                                                             received at step s-1)
//   send(0, c, j)  deps = {}                                  (own input data)
//   recv(s, c, j)  deps = {}                                  (posted up front)
// Write-after-read safety without extra deps: the recv that overwrites a block on rank r
// at step s is causally after rank r's earlier send of that block, because that data went
// once round the ring (n hops of send->recv->send deps) before coming back.
//
// Program order per rank: for s = 0..2n-3 { all sends of step s (channel-major, then
// piece), then all recvs of step s (same order) }. Channels are interleaved step by step
// so that an engine that starts ops in program order per peer pipelines every channel.
//
// Tags: ((c * 2n + s) << 32) | j -- unique per directed (sender, receiver) pair.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "models/collectives/program.h"

namespace fabricsim::coll {

struct RingParams {
  int ranks = 0;             // n >= 1
  uint64_t count = 0;        // elements per rank buffer
  uint32_t elem_bytes = 0;   // bytes per element, >= 1
  int channels = 1;          // >= 1, independent rings over contiguous ranges of the buffer
  uint64_t chunk_bytes = 0;  // pipelining granularity in bytes, > 0 (rounded down to whole
                             // elements, at least 1 element)
  // 0: the program order above. G >= 1: NCCL's loop order instead (the protocol model's
  // thread blocks run it): per channel, chunk after chunk of G pieces through every step,
  // each recv(s-1) followed by the send(s) of the same piece; for a chunk: sends of step
  // 0, then recv(s-1, j), send(s, j) for s = 1..2n-3 and its pieces j, then recv(2n-3, j).
  int loop_slices = 0;
  int rank_limit = 0;        // > 0: programs of ranks [0, rank_limit) only (CollParams)
};

// Splits `total` into `parts` >= 1 contiguous counts as evenly as possible: the first
// total % parts entries are one larger. Throws InternalError if parts < 1.
std::vector<uint64_t> split_even(uint64_t total, int parts);

// Elements per pipelined piece: max(1, chunk_bytes / elem_bytes). Throws InternalError on
// elem_bytes == 0 or chunk_bytes == 0.
uint64_t ring_chunk_elems(const RingParams& p);

// The ring all-reduce schedule described above; Schedule::algorithm = "ring". n = 1 gives
// one empty program (the buffer already holds the sum). Throws InternalError when a
// parameter is out of range (callers validate user input first and report InputError).
//
// `orders` (optional): ring order per channel. orders[c] is a permutation of the ranks and
// channel c's ring runs orders[c][0] -> orders[c][1] -> ... -> orders[c][n-1] ->
// orders[c][0]. Empty: every channel uses 0 -> 1 -> ... -> n-1. Block b of a channel
// belongs to position b, and "rank r" in the step rules above reads "position i of the
// rank in orders[c]". Used for rings that cross nodes on their NICs (rail_ring_orders in
// algorithms.h).
Schedule ring_allreduce(const RingParams& p, const std::vector<std::vector<int>>& orders = {});

// Completion time in ps of ring_allreduce(p) on a ring of dedicated point-to-point links
// (rank r -> r+1 uses a link nobody else uses), under this model:
//   * each rank's link serializes its sends FIFO in program order; a send of b bytes
//     starts when its deps are complete and the previous send finished its wire time,
//     and occupies the link for hop_ps(b);
//   * the data arrives prop_ps after the wire time ends; a kReduceSum recv completes
//     reduce_ps(b) after arrival (reduces never contend), a kCopy recv on arrival;
//   * every piece has the same size b (requires count % (channels * ranks) == 0 and the
//     block size B = count / (channels * ranks) a multiple of the chunk or <= it).
// With w = hop_ps(b), d = reduce_ps(b), K = channels * ceil(B / chunk) pieces per step:
//   T = K*w + (n-1) * max(K*w, w + prop_ps + d) + (n-2) * max(K*w, w + prop_ps) + prop_ps
// (longest path through the step x piece grid: each step boundary is crossed either by
// the link finishing a whole step, K*w, or by one piece's hop+latency, w + prop + reduce;
// the n-1 reduce-scatter boundaries carry d, the n-2 all-gather ones do not; the final
// prop_ps is the last piece's arrival). Returns 0 for n == 1 or count == 0. Throws
// InternalError when the pieces are not uniform.
uint64_t ring_allreduce_time_ps(const RingParams& p,
                                const std::function<uint64_t(uint64_t bytes)>& hop_ps,
                                uint64_t prop_ps,
                                const std::function<uint64_t(uint64_t bytes)>& reduce_ps);

}  // namespace fabricsim::coll
