// Ring family: broadcast and reduce chains, all_reduce ring = ring_allreduce.h's ring_allreduce, and
// the rail-aligned ring orders of the flat ring on two-level systems. Pure C++, no SystemC.
#include <gtest/gtest.h>

#include <algorithm>
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

TEST(Chains, RootPositionsAndSingleRank) {
  // Broadcast from 2 on 5 ranks: 2 -> 3 -> 4 -> 0 -> 1; reduce to 2: 3 -> 4 -> 0 -> 1 -> 2.
  const CollParams p{5, 10, 4, 1, 1ull << 30, 2};
  const Schedule b = broadcast_ring(p);
  const Schedule r = reduce_ring(p);
  const std::vector<std::pair<int, int>> bcast_edges{{2, 3}, {3, 4}, {4, 0}, {0, 1}};
  const std::vector<std::pair<int, int>> reduce_edges{{3, 4}, {4, 0}, {0, 1}, {1, 2}};
  std::vector<std::pair<int, int>> got_b, got_r;
  for (int q = 0; q < 5; ++q) {
    for (const Op& op : b.programs[at(q)].ops)
      if (op.kind == OpKind::kSend) got_b.push_back({q, op.peer});
    for (const Op& op : r.programs[at(q)].ops)
      if (op.kind == OpKind::kSend) got_r.push_back({q, op.peer});
  }
  std::sort(got_b.begin(), got_b.end());
  std::sort(got_r.begin(), got_r.end());
  auto sorted = [](std::vector<std::pair<int, int>> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  EXPECT_EQ(got_b, sorted(bcast_edges));
  EXPECT_EQ(got_r, sorted(reduce_edges));
  EXPECT_TRUE(b.programs[1].ops.size() == 1 && b.programs[1].ops[0].kind == OpKind::kRecv);
  EXPECT_TRUE(r.programs[2].ops.size() == 1 && r.programs[2].ops[0].mode == RecvMode::kReduceSum);
}

TEST(Generators, RingAllReduceIsRingH) {
  const CollParams p{5, 123, 4, 2, 4 * 3, 0};
  const Schedule a = make_schedule("all_reduce", "ring", p);
  const Schedule b = ring_allreduce(RingParams{5, 123, 4, 2, 4 * 3});
  ASSERT_EQ(a.programs.size(), b.programs.size());
  EXPECT_EQ(a.algorithm, "ring");
  for (std::size_t r = 0; r < a.programs.size(); ++r) {
    ASSERT_EQ(a.programs[r].ops.size(), b.programs[r].ops.size());
    for (std::size_t i = 0; i < a.programs[r].ops.size(); ++i) {
      const Op& x = a.programs[r].ops[i];
      const Op& y = b.programs[r].ops[i];
      EXPECT_TRUE(x.kind == y.kind && x.peer == y.peer && x.tag == y.tag && x.offset == y.offset &&
                  x.count == y.count && x.mode == y.mode && x.deps == y.deps);
    }
  }
}

TEST(RailRing, OrdersAreRailAlignedBalancedAndExact) {
  const AlgoInfo& ring = algo_info("all_reduce", "ring");
  for (int N : {1, 2, 3, 4, 5})
    for (int L : {1, 2, 3, 4, 8}) {
      const int n = N * L;
      for (int channels : {1, L, 2 * L}) {
        SCOPED_TRACE("N=" + std::to_string(N) + " L=" + std::to_string(L) +
                     " channels=" + std::to_string(channels));
        const auto orders = rail_ring_orders(n, L, channels);
        ASSERT_EQ(orders.size(), at(channels));
        // nic_out[k * L + l]: channels whose ring leaves domain k from local index l.
        std::vector<int> nic_out(at(n), 0), nic_in(at(n), 0);
        for (const auto& o : orders) {
          ASSERT_EQ(o.size(), at(n));
          EXPECT_EQ(std::set<int>(o.begin(), o.end()).size(), at(n)) << "not a permutation";
          for (int i = 0; i < n; ++i) {
            const int u = o[at(i)], v = o[at((i + 1) % n)];
            if (u / L == v / L) continue;  // inside a domain: the scale-up fabric
            ++nic_out[at(u)];
            ++nic_in[at(v)];
            if (N % 2 == 1 && L == 2) continue;  // no rail-aligned ring exists
            EXPECT_EQ(u % L, v % L) << u << " -> " << v << " changes rail";
          }
          // Each domain is entered once and left once.
          if (N > 1)
            for (int k = 0; k < N; ++k) {
              int inside = 0;
              for (int i = 0; i < n; ++i)
                if (o[at(i)] / L == k && o[at((i + 1) % n)] / L == k) ++inside;
              EXPECT_EQ(inside, L - 1) << "domain " << k;
            }
        }
        if (N % 2 == 0 && channels % L == 0)
          for (int r = 0; r < n; ++r) {
            EXPECT_EQ(nic_out[at(r)], channels / L) << "rank " << r;
            EXPECT_EQ(nic_in[at(r)], channels / L) << "rank " << r;
          }
        // The ring on these orders still computes the exact sum on every rank.
        const CollParams p{n, 7 * static_cast<uint64_t>(n) + 3, 4, channels, 12, 0};
        const Schedule s = make_schedule("all_reduce", "ring", p, L);
        ASSERT_NO_THROW(validate(s));
        const Buffers in = make_inputs(n, s.count);
        EXPECT_TRUE(check_result(ring, p, in, run_functional(s, in).buffers));
        EXPECT_TRUE(check_result(ring, p, in, run_functional(s, in, 99).buffers));
      }
    }
  // One domain or one rank per domain: the plain ring.
  EXPECT_EQ(rail_ring_orders(4, 4, 2)[1], (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(rail_ring_orders(4, 1, 1)[0], (std::vector<int>{0, 1, 2, 3}));
  // 2 domains x 4, channel 1: enter domain 0 at 1, leave at 2; domain 1 the reverse.
  EXPECT_EQ(rail_ring_orders(8, 4, 2)[1], (std::vector<int>{1, 3, 0, 2, 6, 7, 4, 5}));
}

}  // namespace
}  // namespace fabricsim::coll
