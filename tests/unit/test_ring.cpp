// Ring all-reduce schedule: structure, functional correctness in any valid execution
// order, traffic formulas and closed-form timing (broken schedules: test_ring_broken.cpp).
// Pure C++, no SystemC.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "models/collectives/functional.h"
#include "models/collectives/program.h"
#include "models/collectives/ring_allreduce.h"
#include "models/core/errors.h"
#include "tests/unit/coll_test_util.h"

namespace fabricsim::coll {
namespace {

using namespace testutil;

std::size_t mod(int x, int n) { return static_cast<std::size_t>(((x % n) + n) % n); }

// Fields of a ring tag ((channel * 2n + step) << 32) | chunk.
struct TagFields {
  uint64_t channel, step, chunk;
};
TagFields decode(uint64_t tag, int n) {
  const uint64_t hi = tag >> 32;
  const uint64_t slots = 2ull * static_cast<uint64_t>(n);
  return {hi / slots, hi % slots, tag & 0xffffffffull};
}

// Block sizes blocks[c][b] and channel offsets, computed independently of ring_allreduce.cpp's
// internals from the documented layout.
struct Layout {
  std::vector<uint64_t> ch_offset, ch_count;
  std::vector<std::vector<uint64_t>> blocks;
};
Layout layout_of(const RingParams& p) {
  Layout l;
  l.ch_count = split_even(p.count, p.channels);
  uint64_t off = 0;
  for (uint64_t cc : l.ch_count) {
    l.ch_offset.push_back(off);
    off += cc;
    l.blocks.push_back(split_even(cc, p.ranks));
  }
  return l;
}

// ---------------------------------------------------------------------------------------
// Helpers of the generator.

TEST(RingHelpers, SplitEven) {
  EXPECT_EQ(split_even(10, 3), (std::vector<uint64_t>{4, 3, 3}));
  EXPECT_EQ(split_even(11, 3), (std::vector<uint64_t>{4, 4, 3}));
  EXPECT_EQ(split_even(9, 3), (std::vector<uint64_t>{3, 3, 3}));
  EXPECT_EQ(split_even(2, 5), (std::vector<uint64_t>{1, 1, 0, 0, 0}));
  EXPECT_EQ(split_even(0, 4), (std::vector<uint64_t>{0, 0, 0, 0}));
  EXPECT_EQ(split_even(7, 1), (std::vector<uint64_t>{7}));
  const uint64_t big = std::numeric_limits<uint64_t>::max();
  const auto parts = split_even(big, 7);
  uint64_t sum = 0;
  for (uint64_t v : parts) sum += v;
  EXPECT_EQ(sum, big);
  EXPECT_TRUE(throws_internal([] { split_even(5, 0); }, "parts must be >= 1"));
}

TEST(RingHelpers, ChunkElems) {
  RingParams p;
  p.elem_bytes = 4;
  p.chunk_bytes = 1024;
  EXPECT_EQ(ring_chunk_elems(p), 256u);
  p.chunk_bytes = 1023;  // rounds down to whole elements
  EXPECT_EQ(ring_chunk_elems(p), 255u);
  p.chunk_bytes = 3;  // smaller than one element: at least one
  EXPECT_EQ(ring_chunk_elems(p), 1u);
  p.chunk_bytes = 0;
  EXPECT_TRUE(throws_internal([&] { ring_chunk_elems(p); }, "chunk_bytes"));
  p.chunk_bytes = 64;
  p.elem_bytes = 0;
  EXPECT_TRUE(throws_internal([&] { ring_chunk_elems(p); }, "elem_bytes"));
}

TEST(RingHelpers, BadParams) {
  RingParams p{4, 100, 4, 1, 64};
  RingParams q = p;
  q.ranks = 0;
  EXPECT_TRUE(throws_internal([&] { ring_allreduce(q); }, "ranks must be >= 1"));
  q = p;
  q.channels = 0;
  EXPECT_TRUE(throws_internal([&] { ring_allreduce(q); }, "channels must be >= 1"));
  q = p;
  q.chunk_bytes = 0;
  EXPECT_TRUE(throws_internal([&] { ring_allreduce(q); }, "chunk_bytes"));
}

TEST(RingSchedule, SingleRankHasNoOps) {
  const Schedule s = ring_allreduce(RingParams{1, 17, 4, 2, 8});
  EXPECT_EQ(s.algorithm, "ring");
  EXPECT_EQ(s.ranks, 1);
  EXPECT_EQ(s.count, 17u);
  ASSERT_EQ(s.programs.size(), 1u);
  EXPECT_TRUE(s.programs[0].ops.empty());
  const Buffers in = make_inputs(1, 17);
  const FunctionalResult res = run_functional(s, in);
  EXPECT_TRUE(same_buffer(res.buffers[0], in[0]));
  EXPECT_EQ(res.messages, 0u);
}

// ---------------------------------------------------------------------------------------
// The sweep: every configuration computes the exact sum with the documented traffic.

void check_config(const RingParams& p) {
  const int n = p.ranks;
  const Schedule sch = ring_allreduce(p);
  ASSERT_EQ(sch.programs.size(), static_cast<std::size_t>(n));
  EXPECT_EQ(sch.count, p.count);
  ASSERT_NO_THROW(validate(sch));

  const Buffers in = make_inputs(n, p.count);
  const std::vector<double> want = elementwise_sum(in, p.count);
  const FunctionalResult res = run_functional(sch, in);
  for (int r = 0; r < n; ++r)
    EXPECT_TRUE(same_buffer(res.buffers[static_cast<std::size_t>(r)], want)) << "rank " << r;

  // Traffic, from the documented layout.
  const uint64_t ce = ring_chunk_elems(p);
  const Layout l = layout_of(p);
  const uint64_t steps = n > 1 ? 2ull * static_cast<uint64_t>(n - 1) : 0;
  uint64_t want_messages = 0;
  for (const auto& ch : l.blocks)
    for (uint64_t b : ch) want_messages += steps * ceil_div(b, ce);
  EXPECT_EQ(res.messages, want_messages);
  EXPECT_EQ(res.elements_moved, steps * p.count);

  for (int r = 0; r < n; ++r) {
    const auto& ops = sch.programs[static_cast<std::size_t>(r)].ops;
    for (std::size_t c = 0; c < l.blocks.size(); ++c) {
      uint64_t sent = 0, sends = 0, recvs = 0, reduces = 0;
      for (const Op& op : ops) {
        if (op.offset < l.ch_offset[c] || op.offset >= l.ch_offset[c] + l.ch_count[c])
          continue;
        if (op.kind == OpKind::kSend) {
          sent += op.count;
          ++sends;
        } else if (op.kind == OpKind::kRecv) {
          ++recvs;
          if (op.mode == RecvMode::kReduceSum) ++reduces;
        }
      }
      // Step s: send block (r - s) mod n, receive block (r - 1 - s) mod n.
      uint64_t want_sent = 0, want_sends = 0, want_recvs = 0, want_reduces = 0;
      for (int s = 0; s < static_cast<int>(steps); ++s) {
        const uint64_t b = l.blocks[c][mod(r - s, n)];
        const uint64_t recv_pieces = ceil_div(l.blocks[c][mod(r - 1 - s, n)], ce);
        want_sent += b;
        want_sends += ceil_div(b, ce);
        want_recvs += recv_pieces;
        if (s <= n - 2) want_reduces += recv_pieces;
      }
      EXPECT_EQ(sent, want_sent) << "rank " << r << " channel " << c;
      EXPECT_EQ(sends, want_sends) << "rank " << r << " channel " << c;
      EXPECT_EQ(recvs, want_recvs) << "rank " << r << " channel " << c;
      EXPECT_EQ(reduces, want_reduces) << "rank " << r << " channel " << c;
      if (n > 1) {
        // 2(n-1)/n of the channel's data, within rounding: n-2 of the blocks beyond one
        // full round are each within one element of count/n.
        const double ideal = 2.0 * (n - 1) * static_cast<double>(l.ch_count[c]) / n;
        EXPECT_LE(std::abs(static_cast<double>(sent) - ideal), (n - 2) + 1e-9)
            << "rank " << r << " channel " << c;
      }
    }
  }

  // Any valid order gives bit-identical buffers and the same counters.
  for (uint64_t seed : {1ull, 0x9e3779b97f4a7c15ull, 12345ull}) {
    const FunctionalResult shuffled = run_functional(sch, in, seed);
    EXPECT_EQ(shuffled.messages, res.messages) << "seed " << seed;
    EXPECT_EQ(shuffled.elements_moved, res.elements_moved) << "seed " << seed;
    for (int r = 0; r < n; ++r)
      EXPECT_TRUE(same_buffer(shuffled.buffers[static_cast<std::size_t>(r)],
                              res.buffers[static_cast<std::size_t>(r)]))
          << "seed " << seed << " rank " << r;
  }
}

class RingSweep : public ::testing::TestWithParam<int> {};

TEST_P(RingSweep, ExactSumAndTraffic) {
  const int n = GetParam();
  const uint64_t un = static_cast<uint64_t>(n);
  // 0, 1, n-1, n, 1000+odd, and counts not divisible by channels*n for channels 1..3.
  const std::set<uint64_t> counts{0, 1, un - 1, un, 1001, 6 * un + 5, 12 * un + 1};
  for (uint64_t count : counts) {
    for (int channels = 1; channels <= 3; ++channels) {
      const uint32_t elem_bytes = channels == 2 ? 4 : 8;
      // Chunk sizes: 1 element (many chunks per block), 3 elements, 7 elements from a
      // byte size that is not a multiple of the element, and one chunk per block.
      for (uint64_t chunk_bytes : std::vector<uint64_t>{
               1, 3ull * elem_bytes, 7ull * elem_bytes + elem_bytes / 2, 1ull << 30}) {
        const RingParams p{n, count, elem_bytes, channels, chunk_bytes};
        SCOPED_TRACE("ranks=" + std::to_string(n) + " count=" + std::to_string(count) +
                     " channels=" + std::to_string(channels) +
                     " chunk_elems=" + std::to_string(ring_chunk_elems(p)));
        check_config(p);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks1To9, RingSweep, ::testing::Range(1, 10),
                         [](const ::testing::TestParamInfo<int>& param_info) {
                           return "n" + std::to_string(param_info.param);
                         });

// ---------------------------------------------------------------------------------------
// Structure: blocks per step, dependencies, tags, program order.

TEST(RingSchedule, DependencyStructureAndBlocks) {
  const RingParams p{5, 2 * 5 * 10 + 3, 4, 2, 3 * 4};  // blocks of 10 or 11, 3-elem chunks
  const int n = p.ranks;
  const Schedule sch = ring_allreduce(p);
  const Layout l = layout_of(p);
  // Block index of an element offset within channel c.
  auto block_of = [&](std::size_t c, uint64_t offset) {
    uint64_t start = l.ch_offset[c];
    for (std::size_t b = 0; b < l.blocks[c].size(); ++b) {
      if (offset < start + l.blocks[c][b]) return b;
      start += l.blocks[c][b];
    }
    return l.blocks[c].size();
  };
  for (int r = 0; r < n; ++r) {
    const auto& ops = sch.programs[static_cast<std::size_t>(r)].ops;
    ASSERT_FALSE(ops.empty());
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      const TagFields t = decode(op.tag, n);
      ASSERT_LT(t.channel, 2u);
      ASSERT_LT(t.step, 2u * static_cast<uint64_t>(n - 1));
      const int s = static_cast<int>(t.step);
      const std::size_t c = static_cast<std::size_t>(t.channel);
      const uint64_t ce = ring_chunk_elems(p);
      if (op.kind == OpKind::kSend) {
        EXPECT_EQ(op.peer, (r + 1) % n);
        EXPECT_EQ(block_of(c, op.offset), mod(r - s, n)) << "rank " << r << " op " << i;
        if (s == 0) {
          EXPECT_TRUE(op.deps.empty());
        } else {
          // Exactly the recv of the same piece at the previous step.
          ASSERT_EQ(op.deps.size(), 1u) << "rank " << r << " op " << i;
          const Op& dep = ops[op.deps[0]];
          EXPECT_EQ(dep.kind, OpKind::kRecv);
          EXPECT_EQ(dep.offset, op.offset);
          EXPECT_EQ(dep.count, op.count);
          const TagFields dt = decode(dep.tag, n);
          EXPECT_EQ(dt.step + 1, t.step);
          EXPECT_EQ(dt.channel, t.channel);
          EXPECT_EQ(dt.chunk, t.chunk);
        }
      } else {
        ASSERT_EQ(op.kind, OpKind::kRecv);
        EXPECT_EQ(op.peer, (r + n - 1) % n);
        EXPECT_TRUE(op.deps.empty());
        EXPECT_EQ(block_of(c, op.offset), mod(r - 1 - s, n)) << "rank " << r << " op " << i;
        EXPECT_EQ(op.mode, s <= n - 2 ? RecvMode::kReduceSum : RecvMode::kCopy);
      }
      // Piece j of its block: offset and size.
      const std::size_t b = block_of(c, op.offset);
      uint64_t block_start = l.ch_offset[c];
      for (std::size_t k = 0; k < b; ++k) block_start += l.blocks[c][k];
      EXPECT_EQ(op.offset, block_start + t.chunk * ce);
      EXPECT_EQ(op.count, std::min(ce, l.blocks[c][b] - t.chunk * ce));
    }
  }
}

TEST(RingSchedule, ProgramOrderIsStepByStep) {
  const RingParams p{4, 3 * 4 * 9 + 2, 4, 3, 2 * 4};
  const int n = p.ranks;
  const Schedule sch = ring_allreduce(p);
  for (int r = 0; r < n; ++r) {
    // Key (step, kind: send before recv, channel, chunk) must increase strictly.
    std::tuple<uint64_t, int, uint64_t, uint64_t> prev{0, -1, 0, 0};
    bool first = true;
    for (const Op& op : sch.programs[static_cast<std::size_t>(r)].ops) {
      const TagFields t = decode(op.tag, n);
      const std::tuple<uint64_t, int, uint64_t, uint64_t> key{
          t.step, op.kind == OpKind::kSend ? 0 : 1, t.channel, t.chunk};
      if (!first) {
        EXPECT_LT(prev, key) << "rank " << r;
      }
      prev = key;
      first = false;
    }
  }
}

TEST(RingSchedule, TagsUniquePerDirectedPair) {
  const RingParams p{2, 41, 8, 3, 8 * 2};  // n = 2: both directions between the same ranks
  const Schedule sch = ring_allreduce(p);
  std::set<std::tuple<int, int, uint64_t>> seen;
  for (int r = 0; r < 2; ++r)
    for (const Op& op : sch.programs[static_cast<std::size_t>(r)].ops)
      if (op.kind == OpKind::kSend) {
        EXPECT_TRUE(seen.insert({r, op.peer, op.tag}).second) << "rank " << r;
      }
  EXPECT_NO_THROW(validate(sch));
}

TEST(RingSchedule, ZeroSizeBlocksGenerateNoOps) {
  // 2 elements over 3 channels x 4 ranks: 2 non-empty blocks of 1 element in total.
  const RingParams p{4, 2, 4, 3, 4};
  const Schedule sch = ring_allreduce(p);
  for (const Program& prog : sch.programs)
    for (const Op& op : prog.ops) EXPECT_GT(op.count, 0u);
  const Buffers in = make_inputs(4, 2);
  const FunctionalResult res = run_functional(sch, in);
  EXPECT_EQ(res.messages, 2u * 2u * 3u);  // 2 blocks x 1 piece x 2(n-1) steps
  for (const auto& b : res.buffers) EXPECT_TRUE(same_buffer(b, elementwise_sum(in, 2)));
}

// ---------------------------------------------------------------------------------------
// Closed-form timing, checked against a direct evaluation of the stated model on the
// generated schedule.

// Evaluates the timing model documented at ring_allreduce_time_ps on any schedule whose
// ranks send FIFO per peer in program order: a send starts when its deps are done and the
// previous send to the same peer has left the link.
uint64_t model_time_ps(const Schedule& sch, uint32_t elem_bytes,
                       const std::function<uint64_t(uint64_t)>& hop, uint64_t prop,
                       const std::function<uint64_t(uint64_t)>& reduce) {
  const std::size_t n = sch.programs.size();
  std::vector<std::vector<int64_t>> done(n);
  for (std::size_t r = 0; r < n; ++r) done[r].assign(sch.programs[r].ops.size(), -1);
  std::map<std::pair<std::size_t, int>, uint64_t> link_free;    // (rank, peer)
  std::map<std::tuple<int, int, uint64_t>, uint64_t> arrival;  // (sender, receiver, tag)
  uint64_t finish = 0;
  bool progress = true;
  while (progress) {
    progress = false;
    for (std::size_t r = 0; r < n; ++r) {
      const auto& ops = sch.programs[r].ops;
      std::set<int> blocked_peers;  // keeps sends FIFO per peer within a sweep
      for (std::size_t i = 0; i < ops.size(); ++i) {
        if (done[r][i] >= 0) continue;
        const Op& op = ops[i];
        int64_t ready = 0;
        bool deps_done = true;
        for (uint32_t d : op.deps) {
          if (done[r][d] < 0) deps_done = false;
          ready = std::max(ready, done[r][d]);
        }
        const uint64_t bytes = op.count * elem_bytes;
        if (op.kind == OpKind::kSend) {
          if (!deps_done || blocked_peers.count(op.peer)) {
            blocked_peers.insert(op.peer);
            continue;
          }
          uint64_t& free_at = link_free[{r, op.peer}];
          const uint64_t end = std::max<uint64_t>(static_cast<uint64_t>(ready), free_at) + hop(bytes);
          free_at = end;
          done[r][i] = static_cast<int64_t>(end);
          arrival[{static_cast<int>(r), op.peer, op.tag}] = end + prop;
        } else {
          const auto a = arrival.find({op.peer, static_cast<int>(r), op.tag});
          if (!deps_done || a == arrival.end()) continue;
          const uint64_t t = std::max<uint64_t>(a->second, static_cast<uint64_t>(ready)) +
                             (op.mode == RecvMode::kReduceSum ? reduce(bytes) : 0);
          done[r][i] = static_cast<int64_t>(t);
        }
        finish = std::max<uint64_t>(finish, static_cast<uint64_t>(done[r][i]));
        progress = true;
      }
    }
  }
  for (const auto& d : done)
    for (int64_t t : d) EXPECT_GE(t, 0) << "model evaluation left an op unscheduled";
  return finish;
}

TEST(RingTiming, ClosedFormMatchesModel) {
  const auto hop = [](uint64_t bytes) { return 40 + bytes * 10; };  // 100 Gb/s-ish + framing
  const auto reduce = [](uint64_t bytes) { return bytes * 2; };
  const auto no_reduce = [](uint64_t) { return uint64_t{0}; };
  struct Case {
    RingParams p;
    uint64_t prop;
  };
  const std::vector<Case> cases{
      {{2, 2 * 8, 4, 1, 4 * 2}, 100},        // n = 2, 4 pieces per step
      {{4, 4 * 12, 4, 1, 4 * 3}, 5},         // link-bound: K*w dominates
      {{4, 4 * 12, 4, 1, 4 * 3}, 100000},    // latency-bound: w + prop dominates
      {{5, 5 * 7, 8, 1, 1u << 20}, 300},     // one piece per block (block <= chunk)
      {{6, 2 * 6 * 4, 4, 2, 4 * 2}, 700},    // 2 channels x 2 pieces per step
      {{9, 3 * 9 * 6, 2, 3, 2 * 3}, 2000},   // 3 channels, mixed regime
      {{3, 3 * 100, 4, 1, 4 * 10}, 0},       // no propagation delay
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("ranks=" + std::to_string(c.p.ranks) + " count=" + std::to_string(c.p.count) +
                 " channels=" + std::to_string(c.p.channels) + " prop=" +
                 std::to_string(c.prop));
    const Schedule sch = ring_allreduce(c.p);
    EXPECT_EQ(ring_allreduce_time_ps(c.p, hop, c.prop, reduce),
              model_time_ps(sch, c.p.elem_bytes, hop, c.prop, reduce));
    EXPECT_EQ(ring_allreduce_time_ps(c.p, hop, c.prop, no_reduce),
              model_time_ps(sch, c.p.elem_bytes, hop, c.prop, no_reduce));
  }
  // Spot value: n = 4, K = 4 pieces of 12 bytes, w = 160, prop = 5, d = 24:
  // 640 + 3*max(640, 189) + 2*max(640, 165) + 5 = 3845.
  EXPECT_EQ(ring_allreduce_time_ps(RingParams{4, 4 * 12, 4, 1, 4 * 3}, hop, 5, reduce),
            3845u);
}

TEST(RingTiming, TrivialAndNonUniform) {
  const auto hop = [](uint64_t bytes) { return bytes; };
  EXPECT_EQ(ring_allreduce_time_ps(RingParams{1, 100, 4, 1, 64}, hop, 10, hop), 0u);
  EXPECT_EQ(ring_allreduce_time_ps(RingParams{4, 0, 4, 1, 64}, hop, 10, hop), 0u);
  EXPECT_TRUE(throws_internal(
      [&] { ring_allreduce_time_ps(RingParams{4, 10, 4, 1, 64}, hop, 10, hop); },
      "not a multiple of channels * ranks"));
  EXPECT_TRUE(throws_internal(
      [&] { ring_allreduce_time_ps(RingParams{4, 40, 4, 1, 4 * 3}, hop, 10, hop); },
      "not a multiple of the 3-element chunk"));
}

}  // namespace
}  // namespace fabricsim::coll
