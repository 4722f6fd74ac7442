// Deterministic per-component random streams. Each component owns an Rng derived from
// the global seed and its own name, so adding or reordering components never changes
// another component's stream. Hand-written xoshiro256** and integer-only derivations:
// std:: distributions differ between standard library versions.
#pragma once
#include <array>
#include <cstdint>
#include <string>

namespace fabricsim {

// 64-bit FNV-1a of the bytes of s: a stable name hash across platforms and runs.
uint64_t fnv1a64(const std::string& s);

class Rng {
 public:
  // State = four splitmix64 outputs seeded from global_seed and fnv1a64(component_name).
  Rng(uint64_t global_seed, const std::string& component_name);

  // Next raw 64-bit output of xoshiro256**.
  uint64_t next();

  // Uniform in [0, n) without modulo bias (Lemire's multiply-and-reject). n must be > 0.
  uint64_t below(uint64_t n);

  // Uniform in [0, 1) on the 2^-53 grid.
  double uniform01();

 private:
  std::array<uint64_t, 4> s_;
};

}  // namespace fabricsim
