// The Ethernet switch MMU's arithmetic (models/ethernet/shared_buffer.h): dynamic-threshold
// admission, RED marking probability, PFC hysteresis.
#include <gtest/gtest.h>

#include "models/ethernet/shared_buffer.h"

namespace fabricsim {
namespace {

using V = SharedBuffer::Verdict;

TEST(SharedBuffer, DynamicThresholdIsAlphaTimesTheFreeBuffer) {
  SharedBuffer b(1000000, 1.0, 0);
  EXPECT_EQ(b.admit(0, 4000, false), V::kAccept);
  b.add(400000);  // free 600,000: a queue may hold 600,000
  EXPECT_EQ(b.admit(595000, 5000, false), V::kAccept);
  EXPECT_EQ(b.admit(596000, 5000, false), V::kDtThreshold);
  // Lossless or control traffic ignores the threshold, but not a full buffer.
  EXPECT_EQ(b.admit(596000, 5000, true), V::kAccept);
  b.add(598000);
  EXPECT_EQ(b.admit(0, 5000, true), V::kBufferFull);
  EXPECT_EQ(b.peak(), 998000u);
  b.remove(998000);
  EXPECT_EQ(b.used(), 0u);
}

TEST(SharedBuffer, AlphaAndStaticLimit) {
  SharedBuffer half(1000000, 0.5, 0);
  EXPECT_EQ(half.admit(496000, 4000, false), V::kAccept);  // 500,000 = 0.5 x 1,000,000
  EXPECT_EQ(half.admit(497000, 4000, false), V::kDtThreshold);
  SharedBuffer capped(1000000, 1.0, 100000);
  EXPECT_EQ(capped.admit(97000, 4000, false), V::kQueueLimit);
}

TEST(Red, MarkingProbabilityRisesLinearlyToPmaxThenOne) {
  EXPECT_DOUBLE_EQ(red_probability(99, 100, 300, 0.2), 0.0);
  EXPECT_DOUBLE_EQ(red_probability(100, 100, 300, 0.2), 0.0);
  EXPECT_DOUBLE_EQ(red_probability(200, 100, 300, 0.2), 0.1);
  EXPECT_DOUBLE_EQ(red_probability(300, 100, 300, 0.2), 1.0);
}

TEST(Pfc, XoffAboveThresholdXonAtOrBelow) {
  PfcIngress q;
  EXPECT_FALSE(q.add(500, 1000));
  EXPECT_TRUE(q.add(600, 1000));   // 1100 > 1000: pause
  EXPECT_FALSE(q.add(100, 1000));  // already paused: no second frame
  EXPECT_FALSE(q.remove(500, 600));  // 700 > 600
  EXPECT_TRUE(q.remove(100, 600));   // 600: resume
  EXPECT_FALSE(q.xoff());
}

}  // namespace
}  // namespace fabricsim
