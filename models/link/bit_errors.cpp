#include "models/link/bit_errors.h"

#include <cmath>

namespace fabricsim {

GeometricBitErrors::GeometricBitErrors(double ber, uint64_t seed, const std::string& port_name)
    : rng_(seed, port_name), log_keep_(std::log1p(-ber)) {}

// Inverse CDF of the geometric distribution: with U uniform in (0, 1],
// G = floor(ln U / ln(1 - ber)) has P(G >= g) = (1 - ber)^g, the chance that g bits in a
// row are good. Capped at 2^62 (never reached for ber >= 1e-15 in any run).
uint64_t GeometricBitErrors::next_gap() {
  const double u = 1.0 - rng_.uniform01();
  const double g = std::floor(std::log(u) / log_keep_);
  return g >= 0x1p62 ? (uint64_t(1) << 62) : uint64_t(g);
}

}  // namespace fabricsim
