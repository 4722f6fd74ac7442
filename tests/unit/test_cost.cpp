// The topology-aware alpha-beta cost of schedules (models/collectives/cost.h) on synthetic
// fabrics where the answer is known by hand. Pure C++.
#include <gtest/gtest.h>

#include <algorithm>

#include "models/collectives/cost.h"

namespace fabricsim::coll {
namespace {

// n ranks in domains of L (0: one domain); inside a domain alpha_in and group 0 at
// rate_in B/s, across alpha_out and group 1 at rate_out.
FabricCosts two_level(int n, int L, double alpha_in, double rate_in, double alpha_out,
                      double rate_out) {
  FabricCosts f;
  f.ranks = n;
  f.domain_size = L;
  const int dom = L == 0 ? n : L;
  f.path = [=](int s, int d) {
    return s / dom == d / dom ? PathCost{alpha_in, 0} : PathCost{alpha_out, 1};
  };
  f.group_Bps = [=](int, int g) { return g == 0 ? rate_in : rate_out; };
  return f;
}

TEST(ScheduleCost, FlatFabricGivesTheTextbookSteps) {
  const FabricCosts f = two_level(8, 0, 1.0, 1.0, 99.0, 1.0);
  // Ring: 2(n-1) dependent hops; every rank sends 2(n-1)/n of the data.
  AlgoCost c = schedule_cost("all_reduce", "ring", 1, 4, 0, f);
  EXPECT_DOUBLE_EQ(c.latency_s, 14.0);
  EXPECT_DOUBLE_EQ(c.s_per_byte, 1.75);
  // Tree: up and down depth 3; the inner ranks send 2S.
  c = schedule_cost("all_reduce", "tree", 1, 4, 0, f);
  EXPECT_DOUBLE_EQ(c.latency_s, 6.0);
  EXPECT_DOUBLE_EQ(c.s_per_byte, 2.0);
  c = schedule_cost("all_reduce", "halving_doubling", 1, 4, 0, f);
  EXPECT_DOUBLE_EQ(c.latency_s, 6.0);
  EXPECT_DOUBLE_EQ(c.s_per_byte, 1.75);
  c = schedule_cost("all_reduce", "direct", 1, 4, 0, f);
  EXPECT_DOUBLE_EQ(c.latency_s, 2.0);
  EXPECT_DOUBLE_EQ(c.s_per_byte, 1.75);
  c = schedule_cost("alltoall", "direct", 1, 4, 0, f);
  EXPECT_DOUBLE_EQ(c.latency_s, 1.0);
  EXPECT_DOUBLE_EQ(c.s_per_byte, 0.875);
}

TEST(ScheduleCost, TwoLevelHierarchicalAndRailRing) {
  // 2 domains x 4: inside alpha 1 at 4 B/s, across alpha 10 at 1 B/s.
  const FabricCosts f = two_level(8, 4, 1.0, 4.0, 10.0, 1.0);
  // Hierarchical: 2(L-1) = 6 inside hops and 2(N-1) = 2 across; inside 1.5 S at 4 B/s,
  // then across 2(N-1)/N x S/L = S/4 at 1 B/s (phases in sequence: the sum).
  AlgoCost c = schedule_cost("all_reduce", "hierarchical", 1, 4, 0, f);
  EXPECT_DOUBLE_EQ(c.latency_s, 6.0 + 20.0);
  EXPECT_DOUBLE_EQ(c.s_per_byte, 0.375 + 0.25);
  // Rail ring with 4 channels: every rank leaves its domain in exactly one channel (as
  // the domain's exit) and sends 1.75 S / 4 channels across, 3/4 of 1.75 S inside.
  c = schedule_cost("all_reduce", "ring", 4, 4, 0, f);
  EXPECT_DOUBLE_EQ(c.s_per_byte, std::max(1.75 * 0.75 / 4.0, 1.75 / 4.0));
  // The longest chain is 2(n-1) = 14 consecutive ring edges; each channel's ring has 2
  // crossing edges per lap of 8, so the worst 14-edge stretch holds 4: 10 x 1 + 4 x 10.
  EXPECT_DOUBLE_EQ(c.latency_s, 10.0 + 40.0);
}

TEST(ScheduleCost, SlicedHierarchicalIsAPipeline) {
  const FabricCosts f = two_level(8, 4, 1.0, 4.0, 10.0, 1.0);
  // 4 slices: the busiest group (inside, 0.375 s/B) plus a quarter of the other (0.25).
  const AlgoCost c = schedule_cost("all_reduce", "hierarchical", 1, 4, 0, f, 4);
  EXPECT_DOUBLE_EQ(c.s_per_byte, 0.375 + 0.25 / 4);
  // Longest chain: the slice window chains the four slices' 3-hop phase 1 (4 x 3), then
  // the last slice crosses (2 x 10) and gathers (3 x 1).
  EXPECT_DOUBLE_EQ(c.latency_s, 12.0 + 20.0 + 3.0);
}

TEST(ScheduleCost, OneRankCostsNothing) {
  const AlgoCost c = schedule_cost("all_reduce", "ring", 1, 4, 0, two_level(1, 0, 1, 1, 1, 1));
  EXPECT_EQ(c.latency_s, 0.0);
  EXPECT_EQ(c.time_s(1e6), 0.0);
}

}  // namespace
}  // namespace fabricsim::coll
