// Training workload generators and job composition (models/collectives/job.h, training.h),
// pure C++: bucket assignment, composed jobs computing the right sums on subgroups
// (functional executor), all-to-all with per-pair sizes, MoE routing statistics, FSDP
// memory accounting and prefetch dependencies, TP/DP group placement.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "models/collectives/algorithms.h"
#include "models/collectives/functional.h"
#include "models/collectives/job.h"
#include "models/collectives/training.h"
#include "coll_test_util.h"

using namespace fabricsim;
using namespace fabricsim::coll;

namespace {

Schedule allreduce(int n, uint64_t count) {
  CollParams cp;
  cp.ranks = n;
  cp.count = count;
  cp.elem_bytes = 4;
  cp.channels = 2;
  cp.chunk_bytes = 64;
  return make_schedule("all_reduce", "ring", cp);
}

}  // namespace

TEST(DdpBuckets, BackwardOrderCapsAndFirstBucket) {
  // 6 layers of 10 B; cap 25 B: a bucket closes at >= 25 B, so 3 layers each.
  const std::vector<uint64_t> b(6, 10);
  EXPECT_EQ(ddp_buckets(b, 25, 0), (std::vector<std::vector<int>>{{5, 4, 3}, {2, 1, 0}}));
  // First bucket capped at 10 B (PyTorch's small first bucket), then 25 B.
  EXPECT_EQ(ddp_buckets(b, 25, 10),
            (std::vector<std::vector<int>>{{5}, {4, 3, 2}, {1, 0}}));
  // A cap below one layer: one bucket per layer; a huge cap: one bucket.
  EXPECT_EQ(ddp_buckets(b, 1, 0).size(), 6u);
  EXPECT_EQ(ddp_buckets(b, 1000, 0).size(), 1u);
}

TEST(DdpStep, EveryGradientElementIsAllReducedOnce) {
  DdpParams p;
  p.ranks = 3;
  p.layer_elems = {5, 7, 11, 13};
  p.forward_ps = p.backward_ps = {1, 1, 1, 1};
  p.bucket_bytes = 40;  // 4 B elements: layers 3+2 (96 B) close the first bucket, ...
  p.comm.elem_bytes = 4;
  p.comm.chunk_bytes = 8;
  const DdpStep s = ddp_step(p);
  EXPECT_EQ(s.compute_ps, 8u);
  EXPECT_EQ(std::accumulate(s.bucket_elems.begin(), s.bucket_elems.end(), uint64_t(0)), 36u);
  const auto in = testutil::make_inputs(3, s.schedule.count);
  const FunctionalResult out = run_functional(s.schedule, in, 7);
  for (uint64_t i = 0; i < 36; ++i)
    for (int r = 0; r < 3; ++r)
      ASSERT_EQ(out.buffers[size_t(r)][i], in[0][i] + in[1][i] + in[2][i]) << "elem " << i;
}

TEST(JobBuilder, ConcurrentSubgroupCollectivesComputeTheirOwnSums) {
  // Ranks {0,2,4} and {1,3,5} all-reduce different ranges concurrently, then {0..5}
  // all-reduces a third range after both (stream deps through the joins).
  JobBuilder b(6);
  const std::vector<std::vector<uint32_t>> none(3);
  const auto ja = b.add(allreduce(3, 10), {0, 2, 4}, 0, none);
  const auto jb = b.add(allreduce(3, 10), {1, 3, 5}, 10, none);
  std::vector<std::vector<uint32_t>> after(6);
  for (int i = 0; i < 3; ++i) {
    after[size_t(2 * i)] = {ja[size_t(i)]};
    after[size_t(2 * i + 1)] = {jb[size_t(i)]};
  }
  b.add(allreduce(6, 12), {0, 1, 2, 3, 4, 5}, 20, after);
  const Schedule s = b.finish("composed");
  EXPECT_EQ(s.count, 32u);
  const auto in = testutil::make_inputs(6, s.count);
  for (uint64_t seed : {0ull, 3ull, 11ull}) {
    const FunctionalResult out = run_functional(s, in, seed);
    for (int r = 0; r < 6; ++r) {
      const uint64_t base = r % 2 == 0 ? 0 : 10;
      for (uint64_t i = base; i < base + 10; ++i) {
        const int p = r % 2;
        ASSERT_EQ(out.buffers[size_t(r)][i], in[size_t(p)][i] + in[size_t(p + 2)][i] + in[size_t(p + 4)][i]);
      }
      for (uint64_t i = 20; i < 32; ++i) {
        double sum = 0;
        for (int k = 0; k < 6; ++k) sum += in[size_t(k)][i];
        ASSERT_EQ(out.buffers[size_t(r)][i], sum);
      }
    }
  }
}

TEST(JobBuilder, JoinWaitsForEveryOpAndDelaysCarryTheirDuration) {
  JobBuilder b(2);
  const auto j = b.collective(allreduce(2, 8), {0, 1}, 0, 123, {{}, {}});
  const Schedule s = b.finish("one");
  // Op 0 of each rank is the launch delay; every other op but the join depends on it
  // transitively; the join is last and has deps.
  for (int r = 0; r < 2; ++r) {
    const auto& ops = s.programs[size_t(r)].ops;
    EXPECT_EQ(ops[0].kind, OpKind::kDelay);
    EXPECT_EQ(ops[0].duration_ps, 123u);
    EXPECT_EQ(j[size_t(r)], ops.size() - 1);
    EXPECT_EQ(ops.back().kind, OpKind::kDelay);
    EXPECT_EQ(ops.back().duration_ps, 0u);
    EXPECT_FALSE(ops.back().deps.empty());
    for (size_t i = 1; i + 1 < ops.size(); ++i) EXPECT_FALSE(ops[i].deps.empty()) << i;
  }
}

TEST(Alltoallv, PerPairSizesLandInTheirSlots) {
  const std::vector<std::vector<uint64_t>> e{{0, 3, 0, 5}, {1, 0, 2, 0}, {4, 4, 0, 1}, {0, 7, 2, 0}};
  const Schedule s = alltoallv(e, 2);
  const auto in = testutil::make_inputs(4, s.count);
  const FunctionalResult out = run_functional(s, in, 5);
  uint64_t moved = 0;
  for (const auto& row : e) moved += std::accumulate(row.begin(), row.end(), uint64_t(0));
  EXPECT_EQ(out.elements_moved, moved);
  // Receiver 1 gets rank 0's 3 elements first (its input offset 0), then 2's (offset 1, 4
  // elements after rank 2's 4 for rank 0), then 3's.
  uint64_t in_area = 0;
  for (const auto& row : e) in_area = std::max(in_area, std::accumulate(row.begin(), row.end(), uint64_t(0)));
  EXPECT_EQ(out.buffers[1][in_area + 0], in[0][0]);
  EXPECT_EQ(out.buffers[1][in_area + 2], in[0][2]);
  EXPECT_EQ(out.buffers[1][in_area + 3], in[2][4]);
  EXPECT_EQ(out.buffers[1][in_area + 7], in[3][0]);
}

TEST(MoeRoute, DeterministicTopKAndSkewRaisesTheMaxLoad) {
  MoeParams p;
  p.ranks = 8;
  p.experts_per_rank = 2;
  p.top_k = 2;
  p.tokens_per_rank = 4000;
  p.seed = 42;
  p.skew = 0;
  const MoeRouting u = moe_route(p), u2 = moe_route(p);
  EXPECT_EQ(u.tokens, u2.tokens) << "not deterministic";
  const uint64_t total = 8 * 4000 * 2;
  EXPECT_EQ(std::accumulate(u.expert_load.begin(), u.expert_load.end(), uint64_t(0)), total);
  // Uniform: 4000 expected per expert; the max of 16 binomials stays within 10%.
  const uint64_t umax = *std::max_element(u.expert_load.begin(), u.expert_load.end());
  EXPECT_LT(double(umax), 1.10 * 4000);
  // Zipf s = 1.2 over 16 experts: the hottest gets 1/H weight, H = sum 1/k^1.2 ~ 2.9;
  // top-2 without replacement caps it at one pick per token (<= 32000 of 64000).
  p.skew = 1.2;
  const MoeRouting z = moe_route(p);
  const uint64_t zmax = *std::max_element(z.expert_load.begin(), z.expert_load.end());
  EXPECT_GT(double(zmax), 2.5 * 4000);
  EXPECT_LE(zmax, 32000u);
  for (int r = 0; r < 8; ++r)  // top-k distinct: never more picks of one expert than tokens
    for (uint64_t t : z.tokens[size_t(r)]) EXPECT_LE(t, 4000u);
  p.seed = 43;
  EXPECT_NE(moe_route(p).tokens, z.tokens) << "seed does not change the routing";
}

TEST(FsdpStep, PeakMemoryAccountingAndPrefetchDeps) {
  EXPECT_EQ(peak_held_bytes({{0, 10, 5}, {10, 20, 7}}), 7u) << "free before alloc at a tie";
  EXPECT_EQ(peak_held_bytes({{0, 10, 5}, {5, 20, 7}, {6, 7, 1}}), 13u);
  FsdpParams p;
  p.ranks = 4;
  p.layer_elems = {400, 400, 400};
  p.forward_ps = p.backward_ps = {10, 10, 10};
  p.comm.elem_bytes = 2;
  p.comm.chunk_bytes = 64;
  for (int d : {0, 1, 2}) {
    p.prefetch_depth = d;
    const FsdpStep s = fsdp_step(p);
    EXPECT_EQ(s.compute_ps, 60u);
    EXPECT_EQ(s.gathered_bytes[0][0], 300u * 2);  // 400 - the 100-element shard, 2 B each
    // AG(k)'s launch depends on compute slot k-d-1 (when it exists).
    const auto& ops = s.schedule.programs[0].ops;
    for (size_t k = 0; k < 6; ++k) {
      const auto& deps = ops[s.gather_launch_op[0][k]].deps;
      const bool waits = k >= size_t(d) + 1 &&
                         std::count(deps.begin(), deps.end(), s.compute_op[0][k - size_t(d) - 1]) == 1;
      EXPECT_EQ(waits, k >= size_t(d) + 1) << "depth " << d << " slot " << k;
    }
    // Every gathered layer is complete on every rank (functional): sums not needed, the
    // all-gather copies rank r's block r to all.
    const auto in = testutil::make_inputs(4, s.schedule.count);
    EXPECT_NO_THROW(run_functional(s.schedule, in, 9));
  }
}

TEST(TpGroups, PlacementPartitionsRanks) {
  const TpGroups in = tp_groups(8, 4, true), out = tp_groups(8, 4, false);
  EXPECT_EQ(in.tp, (std::vector<std::vector<int>>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(in.dp[0], (std::vector<int>{0, 4}));
  EXPECT_EQ(out.tp, (std::vector<std::vector<int>>{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  EXPECT_EQ(out.dp[0], (std::vector<int>{0, 1}));
  for (const TpGroups* g : {&in, &out}) {
    std::set<int> seen;
    for (const auto& grp : g->tp) seen.insert(grp.begin(), grp.end());
    EXPECT_EQ(seen.size(), 8u);
  }
  TpParams p;
  p.ranks = 8;
  p.tp = 4;
  p.layers = 2;
  p.act_elems = 64;
  p.grad_elems = 32;
  p.forward_ps = 10;
  p.backward_ps = 20;
  p.comm.elem_bytes = 2;
  p.comm.chunk_bytes = 32;
  const Schedule s = tp_step(p);
  EXPECT_EQ(compute_ps(s, 0), 60u);
  EXPECT_NO_THROW(run_functional(s, testutil::make_inputs(8, s.count), 2));
}
