// Ring all-reduce schedule generator; the algorithm, dependency structure and program
// order are documented in ring_allreduce.h.
#include "models/collectives/ring_allreduce.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <string>

#include "models/core/errors.h"

namespace fabricsim::coll {

namespace {

[[noreturn]] void bad_param(const std::string& what) {
  throw InternalError("ring_allreduce: " + what);
}

void check_params(const RingParams& p, const std::vector<std::vector<int>>& orders = {}) {
  if (p.ranks < 1) bad_param("ranks must be >= 1 (got " + std::to_string(p.ranks) + ")");
  if (p.channels < 1)
    bad_param("channels must be >= 1 (got " + std::to_string(p.channels) + ")");
  // The tag keeps (channel * 2n + step) in its upper 32 bits.
  const uint64_t step_slots = 2ull * static_cast<uint64_t>(p.ranks);
  if (static_cast<uint64_t>(p.channels) * step_slots > (1ull << 32))
    bad_param("channels * 2 * ranks = " +
              std::to_string(static_cast<uint64_t>(p.channels) * step_slots) +
              " does not fit the 32-bit step field of the tag");
  (void)ring_chunk_elems(p);  // checks elem_bytes and chunk_bytes
  if (orders.empty()) return;
  if (orders.size() != static_cast<std::size_t>(p.channels))
    bad_param("orders has " + std::to_string(orders.size()) + " entries for " +
              std::to_string(p.channels) + " channels");
  for (const std::vector<int>& o : orders) {
    std::vector<char> seen(static_cast<std::size_t>(p.ranks), 0);
    bool ok = o.size() == static_cast<std::size_t>(p.ranks);
    for (int r : o) {
      if (!ok || r < 0 || r >= p.ranks || seen[static_cast<std::size_t>(r)]) {
        ok = false;
        break;
      }
      seen[static_cast<std::size_t>(r)] = 1;
    }
    if (!ok) bad_param("a ring order is not a permutation of the " + std::to_string(p.ranks) +
                       " ranks");
  }
}

uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// Block `b` (0..n-1) of one channel: element offset into the rank buffer and size.
struct Block {
  uint64_t offset = 0;
  uint64_t count = 0;
};

}  // namespace

std::vector<uint64_t> split_even(uint64_t total, int parts) {
  if (parts < 1)
    throw InternalError("split_even: parts must be >= 1 (got " + std::to_string(parts) + ")");
  const uint64_t n = static_cast<uint64_t>(parts);
  const uint64_t base = total / n;
  const uint64_t extra = total % n;  // the first `extra` parts get one more element
  std::vector<uint64_t> out(static_cast<std::size_t>(parts), base);
  for (uint64_t i = 0; i < extra; ++i) ++out[static_cast<std::size_t>(i)];
  return out;
}

uint64_t ring_chunk_elems(const RingParams& p) {
  if (p.elem_bytes == 0) bad_param("elem_bytes must be >= 1");
  if (p.chunk_bytes == 0) bad_param("chunk_bytes must be > 0");
  return std::max<uint64_t>(1, p.chunk_bytes / p.elem_bytes);
}

Schedule ring_allreduce(const RingParams& p, const std::vector<std::vector<int>>& orders) {
  check_params(p, orders);
  const int n = p.ranks;
  const uint64_t chunk = ring_chunk_elems(p);

  Schedule sched;
  sched.algorithm = "ring";
  sched.ranks = n;
  sched.count = p.count;
  sched.programs.resize(static_cast<std::size_t>(n));
  if (n == 1) return sched;  // a single rank's buffer already is the sum

  // blocks[c][b]: block b of channel c.
  const std::size_t nch = static_cast<std::size_t>(p.channels);
  std::vector<std::vector<Block>> blocks(nch);
  {
    const std::vector<uint64_t> ch_counts = split_even(p.count, p.channels);
    uint64_t ch_offset = 0;
    for (std::size_t c = 0; c < nch; ++c) {
      uint64_t off = ch_offset;
      for (uint64_t size : split_even(ch_counts[c], n)) {
        blocks[c].push_back(Block{off, size});
        off += size;
      }
      ch_offset += ch_counts[c];
    }
  }
  // Piece j < 2^32 keeps the chunk field of the tag unambiguous.
  for (const auto& ch : blocks)
    for (const Block& b : ch)
      if (ceil_div(b.count, chunk) > (1ull << 32))
        bad_param("a block of " + std::to_string(b.count) + " elements needs more than 2^32 " +
                  "chunks of " + std::to_string(chunk) + " elements; raise chunk_bytes");

  const int steps = 2 * (n - 1);
  const uint64_t step_slots = 2ull * static_cast<uint64_t>(n);
  auto mod_n = [n](int x) { return static_cast<std::size_t>(((x % n) + n) % n); };
  auto tag_of = [step_slots](std::size_t c, int s, uint64_t j) {
    return ((static_cast<uint64_t>(c) * step_slots + static_cast<uint64_t>(s)) << 32) | j;
  };

  // pos[c][r]: position of rank r in channel c's ring; at[c][i]: rank at position i.
  std::vector<std::vector<int>> pos(nch, std::vector<int>(static_cast<std::size_t>(n)));
  std::vector<std::vector<int>> at(nch, std::vector<int>(static_cast<std::size_t>(n)));
  for (std::size_t c = 0; c < nch; ++c)
    for (int i = 0; i < n; ++i) {
      const int r = orders.empty() ? i : orders[c][static_cast<std::size_t>(i)];
      at[c][static_cast<std::size_t>(i)] = r;
      pos[c][static_cast<std::size_t>(r)] = i;
    }
  const int built = p.rank_limit > 0 ? std::min(p.rank_limit, n) : n;
  for (int r = 0; r < built; ++r) {
    std::vector<Op>& ops = sched.programs[static_cast<std::size_t>(r)].ops;
    // prev_recv[c][j]: op index of recv(s-1, c, j), the dep of send(s, c, j).
    std::vector<std::vector<uint32_t>> prev_recv(nch);
    // Block sent at step s on channel c (block (r - s) mod n); recv(s) brings block
    // (r - 1 - s) mod n, which is the one sent at step s + 1.
    auto sent_block = [&](std::size_t c, int s) -> const Block& {
      return blocks[c][mod_n(pos[c][static_cast<std::size_t>(r)] - s)];
    };
    // Both loop orders below make the same ops: on each channel, step s sends the
    // pieces of the block sent at s and receives those of the block sent at s + 1.
    // Reserved once: a program of a large message has 10^4 ops or more, and growing it
    // by doubling copied them and touched up to twice their memory.
    std::size_t total = 0;
    for (std::size_t c = 0; c < nch; ++c)
      for (int s = 0; s < steps; ++s)
        total += ceil_div(sent_block(c, s).count, chunk) + ceil_div(sent_block(c, s + 1).count, chunk);
    ops.reserve(total);
    auto send = [&](std::size_t c, int s, uint64_t j) {
      const int i = pos[c][static_cast<std::size_t>(r)];
      const Block& blk = sent_block(c, s);
      Op op;
      op.kind = OpKind::kSend;
      op.stream = static_cast<int32_t>(c);
      op.peer = at[c][mod_n(i + 1)];
      op.tag = tag_of(c, s, j);
      op.offset = blk.offset + j * chunk;
      op.count = std::min(chunk, blk.count - j * chunk);
      if (s > 0) op.deps.push_back(prev_recv[c][static_cast<std::size_t>(j)]);
      ops.push_back(std::move(op));
    };
    // Recv of step s: from the predecessor, which sends it with its own tag for step s.
    auto recv = [&](std::size_t c, int s, uint64_t j) {
      const int i = pos[c][static_cast<std::size_t>(r)];
      const Block& blk = sent_block(c, s + 1);
      Op op;
      op.kind = OpKind::kRecv;
      op.stream = static_cast<int32_t>(c);
      op.peer = at[c][mod_n(i - 1)];
      op.tag = tag_of(c, s, j);
      op.offset = blk.offset + j * chunk;
      op.count = std::min(chunk, blk.count - j * chunk);
      op.mode = s <= n - 2 ? RecvMode::kReduceSum : RecvMode::kCopy;
      if (ops.size() >= std::numeric_limits<uint32_t>::max())
        bad_param("rank program exceeds 2^32-1 ops; raise chunk_bytes");
      auto& pr = prev_recv[c];
      if (pr.size() <= j) pr.resize(static_cast<std::size_t>(j) + 1);
      pr[static_cast<std::size_t>(j)] = static_cast<uint32_t>(ops.size());
      ops.push_back(std::move(op));
    };
    if (p.loop_slices > 0) {
      // NCCL's loop order: per channel, chunk after chunk (loop_slices pieces each) through
      // every step, each receive followed by the send it feeds (recvReduceSend).
      const uint64_t g = static_cast<uint64_t>(p.loop_slices);
      for (std::size_t c = 0; c < nch; ++c) {
        uint64_t most = 0;
        for (const Block& b : blocks[c]) most = std::max(most, ceil_div(b.count, chunk));
        for (uint64_t first = 0; first < most; first += g) {
          auto group = [&](int s) {  // pieces of this chunk in the block sent at step s
            const uint64_t k = ceil_div(sent_block(c, s).count, chunk);
            return std::pair<uint64_t, uint64_t>{first, std::min(first + g, k)};
          };
          for (auto [j, e] = group(0); j < e; ++j) send(c, 0, j);
          for (int s = 1; s < steps; ++s)
            for (auto [j, e] = group(s); j < e; ++j) {
              recv(c, s - 1, j);
              send(c, s, j);
            }
          for (auto [j, e] = group(steps); j < e; ++j) recv(c, steps - 1, j);
        }
      }
      FABRICSIM_ASSERT(ops.size() == total, "ring_allreduce: op count differs from the reserve");
      continue;
    }
    for (int s = 0; s < steps; ++s) {
      for (std::size_t c = 0; c < nch; ++c)
        for (uint64_t j = 0; j < ceil_div(sent_block(c, s).count, chunk); ++j) send(c, s, j);
      for (std::size_t c = 0; c < nch; ++c) {
        prev_recv[c].clear();
        for (uint64_t j = 0; j < ceil_div(sent_block(c, s + 1).count, chunk); ++j) recv(c, s, j);
      }
    }
    FABRICSIM_ASSERT(ops.size() == total, "ring_allreduce: op count differs from the reserve");
  }
  return sched;
}

uint64_t ring_allreduce_time_ps(const RingParams& p,
                                const std::function<uint64_t(uint64_t bytes)>& hop_ps,
                                uint64_t prop_ps,
                                const std::function<uint64_t(uint64_t bytes)>& reduce_ps) {
  check_params(p);
  const uint64_t n = static_cast<uint64_t>(p.ranks);
  if (n == 1 || p.count == 0) return 0;
  const uint64_t chunk = ring_chunk_elems(p);
  const uint64_t blocks = static_cast<uint64_t>(p.channels) * n;
  if (p.count % blocks != 0)
    throw InternalError("ring_allreduce_time_ps: count " + std::to_string(p.count) +
                        " is not a multiple of channels * ranks = " + std::to_string(blocks) +
                        "; the closed form needs uniform pieces");
  const uint64_t block = p.count / blocks;
  if (block > chunk && block % chunk != 0)
    throw InternalError("ring_allreduce_time_ps: block of " + std::to_string(block) +
                        " elements is not a multiple of the " + std::to_string(chunk) +
                        "-element chunk; the closed form needs uniform pieces");
  const uint64_t piece = std::min(block, chunk);
  const uint64_t bytes = piece * p.elem_bytes;
  const uint64_t k = static_cast<uint64_t>(p.channels) * (block / piece);  // pieces per step
  const uint64_t w = hop_ps(bytes);
  const uint64_t d = reduce_ps(bytes);
  const uint64_t step_link = k * w;
  return step_link + (n - 1) * std::max(step_link, w + prop_ps + d) +
         (n - 2) * std::max(step_link, w + prop_ps) + prop_ps;
}

}  // namespace fabricsim::coll
