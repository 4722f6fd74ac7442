#include "models/core/rng.h"

#include <cstdint>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "models/core/errors.h"

namespace fabricsim {
namespace {

TEST(Rng, Fnv1aMatchesPublishedVectors) {
  EXPECT_EQ(fnv1a64(""), 0xCBF29CE484222325ULL);
  EXPECT_EQ(fnv1a64("a"), 0xAF63DC4C8601EC8CULL);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171F73967E8ULL);
}

// Golden outputs from an independent Python implementation of the same derivation
// (splitmix64-mixed seed xor FNV-1a name, four splitmix64 words, xoshiro256**). If this
// fails, every recorded simulation result with random traffic changes.
TEST(Rng, StreamIsStableAcrossBuilds) {
  Rng r(42, "switch0");
  EXPECT_EQ(r.next(), 0x02EC5C792932E511ULL);
  EXPECT_EQ(r.next(), 0x404532330D836BEEULL);
  EXPECT_EQ(r.next(), 0x7E48360768365D90ULL);
  EXPECT_EQ(r.next(), 0x53AB93EC7928770FULL);
  Rng z(0, "");
  EXPECT_EQ(z.next(), 0x21382EF092ED7068ULL);
  EXPECT_EQ(z.next(), 0x5B54C052757ADF62ULL);
}

TEST(Rng, SameSeedAndNameGiveSameSequence) {
  Rng a(7, "endpoint3");
  Rng b(7, "endpoint3");
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(a.next(), b.next()) << "at draw " << i;
}

TEST(Rng, DifferentNamesOrSeedsDiffer) {
  std::set<uint64_t> firsts;
  for (const char* name : {"endpoint0", "endpoint1", "switch0", "switch1", ""}) {
    for (uint64_t seed : {0ULL, 1ULL, 2ULL, 0xFFFFFFFFFFFFFFFFULL}) {
      Rng r(seed, name);
      firsts.insert(r.next());
    }
  }
  EXPECT_EQ(firsts.size(), 20u);

  Rng a(1, "endpoint0");
  Rng b(1, "endpoint1");
  int equal = 0;
  for (int i = 0; i < 1000; ++i) equal += a.next() == b.next() ? 1 : 0;
  EXPECT_EQ(equal, 0);
}

TEST(Rng, BelowStaysInRange) {
  Rng r(3, "range");
  for (uint64_t n : {1ULL, 2ULL, 3ULL, 7ULL, 1000ULL, (1ULL << 63) + 1, ~0ULL}) {
    for (int i = 0; i < 2000; ++i) ASSERT_LT(r.below(n), n) << "n=" << n;
  }
  for (int i = 0; i < 100; ++i) EXPECT_EQ(r.below(1), 0u);
}

TEST(Rng, BelowZeroIsAProgrammingError) {
  Rng r(3, "range");
  EXPECT_THROW(r.below(0), InternalError);
}

// Pearson chi-square over k equal buckets with N draws: for a uniform source the
// statistic follows chi-square with k-1 degrees of freedom. The bounds are the
// 1 - 1e-6 quantiles (df=9: P(X > 45) = 9.2e-7; df=63: P(X > 140) = 8.9e-8), so a correct
// generator fails this with probability below one in a million per seed; a generator
// skewed by even a few percent in one bucket gives a statistic in the hundreds.
double chi_square(Rng& r, uint64_t k, int draws) {
  std::vector<int> count(k, 0);
  for (int i = 0; i < draws; ++i) ++count[r.below(k)];
  const double expected = static_cast<double>(draws) / static_cast<double>(k);
  double stat = 0;
  for (int c : count) stat += (c - expected) * (c - expected) / expected;
  return stat;
}

TEST(Rng, BelowIsRoughlyUniform) {
  Rng a(11, "chi10");
  EXPECT_LT(chi_square(a, 10, 100'000), 45.0);
  Rng b(12, "chi64");
  EXPECT_LT(chi_square(b, 64, 200'000), 140.0);
}

// n = 0xAAAA...AAAB is about 2/3 of 2^64. "next() % n" would hit [0, 2^64 - n), the lower
// half of [0, n), twice as often as the upper half: P(result < n/2) would be 2/3. Without
// bias it is 1/2; with 100000 draws the standard deviation is 0.0016, so 0.01 is a
// six-sigma bound.
TEST(Rng, BelowHasNoModuloBiasForHugeN) {
  const uint64_t n = 0xAAAAAAAAAAAAAAABULL;
  Rng r(5, "bias");
  const int draws = 100'000;
  int lower = 0;
  for (int i = 0; i < draws; ++i) lower += r.below(n) < n / 2 ? 1 : 0;
  EXPECT_NEAR(static_cast<double>(lower) / draws, 0.5, 0.01);
}

TEST(Rng, Uniform01IsInUnitIntervalWithMeanOneHalf) {
  Rng r(9, "u01");
  const int draws = 100'000;
  double sum = 0;
  for (int i = 0; i < draws; ++i) {
    const double u = r.uniform01();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  // Var(U) = 1/12, so the mean of 100000 draws has sd 0.00091; 0.005 is over five sigma.
  EXPECT_NEAR(sum / draws, 0.5, 0.005);
}

TEST(Rng, Uniform01UsesTheTop53Bits) {
  Rng a(13, "bits");
  Rng b(13, "bits");
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(a.uniform01(), static_cast<double>(b.next() >> 11) / 9007199254740992.0);
  }
}

}  // namespace
}  // namespace fabricsim
