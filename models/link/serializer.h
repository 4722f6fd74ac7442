// Byte-exact wire time: serialisation in integer picoseconds with the remainder carried, so
// long runs at rates that do not divide 1 ps (e.g. 200 Gb/s -> 40 ps/byte exactly,
// 212.5 Gb/s -> not) never drift. Plain C++ (a link's transmitter, the host path's stages).
#pragma once
#include <cstdint>

#include "models/core/types.h"

namespace fabricsim {

// Serialisation time in integer picoseconds at a fixed bit rate. Remainders are carried
// from one call to the next, so the sum over N transactions equals the exact total to
// within one picosecond, whatever N is.
class Serializer {
 public:
  explicit Serializer(uint64_t rate_bps = 1) : rate_bps_(rate_bps) {}
  uint64_t rate_bps() const { return rate_bps_; }
  // Time to put `wire_bytes` on the wire; advances the carried remainder.
  uint64_t take_ps(uint64_t wire_bytes) {
    u128 num = u128(wire_bytes) * 8u * 1000000000000ull + rem_;
    rem_ = num % rate_bps_;
    return uint64_t(num / rate_bps_);
  }
  // Same time without touching the remainder (rounded up): for latency bookkeeping only.
  uint64_t peek_ps(uint64_t wire_bytes) const {
    return transfer_ps(wire_bytes, rate_bps_);
  }

 private:
  uint64_t rate_bps_;
  u128 rem_ = 0;
};

}  // namespace fabricsim
