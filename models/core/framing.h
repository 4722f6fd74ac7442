// Byte-exact wire time: protocol framing (payload bytes -> wire bytes) and serialisation
// in integer picoseconds with the remainder carried, so long runs at rates that do not
// divide 1 ps (e.g. 200 Gb/s -> 40 ps/byte exactly, 212.5 Gb/s -> not) never drift.
#pragma once
#include <cstdint>
#include <string>

#include "models/core/types.h"

namespace fabricsim {

class Packet;

struct Framing {
  enum class Kind : uint8_t {
    kFlit,   // NVLink-style: whole flits; header/CRC and byte-enable flits per packet
    kFrame,  // Ethernet-style: header + FCS, minimum frame, preamble + inter-frame gap
  };
  Kind kind = Kind::kFlit;
  uint32_t flit_bytes = 16;     // kFlit: bytes per flit
  uint32_t overhead_flits = 1;  // kFlit: non-data flits per packet (header incl. CRC, ...)
  uint32_t request_flits = 0;   // kFlit: flits of a header-only packet (a read request,
                                // no payload); 0 = overhead_flits
  uint32_t header_bytes = 0;    // kFrame: per-packet header + trailer bytes (incl. FCS)
  uint32_t min_frame_bytes = 0; // kFrame: frames shorter than this are padded
  uint32_t gap_bytes = 0;       // kFrame: preamble + SFD + inter-frame gap

  // Wire bytes of one packet carrying `payload` bytes.
  uint64_t packet_wire_bytes(uint32_t payload) const;
  // Wire bytes of a transaction: every packet framed separately.
  uint64_t transaction_wire_bytes(const Packet& p) const;
  // Payload / wire for back-to-back packets of `payload` bytes: the protocol efficiency.
  double efficiency(uint32_t payload) const {
    return double(payload) / double(packet_wire_bytes(payload));
  }
  std::string describe() const;
};

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
