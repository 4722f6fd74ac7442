// FlowNet (models/flow/flow_net.h): weighted max-min fair rates, completion times, and the
// incremental recomputation (only flows that share resources with a change are re-rated).
#include <gtest/gtest.h>

#include <vector>

#include "models/flow/flow_net.h"

namespace fabricsim {
namespace {

using U = FlowNet::Use;

TEST(FlowNet, SharedLinkThenFullRate) {
  FlowNet net;
  const uint32_t a = net.add_resource(1.0);  // 1 wire byte per ps
  net.start(0, 100, {U{a, 1.0}}, 1);
  net.start(0, 200, {U{a, 1.0}}, 2);
  net.settle(0);
  // Half each: the first is done at 200 ps; the second then has 100 B left at full rate.
  EXPECT_EQ(net.next_finish(), 200u);
  std::vector<uint64_t> done;
  net.finish_due(200, done);
  ASSERT_EQ(done, std::vector<uint64_t>{1});
  net.settle(200);
  EXPECT_EQ(net.next_finish(), 300u);
  net.finish_due(300, done);
  EXPECT_EQ(done, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(net.flows_in_flight(), 0u);
}

TEST(FlowNet, MaxMinFairAcrossTwoLinks) {
  // A (1 B/ps) carries f1 and f2; B (2 B/ps) carries f2 and f3. Progressive filling: A is
  // the bottleneck at 0.5 each; f3 takes what f2 leaves on B: 1.5.
  FlowNet net;
  const uint32_t A = net.add_resource(1.0), B = net.add_resource(2.0);
  const uint32_t f1 = net.start(0, 1e6, {U{A, 1.0}}, 1);
  const uint32_t f2 = net.start(0, 1e6, {U{A, 1.0}, U{B, 1.0}}, 2);
  const uint32_t f3 = net.start(0, 1e6, {U{B, 1.0}}, 3);
  net.settle(0);
  EXPECT_DOUBLE_EQ(net.rate(f1), 0.5);
  EXPECT_DOUBLE_EQ(net.rate(f2), 0.5);
  EXPECT_DOUBLE_EQ(net.rate(f3), 1.5);
}

TEST(FlowNet, WeightsAreWireBytesPerPayloadByte) {
  // Framing overhead 25% (weight 1.25) on a 1 B/ps link: 0.8 payload bytes per ps. A flow
  // split over two parallel links (weight 0.5 each) gets both: 2 B/ps.
  FlowNet net;
  const uint32_t a = net.add_resource(1.0), b = net.add_resource(1.0), c = net.add_resource(1.0);
  const uint32_t f = net.start(0, 800, {U{a, 1.25}}, 1);
  const uint32_t g = net.start(0, 800, {U{b, 0.5}, U{c, 0.5}}, 2);
  net.settle(0);
  EXPECT_DOUBLE_EQ(net.rate(f), 0.8);
  EXPECT_DOUBLE_EQ(net.rate(g), 2.0);
  EXPECT_EQ(net.next_finish(), 400u);  // g: 800 B at 2 B/ps
}

TEST(FlowNet, RecomputesOnlyTheConnectedFlows) {
  FlowNet net;
  const uint32_t a = net.add_resource(1.0), b = net.add_resource(1.0);
  net.start(0, 1000, {U{a, 1.0}}, 1);
  net.start(0, 1000, {U{a, 1.0}}, 2);
  net.settle(0);
  EXPECT_EQ(net.recomputed_flows(), 2u);
  // A flow on another link re-rates itself only.
  net.start(10, 1000, {U{b, 1.0}}, 3);
  net.settle(10);
  EXPECT_EQ(net.recomputed_flows(), 3u);
  // One on both links joins the components: all four are re-rated; a gets 3 flows (1/3
  // each), b's two flows are limited to 1/3 (the joiner) and 2/3.
  const uint32_t j = net.start(20, 1000, {U{a, 1.0}, U{b, 1.0}}, 4);
  net.settle(20);
  EXPECT_EQ(net.recomputed_flows(), 7u);
  EXPECT_NEAR(net.rate(j), 1.0 / 3.0, 1e-12);
}

TEST(FlowNet, ProgressIsKeptAcrossRateChanges) {
  FlowNet net;
  const uint32_t a = net.add_resource(1.0);
  net.start(0, 100, {U{a, 1.0}}, 1);
  net.settle(0);
  // At 50 ps, 50 B are left; a second flow halves the rate: done at 50 + 100 = 150 ps.
  net.start(50, 1000, {U{a, 1.0}}, 2);
  net.settle(50);
  EXPECT_EQ(net.next_finish(), 150u);
}

}  // namespace
}  // namespace fabricsim
