// Bit errors on a link with link-level retry (docs/models.md, "Link-level retry"). Plain C++.
#pragma once
#include <cstdint>
#include <string>

#include "models/core/rng.h"

namespace fabricsim {

// Source of bit errors for a link layer with link-level replay: the number of good wire
// bits before the next bit error, drawn afresh at each call (a geometric distribution for
// independent bit errors; tests script it).
class BitErrors {
 public:
  virtual ~BitErrors() = default;
  virtual uint64_t next_gap() = 0;
};

// Independent bit errors at `ber` per wire bit, drawn from the port's own stream
// Rng(seed, port display name), so a port's errors depend on nothing but the seed and its
// name.
class GeometricBitErrors final : public BitErrors {
 public:
  // 0 < ber < 1.
  GeometricBitErrors(double ber, uint64_t seed, const std::string& port_name);
  uint64_t next_gap() override;

 private:
  Rng rng_;
  double log_keep_;  // ln(1 - ber)
};

}  // namespace fabricsim
