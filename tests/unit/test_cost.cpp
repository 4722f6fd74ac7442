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
  // Tree: NCCL's tree on one node is a chain of the 8 ranks (7 hops up, 7 down); the inner
  // ranks send 2S.
  c = schedule_cost("all_reduce", "tree", 1, 4, 0, f);
  EXPECT_DOUBLE_EQ(c.latency_s, 14.0);
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

// In-switch (NVLS) terms on a hand-worked fabric. n ranks in domains of L (0: one domain);
// every rank's NVLS links are its group 0 at 4 B/s, a header-only packet costs 1/4 of a
// data packet (req_bytes = read_bytes = 0.25), a reduction takes 3 s and a store 1 s
// (latency), and each domain has two NVLS switches taking 3/4 and 1/4 of its ranks'
// traffic, with reduction engines of `engine` B/s and multicast engines of `mcast` B/s
// (0: no limit). Across domains: alpha 8, group 1 at 1 B/s. All values are dyadic, so the
// closed forms below are exact in doubles.
FabricCosts nvls_fabric(int n, int L, double engine, double mcast) {
  FabricCosts f = two_level(n, L, 1.0, 4.0, 8.0, 1.0);
  const int dom = L == 0 ? n : L;
  for (int r = 0; r < n; ++r) {
    NvlsPath p;
    p.group = 0;
    p.req_bytes = p.read_bytes = 0.25;
    p.reduce_alpha_s = 3.0;
    p.store_alpha_s = 1.0;
    const int d = r / dom;
    p.switches = {{2 * d, 0.75}, {2 * d + 1, 0.25}};
    f.nvls.push_back(p);
  }
  for (int d = 0; d < n / dom; ++d) f.nvls_switches.resize(2 * (d + 1), NvlsEngine{engine, mcast});
  return f;
}

TEST(ScheduleCost, NvlsAllReduceLinksEnginesAndLatencyAreTheClosedForm) {
  // Per rank and byte of S, n = 4: up (GPU -> switch) S/n requests x 1/4 + S answers +
  // S/n stores = 1 + 1.25/4 = 1.3125; down: S reads x 1/4 + S/n result + S replicas =
  // 1.5, at 4 B/s: 0.375 s/B, the link bound. Engines: n S of reduction input, 3/4 of it
  // on the busier switch: 3 S / engine; multicast: S stores, 3/4 S / mcast.
  // Latency: one reduction (3) then one store (1).
  AlgoCost c = schedule_cost("all_reduce", "nvls", 1, 4, 0, nvls_fabric(4, 0, 64.0, 0.0));
  EXPECT_EQ(c.s_per_byte, 0.375);  // engine 3/64 s/B: not the bound
  EXPECT_EQ(c.latency_s, 4.0);
  c = schedule_cost("all_reduce", "nvls", 1, 4, 0, nvls_fabric(4, 0, 4.0, 0.0));
  EXPECT_EQ(c.s_per_byte, 0.75);  // 3 S / 4 B/s: the reduction engine is the bound
  c = schedule_cost("all_reduce", "nvls", 1, 4, 0, nvls_fabric(4, 0, 64.0, 0.5));
  EXPECT_EQ(c.s_per_byte, 1.5);  // 3/4 S / 0.5 B/s: the multicast engine is the bound
  // Channels change neither the volumes nor the one-piece chain.
  c = schedule_cost("all_reduce", "nvls", 4, 4, 0, nvls_fabric(4, 0, 64.0, 0.0));
  EXPECT_EQ(c.s_per_byte, 0.375);
  EXPECT_EQ(c.latency_s, 4.0);
}

TEST(ScheduleCost, NvlsReduceScatterAndAllGatherAreTheClosedForm) {
  // reduce_scatter: up S/n x 1/4 + S answers = 1.0625 (at 4 B/s: 0.265625); down S x 1/4
  // reads + S/n result = 0.5; engine 3/4 of n S/n x n = 3 S at 64 B/s: 0.046875.
  AlgoCost c = schedule_cost("reduce_scatter", "nvls", 1, 4, 0, nvls_fabric(4, 0, 64.0, 0.0));
  EXPECT_EQ(c.s_per_byte, 0.265625);
  EXPECT_EQ(c.latency_s, 3.0);
  // all_gather: up S/n, down S replicas: 0.25 s/B; latency one store.
  c = schedule_cost("all_gather", "nvls", 1, 4, 0, nvls_fabric(4, 0, 64.0, 0.0));
  EXPECT_EQ(c.s_per_byte, 0.25);
  EXPECT_EQ(c.latency_s, 1.0);
}

TEST(ScheduleCost, HierarchicalNvlsIsItsDomainPhasesAndTheRingAcross) {
  // 2 domains x 2. NVLink (group 0, 4 B/s) per byte of S: up S/L x 1/4 + S answers + S/L
  // stores = 1.625, down S x 1/4 + S/L + S = 1.75: 0.4375 s/B; engines 3/4 x 2 S at 64 B/s
  // = 0.0234375. Across (group 1, 1 B/s): 2(N-1)/N x S/L = 0.5 S each way: 0.5 s/B.
  // The phases are a pipeline of N = 2 sub-blocks per slice (the reductions, the ring
  // across and the stores go sub-block by sub-block): one slice 0.5 + 0.4375 / 2, two
  // 0.5 + 0.4375 / 4. (hierarchical's ring phases hand a block over only at their end:
  // one slice is their sum, TwoLevelHierarchicalAndRailRing.)
  const FabricCosts f = nvls_fabric(4, 2, 64.0, 0.0);
  AlgoCost c = schedule_cost("all_reduce", "hierarchical_nvls", 1, 4, 0, f);
  EXPECT_EQ(c.s_per_byte, 0.5 + 0.4375 / 2);
  // Chain: the two sub-block reductions (3, both in the window of 2), the ring across
  // (2 x 8: the second sub-block is final after two steps), its store (1).
  EXPECT_EQ(c.latency_s, 3.0 + 16.0 + 1.0);
  c = schedule_cost("all_reduce", "hierarchical_nvls", 1, 4, 0, f, 2);
  EXPECT_EQ(c.s_per_byte, 0.5 + 0.4375 / 4);
}

TEST(ScheduleCost, InSwitchScheduleWithoutNvlsPathThrows) {
  EXPECT_THROW(schedule_cost("all_reduce", "nvls", 1, 4, 0, two_level(4, 0, 1, 1, 1, 1)),
               std::exception);
}

TEST(ScheduleCost, OneRankCostsNothing) {
  const AlgoCost c = schedule_cost("all_reduce", "ring", 1, 4, 0, two_level(1, 0, 1, 1, 1, 1));
  EXPECT_EQ(c.latency_s, 0.0);
  EXPECT_EQ(c.time_s(1e6), 0.0);
}

}  // namespace
}  // namespace fabricsim::coll
