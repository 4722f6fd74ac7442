// The Ultra Ethernet transport's plain-C++ parts: NSCC's rules (REFERENCE cases 7 and 8
// exactly), the receiver's PSN window (SACK bookkeeping) and REPS entropy recycling.
#include <gtest/gtest.h>

#include "models/nic/psn_window.h"
#include "models/uec/nscc.h"
#include "models/uec/spraying.h"

namespace fabricsim {
namespace {

// 400 Gb/s, base RTT 12 us: BDP 600,000 B, a = 4, target 9 us (trimming).
NsccParams params400() {
  NsccParams p;
  p.mtu = 4032;
  p.line_rate_bps = 400000000000ull;
  p.network_rtt_ps = 12000000;
  p.trimming = true;
  return p;
}

TEST(Nscc, DefaultsScaleWithTheNetwork) {
  Nscc n(params400());
  EXPECT_DOUBLE_EQ(n.a(), 4.0);
  EXPECT_EQ(n.target_ps(), 9000000u);     // 0.75 x base RTT
  EXPECT_DOUBLE_EQ(n.b(), 0.75);          // target / 12 us
  EXPECT_EQ(n.max_window(), 900000u);     // 1.5 x BDP
  EXPECT_EQ(n.cwnd(), n.max_window());    // starts at the maximum
}

// REFERENCE case 7: newly received 4,096 B with pend 64 reduces cwnd by 2,048 B.
TEST(Nscc, Case7ReceiverPenaltyIsExact) {
  Nscc n(params400());
  n.set_cwnd(500000);
  n.receiver_penalty(4096, 64);
  EXPECT_EQ(n.cwnd(), 500000u - 2048u);
}

// REFERENCE case 8: average delay 2 x target with gain 0.8 gives factor 0.6; 10 x target
// clamps at 0.5; at most one decrease per base RTT.
TEST(Nscc, Case8MultiplicativeDecreaseIsExact) {
  Nscc n(params400());
  n.set_cwnd(500000);
  n.set_avg_delay(2 * n.target_ps());
  n.multiplicative_decrease(100000000);
  EXPECT_EQ(n.cwnd(), 300000u);  // x 0.6
  n.set_cwnd(500000);
  n.set_avg_delay(10 * n.target_ps());
  n.multiplicative_decrease(100000000 + n.base_rtt_ps());  // one base RTT later: not yet
  EXPECT_EQ(n.cwnd(), 500000u);
  n.multiplicative_decrease(100000000 + n.base_rtt_ps() + 1);
  EXPECT_EQ(n.cwnd(), 250000u);  // x 0.5, the floor
  EXPECT_EQ(n.counts().md, 2u);
}

TEST(Nscc, MarkedAckAboveTargetDecreasesOnceThenUnmarkedAcksIncrease) {
  Nscc n(params400());
  const uint64_t t0 = 50000000, w0 = n.cwnd();
  // Marked, 20 us of queueing: the average moves towards it slowly (EWMA 1/80).
  for (int i = 0; i < 400; ++i) n.on_ack(t0 + uint64_t(i) * 1000, 4032, 12000000 + 20000000, true, 0, w0);
  EXPECT_LT(n.cwnd(), w0);
  EXPECT_GE(n.counts().md, 1u);
  const uint64_t low = n.cwnd();
  // Unmarked, no queueing: proportional then fast increase push it back up.
  for (int i = 0; i < 2000; ++i)
    n.on_ack(t0 + 500000000 + uint64_t(i) * 10000, 4032, 12000000, false, 0, low / 2);
  EXPECT_GT(n.cwnd(), low);
  EXPECT_LE(n.cwnd(), n.max_window());
}

TEST(Nscc, NackTakesItsBytesOff) {
  Nscc n(params400());
  n.set_cwnd(400000);
  n.on_nack(1000, 4032, 0);   // first call opens the QuickAdapt period: no adapt yet
  EXPECT_EQ(n.cwnd(), 400000u - 4032u);
}

TEST(PsnWindow, CumulativeAndSelectiveBookkeeping) {
  PsnWindow w;
  EXPECT_TRUE(w.receive(0));
  EXPECT_EQ(w.cum(), 1u);
  EXPECT_TRUE(w.receive(2));
  EXPECT_TRUE(w.receive(3));
  EXPECT_EQ(w.cum(), 1u);
  EXPECT_EQ(w.held(), 2u);
  EXPECT_EQ(w.bits(1), 0b110u);       // PSN 1 missing, 2 and 3 in
  EXPECT_FALSE(w.receive(2));         // duplicate
  EXPECT_FALSE(w.receive(0));         // duplicate below cum
  EXPECT_TRUE(w.receive(1));
  EXPECT_EQ(w.cum(), 4u);
  EXPECT_EQ(w.held(), 0u);
  // Far ahead and across word boundaries.
  for (uint32_t p = 300; p > 4; --p) EXPECT_TRUE(w.receive(p));
  EXPECT_EQ(w.cum(), 4u);
  EXPECT_EQ(w.held(), 296u);
  EXPECT_TRUE(w.has(200));
  EXPECT_FALSE(w.has(4));
  EXPECT_TRUE(w.receive(4));
  EXPECT_EQ(w.cum(), 301u);
  for (uint32_t p = 301; p < 5000; ++p) EXPECT_TRUE(w.receive(p));
  EXPECT_EQ(w.cum(), 5000u);
}

TEST(Reps, RecyclesUnmarkedEntropiesOldestFirstAndExploresOtherwise) {
  EntropyPolicy e(SprayMode::kReps, 256, 8, 10000000, Rng(1, "reps"));
  const uint16_t x = e.next(0);  // nothing to recycle: explores
  EXPECT_EQ(e.explored(), 1u);
  e.on_ack(11, false, 0);
  e.on_ack(22, true, 0);   // marked: not recycled
  e.on_ack(33, false, 0);
  EXPECT_EQ(e.fresh(), 2u);
  EXPECT_EQ(e.next(0), 11);
  EXPECT_EQ(e.next(0), 33);
  EXPECT_EQ(e.recycled(), 2u);
  (void)x;
  // Ring of 8: the 9th good entropy overwrites the oldest.
  for (uint16_t k = 100; k < 109; ++k) e.on_ack(k, false, 0);
  EXPECT_EQ(e.fresh(), 8u);
  EXPECT_EQ(e.next(0), 101);
}

TEST(Reps, LossFreezesOnKnownEntropies) {
  EntropyPolicy e(SprayMode::kReps, 256, 8, 1000, Rng(1, "reps"));
  e.on_ack(5, false, 0);
  e.on_ack(6, false, 0);
  e.on_loss(200, 0);  // a packet on entropy 200 was lost (SACK gap or timeout)
  EXPECT_TRUE(e.frozen());
  EXPECT_EQ(e.freezes(), 1u);
  for (int i = 0; i < 10; ++i) {
    const uint16_t v = e.next(10);
    EXPECT_TRUE(v == 5 || v == 6);  // no exploration while frozen
  }
  e.next(2000);  // thawed: explores again
  EXPECT_FALSE(e.frozen());
}

// A lost entropy is bad: not recycled from the ring even while fresh, skipped while
// frozen, never drawn when exploring, until freeze_ps after the loss or an unmarked ack.
TEST(Reps, ALostEntropyIsNeitherRecycledNorExplored) {
  EntropyPolicy e(SprayMode::kReps, 4, 8, 1000, Rng(1, "reps"));
  e.on_ack(1, false, 0);
  e.on_ack(2, false, 0);
  e.on_ack(1, false, 0);
  e.on_loss(1, 0);
  EXPECT_TRUE(e.bad(1, 10));
  for (int i = 0; i < 50; ++i) EXPECT_NE(e.next(10), 1);  // frozen: only 2 of the ring
  // Another loss while frozen marks that one bad too; every known entropy is then bad and
  // exploration draws among the others (0 and 3).
  e.on_loss(2, 20);
  for (int i = 0; i < 50; ++i) {
    const uint16_t v = e.next(30);
    EXPECT_TRUE(v == 0 || v == 3) << v;
  }
  e.on_ack(2, false, 40);  // a copy on 2 made it after all: good again
  EXPECT_FALSE(e.bad(2, 40));
  EXPECT_TRUE(e.bad(1, 999));
  EXPECT_FALSE(e.bad(1, 1000));  // freeze_ps after its loss
  // Oblivious and ECMP ignore losses.
  EntropyPolicy o(SprayMode::kOblivious, 4, 8, 1000, Rng(1, "o"));
  o.on_loss(1, 0);
  EXPECT_FALSE(o.bad(1, 10));
}

TEST(Spraying, ObliviousRoundRobinsAndEcmpStays) {
  EntropyPolicy o(SprayMode::kOblivious, 4, 8, 0, Rng(1, "o"));
  const uint16_t a = o.next(0);
  EXPECT_EQ(o.next(0), (a + 1) % 4);
  EXPECT_EQ(o.next(0), (a + 2) % 4);
  EntropyPolicy s(SprayMode::kEcmp, 256, 8, 0, Rng(1, "s"));
  const uint16_t f = s.next(0);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(s.next(0), f);
}

}  // namespace
}  // namespace fabricsim

namespace fabricsim {
namespace {

// The SACK words against a bit-by-bit reading, across word boundaries and below cum.
TEST(PsnWindow, SackWordsMatchBitByBit) {
  PsnWindow w;
  uint64_t x = 88172645463325252ull;
  for (int k = 0; k < 400; ++k) {  // sparse: holes, cum stays low
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    w.receive(uint32_t(x % 700));
  }
  ASSERT_GT(w.held(), 100u);
  ASSERT_LT(w.cum(), 50u);
  for (uint32_t base = w.cum() > 63 ? w.cum() - 63 : 0; base < w.cum() + 400; ++base) {
    uint64_t slow = 0;
    for (uint32_t i = 0; i < 64; ++i)
      if (w.has(base + i)) slow |= 1ull << i;
    ASSERT_EQ(w.bits(base), slow) << base;
  }
  // And once the holes fill, across the ring's re-laid words.
  for (uint32_t p = 0; p < 700; p += 3) w.receive(p);
  for (uint32_t base = w.cum() > 63 ? w.cum() - 63 : 0; base < w.cum() + 300; ++base) {
    uint64_t slow = 0;
    for (uint32_t i = 0; i < 64; ++i)
      if (w.has(base + i)) slow |= 1ull << i;
    ASSERT_EQ(w.bits(base), slow) << base;
  }
}

}  // namespace
}  // namespace fabricsim
