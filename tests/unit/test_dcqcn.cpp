// DCQCN's reaction point (models/roce/dcqcn.h), rule by rule, exactly.
#include <gtest/gtest.h>

#include "models/roce/dcqcn.h"

namespace fabricsim {
namespace {

constexpr uint64_t kUs = 1000000;

DcqcnParams p400() {
  DcqcnParams p;
  p.line_rate_bps = 400000000000ull;
  p.g = 1.0 / 256;
  p.alpha_timer_ps = 55 * kUs;
  p.rate_timer_ps = 900 * kUs;
  p.rate_decrease_interval_ps = 4 * kUs;
  p.byte_counter_bytes = 10000000;
  p.fast_recovery_steps = 5;
  p.ai_bps = 50000000;
  p.hai_bps = 100000000;
  p.min_rate_bps = 100000000;
  return p;
}

TEST(Dcqcn, LineRateUntilTheFirstCnp) {
  Dcqcn d(p400());
  d.on_sent(100000000, 5000 * kUs);  // no timers run before a CNP
  EXPECT_EQ(d.rate_bps(), 400000000000ull);
  EXPECT_EQ(d.increases(), 0u);
}

// A CNP: alpha = (1 - g) x 1 + g = 1, Rt = Rc, Rc = Rc x (1 - alpha / 2) = half.
TEST(Dcqcn, CnpHalvesTheRateWithAlphaOne) {
  Dcqcn d(p400());
  d.on_cnp(10 * kUs);
  EXPECT_DOUBLE_EQ(d.alpha(), 1.0);
  EXPECT_EQ(d.rate_bps(), 200000000000ull);
  EXPECT_EQ(d.target_bps(), 400000000000ull);
  // A second CNP within the decrease interval only raises alpha; the cut waits for the
  // interval's end, then uses the alpha of then.
  d.on_cnp(11 * kUs);
  EXPECT_EQ(d.rate_bps(), 200000000000ull);
  d.advance(14 * kUs);
  EXPECT_EQ(d.rate_bps(), 100000000000ull);  // alpha still 1: halved again
  EXPECT_EQ(d.target_bps(), 200000000000ull);
}

// Without CNPs alpha decays by (1 - g) every alpha timer.
TEST(Dcqcn, AlphaDecaysWithoutCnps) {
  Dcqcn d(p400());
  d.on_cnp(0);
  d.advance(55 * kUs * 3);
  EXPECT_NEAR(d.alpha(), (1 - 1.0 / 256) * (1 - 1.0 / 256) * (1 - 1.0 / 256), 1e-12);
}

// Fast recovery: each rate-timer event halves the distance to the target; after F timer
// stages additive increase raises the target by R_AI first.
TEST(Dcqcn, FastRecoveryThenAdditiveIncrease) {
  Dcqcn d(p400());
  d.on_cnp(0);  // Rc 200G, Rt 400G
  d.advance(900 * kUs);
  EXPECT_EQ(d.timer_stage(), 1u);
  EXPECT_EQ(d.rate_bps(), 300000000000ull);  // (400 + 200) / 2
  for (int i = 2; i <= 4; ++i) d.advance(uint64_t(i) * 900 * kUs);
  EXPECT_EQ(d.target_bps(), 400000000000ull);  // fast recovery keeps the target
  d.advance(5 * 900 * kUs);                    // stage 5 = F: additive increase
  EXPECT_EQ(d.timer_stage(), 5u);
  EXPECT_EQ(d.target_bps(), 400000000000ull);  // capped at the line rate
  Dcqcn e(p400());
  e.on_cnp(0);
  e.on_cnp(5 * kUs);  // Rc 100G (alpha 1), Rt 200G
  for (int i = 1; i <= 5; ++i) e.advance(5 * kUs + uint64_t(i) * 900 * kUs);
  EXPECT_EQ(e.target_bps(), 200000000000ull + 50000000ull);  // + R_AI at stage F
}

// Hyper increase once both stages exceed F: Rt += (min stage - F) x R_HAI. Three CNPs leave
// Rc 50G, Rt 100G; 7 byte stages (4 fast recovery, 3 additive: Rt 100.15G), then timer
// stages 1..5 additive (Rt 100.40G) and stage 6 with byte stage 7: hyper, + 1 x R_HAI.
TEST(Dcqcn, HyperIncreaseWhenBothStagesPassF) {
  DcqcnParams p = p400();
  p.byte_counter_bytes = 1000;
  Dcqcn d(p);
  d.on_cnp(0);
  d.on_cnp(5 * kUs);
  d.on_cnp(10 * kUs);
  EXPECT_EQ(d.rate_bps(), 50000000000ull);
  EXPECT_EQ(d.target_bps(), 100000000000ull);
  const uint64_t t0 = 10 * kUs;
  d.on_sent(7000, t0 + 1);
  EXPECT_EQ(d.byte_stage(), 7u);
  EXPECT_EQ(d.target_bps(), 100150000000ull);
  for (int i = 1; i <= 5; ++i) d.advance(t0 + uint64_t(i) * 900 * kUs);
  EXPECT_EQ(d.target_bps(), 100400000000ull);
  d.advance(t0 + 6 * 900 * kUs);
  EXPECT_EQ(d.timer_stage(), 6u);
  EXPECT_EQ(d.target_bps(), 100500000000ull);
}

TEST(Dcqcn, NeverBelowTheMinimumRate) {
  Dcqcn d(p400());
  for (int i = 0; i < 200; ++i) d.on_cnp(uint64_t(i) * 5 * kUs);
  EXPECT_GE(d.rate_bps(), 100000000ull);
  EXPECT_LT(d.rate_bps(), 200000000ull);
}

}  // namespace
}  // namespace fabricsim
