// The algorithm registry: names, order and dispatch, nccl-tests busbw factors, hand-computed
// alpha-beta costs. Pure C++, no SystemC.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

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

TEST(AlgorithmTable, NamesAndDispatch) {
  EXPECT_EQ(algorithms_for("all_reduce"),
            (std::vector<std::string>{"ring", "tree", "halving_doubling", "direct", "hierarchical",
                                      "hierarchical_nvls", "nvls", "torus"}));
  EXPECT_EQ(algorithms_for("reduce_scatter"), (std::vector<std::string>{"ring", "nvls"}));
  EXPECT_EQ(algorithms_for("all_gather"), (std::vector<std::string>{"ring", "nvls"}));
  EXPECT_EQ(algorithms_for("broadcast"), (std::vector<std::string>{"ring"}));
  EXPECT_EQ(algorithms_for("reduce"), (std::vector<std::string>{"ring"}));
  EXPECT_EQ(algorithms_for("alltoall"), (std::vector<std::string>{"pairwise", "direct"}));
  EXPECT_EQ(algorithms_for("sendrecv"), (std::vector<std::string>{"direct"}));
  EXPECT_EQ(algorithm_table().size(), 17u);
  std::set<std::pair<std::string, std::string>> seen;
  for (const AlgoInfo& a : algorithm_table()) {
    EXPECT_TRUE(seen.insert({a.collective_name, a.name}).second);
    EXPECT_EQ(&algo_info(a.collective_name, a.name), &a);
    EXPECT_EQ(a.rooted,
              a.collective == Collective::kBroadcast || a.collective == Collective::kReduce);
    EXPECT_NE(std::string(a.cost), "");
  }
  EXPECT_TRUE(throws_internal([] { algorithms_for("allreduce"); },
                              "unknown collective 'allreduce' (known: all_reduce, "
                              "reduce_scatter, all_gather, broadcast, reduce, alltoall, "
                              "sendrecv)"));
  EXPECT_TRUE(throws_internal(
      [] {
        make_schedule("all_reduce", "nvlsx", CollParams{2, 4, 4, 1, 8, 0});
      },
      "unknown algorithm 'nvlsx' for collective 'all_reduce' (known: "
      "ring, tree, halving_doubling, direct, hierarchical, hierarchical_nvls, nvls, torus)"));
  EXPECT_TRUE(throws_internal(
      [] {
        make_schedule("gather", "ring", CollParams{2, 4, 4, 1, 8, 0});
      },
      "unknown collective 'gather'"));
}

TEST(AlgorithmTable, BusBwFactors) {
  for (int n : {1, 2, 3, 8, 33}) {
    const double dn = n;
    EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllReduce, n), 2 * (dn - 1) / dn);
    EXPECT_DOUBLE_EQ(busbw_factor(Collective::kReduceScatter, n), (dn - 1) / dn);
    EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllGather, n), (dn - 1) / dn);
    EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllToAll, n), (dn - 1) / dn);
    EXPECT_DOUBLE_EQ(busbw_factor(Collective::kBroadcast, n), 1.0);
    EXPECT_DOUBLE_EQ(busbw_factor(Collective::kReduce, n), 1.0);
    EXPECT_DOUBLE_EQ(busbw_factor(Collective::kSendRecv, n), 1.0);
  }
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(busbw_factor(algo_info("alltoall", "pairwise"), 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor(algo_info("all_reduce", "tree"), 4), 1.5);
  EXPECT_TRUE(throws_internal([] { busbw_factor(Collective::kAllReduce, 0); }, "n must be >= 1"));
}

TEST(AlgorithmTable, AlphaBetaHandComputed) {
  // alpha = 2 us, beta = 1 ns/byte (1 GB/s), S = 1 MB.
  const double al = 2e-6, be = 1e-9, S = 1e6;
  auto t = [&](const char* c, const char* a, int n) {
    return alpha_beta_time_s(algo_info(c, a), n, S, al, be);
  };
  // n = 8: ring 14 alpha + 1.75 S beta = 28 us + 1750 us.
  EXPECT_NEAR(t("all_reduce", "ring", 8), 1778e-6, 1e-12);
  // tree on one node (NCCL: a chain of the n ranks), n = 8: 2 x 7 alpha + 2 S beta =
  // 28 us + 2000 us.
  EXPECT_NEAR(t("all_reduce", "tree", 8), 2028e-6, 1e-12);
  // n = 5: 2 x 4 alpha.
  EXPECT_NEAR(t("all_reduce", "tree", 5), 2016e-6, 1e-12);
  // 4 nodes of 8 (L = 8, N = 4): chain 7 + tree depth 2 = 9 each way: 18 alpha.
  EXPECT_NEAR(alpha_beta_time_s(algo_info("all_reduce", "tree"), 32, S, al, be, 8), 2036e-6, 1e-12);
  // halving-doubling, n = 8: 6 alpha + 1.75 S beta.
  EXPECT_NEAR(t("all_reduce", "halving_doubling", 8), 1762e-6, 1e-12);
  // n = 6 (p = 4): (2*2 + 2) alpha + (1.5 + 2) S beta = 12 us + 3500 us.
  EXPECT_NEAR(t("all_reduce", "halving_doubling", 6), 3512e-6, 1e-12);
  // direct, n = 4: 2 alpha + 1.5 S beta.
  EXPECT_NEAR(t("all_reduce", "direct", 4), 1504e-6, 1e-12);
  // reduce-scatter / all-gather ring, n = 4: 3 alpha + 0.75 S beta.
  EXPECT_NEAR(t("reduce_scatter", "ring", 4), 756e-6, 1e-12);
  EXPECT_NEAR(t("all_gather", "ring", 4), 756e-6, 1e-12);
  // broadcast / reduce chain, n = 4: 3 alpha + S beta.
  EXPECT_NEAR(t("broadcast", "ring", 4), 1006e-6, 1e-12);
  EXPECT_NEAR(t("reduce", "ring", 4), 1006e-6, 1e-12);
  // alltoall, n = 4: pairwise 3 alpha + 0.75 S beta, direct alpha + 0.75 S beta.
  EXPECT_NEAR(t("alltoall", "pairwise", 4), 756e-6, 1e-12);
  EXPECT_NEAR(t("alltoall", "direct", 4), 752e-6, 1e-12);
  // sendrecv: alpha + S beta.
  EXPECT_NEAR(t("sendrecv", "direct", 2), 1002e-6, 1e-12);
  // n = 2: ring = halving-doubling = direct = 2 alpha + S beta.
  EXPECT_NEAR(t("all_reduce", "ring", 2), 1004e-6, 1e-12);
  EXPECT_NEAR(t("all_reduce", "halving_doubling", 2), 1004e-6, 1e-12);
  EXPECT_NEAR(t("all_reduce", "direct", 2), 1004e-6, 1e-12);
  // Latency-bound (S = 0), n = 64: ring 126 alpha, tree (one chain) 126 alpha,
  // halving-doubling 12.
  const AlgoInfo& ring = algo_info("all_reduce", "ring");
  EXPECT_NEAR(alpha_beta_time_s(ring, 64, 0, al, be), 126 * al, 1e-15);
  EXPECT_NEAR(alpha_beta_time_s(algo_info("all_reduce", "tree"), 64, 0, al, be), 126 * al, 1e-15);
  EXPECT_NEAR(alpha_beta_time_s(algo_info("all_reduce", "halving_doubling"), 64, 0, al, be),
              12 * al, 1e-15);
  // Every formula is 0 on one rank.
  for (const AlgoInfo& a : algorithm_table())
    EXPECT_EQ(alpha_beta_time_s(a, 1, S, al, be), 0.0) << a.collective_name << "/" << a.name;
  EXPECT_TRUE(throws_internal([&] { alpha_beta_time_s(ring, 0, S, al, be); }, "n must be >= 1"));
  EXPECT_TRUE(throws_internal([&] { alpha_beta_time_s(ring, 4, -1, al, be); }, ">= 0"));
}

}  // namespace
}  // namespace fabricsim::coll
