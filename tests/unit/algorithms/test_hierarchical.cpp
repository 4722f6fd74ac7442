// Hierarchical all-reduce on every (domains x ranks per domain) split of 1..33 ranks, with
// and without slices; bad domain sizes; its alpha-beta cost. Pure C++, no SystemC.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>

#include "models/collectives/algorithms.h"
#include "models/collectives/functional.h"
#include "models/collectives/program.h"
#include "models/collectives/ring_allreduce.h"
#include "tests/unit/algorithms/oracles.h"
#include "tests/unit/coll_test_util.h"

namespace fabricsim::coll {
namespace {

using namespace algotest;
using namespace testutil;

class HierarchicalSplits : public ::testing::TestWithParam<int> {};

TEST_P(HierarchicalSplits, ExactResultsTrafficDepsOrder) {
  const int n = GetParam();
  const uint64_t un = static_cast<uint64_t>(n);
  const AlgoInfo& a = algo_info("all_reduce", "hierarchical");
  for (int L = 1; L <= n; ++L) {
    if (n % L != 0) continue;
    for (uint64_t count : std::set<uint64_t>{0, 1, un - 1, un, 7 * un + 3, 2049})
      for (int channels : {1, 2})
        for (int slices : {1, 3})
        for (bool several : {false, true}) {
          const uint32_t elem_bytes = 4;
          const uint64_t piece =
              ceil_div(std::max<uint64_t>(count, 1), 2 * un * static_cast<uint64_t>(channels));
          const uint64_t chunk_bytes = several ? piece * elem_bytes + 2 : uint64_t{1} << 40;
          const CollParams p{n, count, elem_bytes, channels, chunk_bytes, 0, slices};
          SCOPED_TRACE("ranks=" + std::to_string(n) + " domain=" + std::to_string(L) +
                       " count=" + std::to_string(count) + " channels=" +
                       std::to_string(channels) + " slices=" + std::to_string(slices) +
                       " chunk_elems=" + std::to_string(chunk_elems(p)));
          check_config(a, p, /*check_dep_rule=*/count < 2049, L);
          if (::testing::Test::HasFailure()) return;
        }
    // Volumes: inside a domain 2(L-1)/L of the data per rank, across 2(N-1)/N of a block.
    const int N = n / L;
    const uint64_t C = 120 * un;
    const Schedule s = make_schedule("all_reduce", "hierarchical", CollParams{n, C, 4, 1, 1ull << 40, 0}, L);
    for (int r = 0; r < n; ++r) {
      uint64_t inside = 0, across = 0;
      for (const Op& op : s.programs[at(r)].ops)
        if (op.kind == OpKind::kSend) (op.peer / L == r / L ? inside : across) += op.count;
      EXPECT_EQ(inside, 2 * static_cast<uint64_t>(L - 1) * (C / static_cast<uint64_t>(L)))
          << "rank " << r << " domain " << L;
      EXPECT_EQ(across, 2 * static_cast<uint64_t>(N - 1) * (C / un)) << "rank " << r << " domain " << L;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks1To33, HierarchicalSplits, ::testing::Range(1, 34),
                         [](const ::testing::TestParamInfo<int>& param_info) {
                           return "n" + std::to_string(param_info.param);
                         });

TEST(Hierarchical, BadDomainSize) {
  EXPECT_TRUE(throws_internal(
      [] { allreduce_hierarchical(CollParams{6, 12, 4, 1, 8, 0}, 4); },
      "domain_size 4 does not divide ranks 6"));
  EXPECT_TRUE(throws_internal([] { rail_ring_orders(6, 4, 1); }, "does not divide ranks 6"));
}

TEST(AlgorithmTable, HierarchicalAlphaBetaHandComputed) {
  const double al = 2e-6, be = 1e-9, S = 1e6;
  const AlgoInfo& h = algo_info("all_reduce", "hierarchical");
  // 16 = 2 x 8: (14 + 2) alpha + (1.75 + 2 * 0.5 / 8) S beta = 32 us + 1875 us.
  EXPECT_NEAR(alpha_beta_time_s(h, 16, S, al, be, 8), 1907e-6, 1e-12);
  // One domain: the ring's volume, 2(n-1) alpha.
  EXPECT_NEAR(alpha_beta_time_s(h, 8, S, al, be, 0), 1778e-6, 1e-12);
  // One rank per domain: a ring across the domains.
  EXPECT_NEAR(alpha_beta_time_s(h, 8, S, al, be, 1), 1778e-6, 1e-12);
  EXPECT_TRUE(throws_internal([&] { alpha_beta_time_s(h, 6, S, al, be, 4); }, "does not divide"));
}

}  // namespace
}  // namespace fabricsim::coll
