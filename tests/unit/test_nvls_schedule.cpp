// NVLS (in-switch reduction and multicast) schedules: exact results for 1..33 ranks with
// the functional executor in program order and in random valid orders, the wire volume
// per rank the algorithm's cost formula assumes, and the bounded reduction window.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/collectives/algorithms.h"
#include "models/collectives/functional.h"
#include "models/collectives/program.h"
#include "tests/unit/coll_test_util.h"

namespace fabricsim::coll {
namespace {

using testutil::Buffers;
using testutil::make_inputs;

std::vector<double> sums(const Buffers& in) {
  std::vector<double> s(in.empty() ? 0 : in[0].size(), 0.0);
  for (const auto& b : in)
    for (size_t i = 0; i < b.size(); ++i) s[i] += b[i];
  return s;
}

// The block of rank r in a block-major layout (algorithms.h "Blocks").
std::pair<uint64_t, uint64_t> block(uint64_t count, int n, int r) {
  const std::vector<uint64_t> sizes = split_even(count, n);
  uint64_t off = 0;
  for (int q = 0; q < r; ++q) off += sizes[size_t(q)];
  return {off, sizes[size_t(r)]};
}

class NvlsSweep : public ::testing::TestWithParam<int> {};

TEST_P(NvlsSweep, ExactResultsInAnyOrder) {
  const int n = GetParam();
  const uint64_t un = uint64_t(n);
  for (uint64_t count : {uint64_t{0}, uint64_t{1}, un, 7 * un + 3, uint64_t{2049}}) {
    for (int channels : {1, 3}) {
      for (uint64_t chunk_bytes : {uint64_t{1} << 40, uint64_t{12}}) {
        // 3-element pieces of the large count add run time, not structure.
        if (count == 2049 && chunk_bytes == 12) continue;
        const CollParams p{n, count, 4, channels, chunk_bytes, 0};
        SCOPED_TRACE("ranks=" + std::to_string(n) + " count=" + std::to_string(count) +
                     " channels=" + std::to_string(channels) +
                     " chunk_bytes=" + std::to_string(chunk_bytes));
        const Buffers in = make_inputs(n, count);
        const std::vector<double> want = sums(in);
        for (const char* coll : {"all_reduce", "reduce_scatter", "all_gather"}) {
          const Schedule s = make_schedule(coll, "nvls", p);
          ASSERT_NO_THROW(validate(s)) << coll;
          for (uint64_t seed : {uint64_t{0}, uint64_t{7}, uint64_t{12345}}) {
            const FunctionalResult res = run_functional(s, in, seed);
            for (int r = 0; r < n; ++r) {
              const auto& out = res.buffers[size_t(r)];
              if (std::string(coll) == "all_reduce") {
                ASSERT_EQ(out, want) << coll << " rank " << r << " seed " << seed;
              } else if (std::string(coll) == "reduce_scatter") {
                const auto [off, len] = block(count, n, r);
                for (uint64_t i = off; i < off + len; ++i)
                  ASSERT_EQ(out[i], want[i]) << coll << " rank " << r << " elem " << i;
              } else {  // all_gather: block q of every rank = block q of rank q's input
                for (int q = 0; q < n; ++q) {
                  const auto [off, len] = block(count, n, q);
                  for (uint64_t i = off; i < off + len; ++i)
                    ASSERT_EQ(out[i], in[size_t(q)][i]) << coll << " rank " << r << " elem " << i;
                }
              }
            }
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks1To33, NvlsSweep, ::testing::Range(1, 34),
                         [](const ::testing::TestParamInfo<int>& i) {
                           return "n" + std::to_string(i.param);
                         });

// Per rank: the all-reduce asks for the reduction of its 1/n and multicasts it; it
// receives every block once. The reductions it asks for cover exactly its own block.
TEST(NvlsSchedule, VolumesPerRank) {
  const int n = 8;
  const uint64_t count = 8 * 1000;
  const CollParams p{n, count, 4, 2, 400, 0};  // 100-element pieces
  const Schedule s = allreduce_nvls(p);
  for (int r = 0; r < n; ++r) {
    uint64_t reduced = 0, stored = 0, received = 0, reduces = 0;
    for (const Op& op : s.programs[size_t(r)].ops) {
      if (op.kind == OpKind::kNvlsReduce) {
        reduced += op.count;
        ++reduces;
      }
      if (op.kind == OpKind::kNvlsStore) stored += op.count;
      if (op.kind == OpKind::kRecv) received += op.count;
    }
    EXPECT_EQ(reduced, count / n) << r;
    EXPECT_EQ(stored, count / n) << r;
    EXPECT_EQ(received, count) << r;      // every block, its own included
    EXPECT_EQ(reduces, 2u * 5u) << r;     // 2 channels x 500 elements / 100 per piece
  }
}

// A reduction waits for the one kNvlsWindow pieces earlier in its channel; a store for
// its own reduction; receives wait for nothing.
TEST(NvlsSchedule, ReductionWindowAndStoreDeps) {
  const CollParams p{4, 4 * 250, 4, 1, 40, 0};  // 10-element pieces, 25 per block
  const Schedule s = allreduce_nvls(p);
  const auto& ops = s.programs[1].ops;
  std::vector<uint32_t> reduce_idx;
  for (uint32_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    if (op.kind == OpKind::kRecv) {
      EXPECT_TRUE(op.deps.empty());
    }
    if (op.kind == OpKind::kNvlsStore) {
      ASSERT_EQ(op.deps.size(), 1u);
      EXPECT_EQ(ops[op.deps[0]].kind, OpKind::kNvlsReduce);
      EXPECT_EQ(ops[op.deps[0]].offset, op.offset);
    }
    if (op.kind == OpKind::kNvlsReduce) {
      const size_t j = reduce_idx.size();
      if (j < kNvlsWindow) {
        EXPECT_TRUE(op.deps.empty());
      } else {
        ASSERT_EQ(op.deps.size(), 1u);
        EXPECT_EQ(op.deps[0], reduce_idx[j - kNvlsWindow]);
      }
      reduce_idx.push_back(i);
    }
  }
  EXPECT_EQ(reduce_idx.size(), 25u);
}

// validate() accepts a rank receiving its own multicast store and nothing else from
// itself.
TEST(NvlsSchedule, SelfReceiveOnlyFromMulticast) {
  Schedule s;
  s.algorithm = "hand";
  s.ranks = 2;
  s.count = 4;
  s.programs.resize(2);
  Op st;
  st.kind = OpKind::kNvlsStore;
  st.tag = 9;
  st.count = 4;
  Op rv;
  rv.kind = OpKind::kRecv;
  rv.peer = 0;
  rv.tag = 9;
  rv.count = 4;
  s.programs[0].ops = {st, rv};
  s.programs[1].ops = {rv};
  EXPECT_NO_THROW(validate(s));
  s.programs[0].ops = {rv};  // rank 0 receives from itself, but nobody multicasts
  s.programs[1].ops = {};
  EXPECT_TRUE(testutil::throws_internal([&] { validate(s); }, "no matching send"));
}

// ---------------------------------------------------------------------------------------
// hierarchical_nvls: NVLS inside each domain of L ranks, rail rings across the N domains.

class HierarchicalNvlsSplits : public ::testing::TestWithParam<int> {};

TEST_P(HierarchicalNvlsSplits, ExactResultsVolumesAndDeps) {
  const int n = GetParam();
  const uint64_t un = uint64_t(n);
  for (int L = 1; L <= n; ++L) {
    if (n % L != 0) continue;
    const int N = n / L;
    for (uint64_t count : {uint64_t{0}, uint64_t{1}, un, 7 * un + 3, uint64_t{2049}})
      for (int channels : {1, 2})
        for (int slices : {1, 3})
          for (uint64_t chunk_bytes : {uint64_t{1} << 40, uint64_t{12}}) {
            if (count == 2049 && chunk_bytes == 12) continue;  // run time, no new structure
            const CollParams p{n, count, 4, channels, chunk_bytes, 0, slices};
            SCOPED_TRACE("ranks=" + std::to_string(n) + " domain=" + std::to_string(L) +
                         " count=" + std::to_string(count) + " channels=" +
                         std::to_string(channels) + " slices=" + std::to_string(slices) +
                         " chunk_bytes=" + std::to_string(chunk_bytes));
            const Schedule s = make_schedule("all_reduce", "hierarchical_nvls", p, L);
            ASSERT_EQ(s.nvls_group, L);
            ASSERT_NO_THROW(validate(s));
            const Buffers in = make_inputs(n, count);
            const std::vector<double> want = sums(in);
            for (uint64_t seed : {uint64_t{0}, uint64_t{7}, uint64_t{12345}}) {
              const FunctionalResult res = run_functional(s, in, seed);
              for (int r = 0; r < n; ++r)
                ASSERT_EQ(res.buffers[size_t(r)], want) << "rank " << r << " seed " << seed;
            }
            if (n == 1) {  // the buffer already holds the result: no ops
              ASSERT_TRUE(s.programs[0].ops.empty());
              continue;
            }
            for (int r = 0; r < n; ++r) {
              const auto& ops = s.programs[size_t(r)].ops;
              // Elements this rank reduces and stores, each exactly once; point-to-point
              // traffic only to the next domain on its rail.
              std::map<uint64_t, int> reduced, stored;
              uint64_t sent = 0, received_copies = 0;
              for (size_t i = 0; i < ops.size(); ++i) {
                const Op& op = ops[i];
                for (uint64_t e = op.offset; e < op.offset + op.count; ++e) {
                  if (op.kind == OpKind::kNvlsReduce) ++reduced[e];
                  if (op.kind == OpKind::kNvlsStore) ++stored[e];
                }
                if (op.kind == OpKind::kSend) {
                  ASSERT_EQ(op.peer, ((r / L + 1) % N) * L + r % L) << describe_op(r, i, op);
                  sent += op.count;
                  // Every element it sends was reduced in the switches first.
                  bool after_reduce = false;
                  for (uint32_t d : op.deps)
                    after_reduce = after_reduce || ops[d].kind == OpKind::kNvlsReduce ||
                                   ops[d].kind == OpKind::kRecv;
                  ASSERT_TRUE(after_reduce) << describe_op(r, i, op);
                }
                if (op.kind == OpKind::kRecv && op.peer / L == r / L) {
                  ASSERT_EQ(op.mode, RecvMode::kCopy);
                  ASSERT_TRUE(op.deps.empty());
                  received_copies += op.count;
                }
              }
              // Own block l: the sum of its slices' and channels' block l.
              uint64_t own = 0;
              for (uint64_t ch : split_even(count, channels))
                for (uint64_t sl : split_even(ch, slices)) own += split_even(sl, L)[size_t(r % L)];
              EXPECT_EQ(reduced.size(), own);
              EXPECT_EQ(stored.size(), own);
              for (const auto& [e, times] : reduced) ASSERT_EQ(times, 1) << e;
              for (const auto& [e, times] : stored) ASSERT_EQ(times, 1) << e;
              EXPECT_EQ(reduced, stored);
              EXPECT_EQ(received_copies, count);  // every block of the domain, own included
              // Across: 2(N-1) ring steps over N sub-blocks of own block = 2(N-1)/N of it
              // when it divides evenly.
              if (count == 2049 && own % uint64_t(N * channels * slices) == 0) {
                EXPECT_EQ(sent, 2 * uint64_t(N - 1) * own / uint64_t(N));
              }
              if (N == 1) {
                EXPECT_EQ(sent, 0u);
              }
            }
          }
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks1To33, HierarchicalNvlsSplits, ::testing::Range(1, 34),
                         [](const ::testing::TestParamInfo<int>& i) {
                           return "n" + std::to_string(i.param);
                         });

// The volumes on 2 domains of 4 ranks with even sizes, and the formula.
TEST(HierarchicalNvls, VolumesAndAlphaBeta) {
  const int n = 8, L = 4;
  const uint64_t count = 8 * 1000;
  const Schedule s = allreduce_hierarchical_nvls(CollParams{n, count, 4, 1, 400, 0, 2}, L);
  for (int r = 0; r < n; ++r) {
    uint64_t sent = 0, reduced = 0;
    for (const Op& op : s.programs[size_t(r)].ops) {
      if (op.kind == OpKind::kSend) sent += op.count;
      if (op.kind == OpKind::kNvlsReduce) reduced += op.count;
    }
    EXPECT_EQ(reduced, count / L) << r;  // its block of each slice
    EXPECT_EQ(sent, count / L) << r;     // 2(N-1)/N of it with N = 2
  }
  const AlgoInfo& a = algo_info("all_reduce", "hierarchical_nvls");
  // 2N alpha + ((L+1)/L + 2(N-1)/(N L)) S beta with L = 4, N = 2.
  EXPECT_DOUBLE_EQ(alpha_beta_time_s(a, 8, 8e9, 1e-6, 1e-11, 4),
                   4e-6 + (5.0 / 4.0 + 2.0 / 8.0) * 8e9 * 1e-11);
  EXPECT_TRUE(testutil::throws_internal(
      [] { allreduce_hierarchical_nvls(CollParams{6, 12, 4, 1, 8, 0}, 4); },
      "domain_size 4 does not divide ranks 6"));
  EXPECT_TRUE(testutil::throws_internal(
      [] { allreduce_hierarchical_nvls(CollParams{4, 12, 4, 1, 8, 0, 0}, 2); },
      "slices must be >= 1"));
}

// A group size that does not divide the ranks is rejected by validate() and by the
// functional executor.
TEST(HierarchicalNvls, BadGroup) {
  Schedule s = allreduce_hierarchical_nvls(CollParams{4, 8, 4, 1, 8, 0}, 2);
  s.nvls_group = 3;
  EXPECT_TRUE(testutil::throws_internal([&] { validate(s); }, "does not divide ranks 4"));
  EXPECT_TRUE(testutil::throws_internal([&] { run_functional(s, make_inputs(4, 8)); },
                                        "does not divide ranks 4"));
}

// Cost formulas: the in-switch all-reduce moves (n+1)/n S per rank and direction.
TEST(NvlsSchedule, AlphaBeta) {
  const AlgoInfo& a = algo_info("all_reduce", "nvls");
  EXPECT_DOUBLE_EQ(alpha_beta_time_s(a, 8, 8e9, 1e-6, 1e-11), 2e-6 + 9.0 / 8.0 * 8e9 * 1e-11);
  EXPECT_DOUBLE_EQ(alpha_beta_time_s(algo_info("reduce_scatter", "nvls"), 8, 1e9, 1e-6, 1e-11),
                   1e-6 + 1e9 * 1e-11);
  EXPECT_DOUBLE_EQ(alpha_beta_time_s(a, 1, 8e9, 1e-6, 1e-11), 0.0);
}

}  // namespace
}  // namespace fabricsim::coll
