#include "models/core/rng.h"

#include "models/core/errors.h"

namespace fabricsim {

namespace {

__extension__ typedef unsigned __int128 u128;

constexpr uint64_t kGoldenGamma = 0x9E3779B97F4A7C15ULL;

// splitmix64 output function (Steele, Lea, Flood 2014): a bijective 64-bit mixer.
uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

uint64_t fnv1a64(const std::string& s) {
  uint64_t h = 0xCBF29CE484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001B3ULL;
  }
  return h;
}

Rng::Rng(uint64_t global_seed, const std::string& component_name) {
  // mix64 is a bijection, so for a fixed name distinct seeds give distinct streams, and
  // for a fixed seed distinct name hashes do.
  uint64_t sm = mix64(global_seed) ^ fnv1a64(component_name);
  for (uint64_t& word : s_) {
    sm += kGoldenGamma;
    word = mix64(sm);
  }
  // xoshiro's only forbidden state; four consecutive splitmix64 outputs are never all zero
  // in practice, but the fix-up keeps the generator well defined regardless.
  if (s_[0] == 0 && s_[1] == 0 && s_[2] == 0 && s_[3] == 0) s_[0] = kGoldenGamma;
}

uint64_t Rng::next() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

uint64_t Rng::below(uint64_t n) {
  FABRICSIM_ASSERT(n > 0, "Rng::below(0) has no valid result");
  // Lemire 2019: the high word of next() * n is uniform on [0, n) once products whose low
  // word falls below 2^64 mod n are rejected.
  u128 m = static_cast<u128>(next()) * n;
  auto low = static_cast<uint64_t>(m);
  if (low < n) {
    const uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<u128>(next()) * n;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

double Rng::uniform01() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

}  // namespace fabricsim
