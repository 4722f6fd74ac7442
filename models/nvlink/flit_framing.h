// NVLink-style flit framing: a packet is whole flits, its payload in data flits plus
// header (with the CRC) and address/byte-enable flits (docs/models.md, "NVLink framing: an
// assumption"). Plain C++.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "models/link/link_layer.h"

namespace fabricsim {

// Declared in flit_framing.cpp (flit_framing(); defaults there).
struct FlitFramingParams {
  uint32_t flit_bytes = 0;      // bytes per flit
  uint32_t overhead_flits = 0;  // non-data flits per packet (header incl. CRC, ...)
  uint32_t request_flits = 0;   // flits of a header-only packet (a read request, no
                                // payload); 0 = overhead_flits
};

class FlitFraming final : public Framing {
 public:
  explicit FlitFraming(const FlitFramingParams& p) : p_(p) {}
  const FlitFramingParams& params() const { return p_; }

  uint64_t packet_wire_bytes(uint32_t payload, PacketKind = PacketKind::kData) const override {
    if (payload == 0 && p_.request_flits) return uint64_t(p_.request_flits) * p_.flit_bytes;
    uint64_t data_flits = (uint64_t(payload) + p_.flit_bytes - 1) / p_.flit_bytes;
    return (p_.overhead_flits + data_flits) * p_.flit_bytes;
  }
  std::string describe() const override;
  // Plain when a flit is a power of two bytes (16 B as shipped).
  bool plain(PlainFraming* out) const override {
    if (p_.flit_bytes == 0 || (p_.flit_bytes & (p_.flit_bytes - 1))) return false;
    out->unit_mask = p_.flit_bytes - 1;
    out->fixed = p_.overhead_flits * p_.flit_bytes;
    out->min = out->gap = 0;
    out->empty = p_.request_flits * p_.flit_bytes;
    return true;
  }
  std::unique_ptr<LinkLayer> make_link_layer(const LinkParams& link, uint64_t seed,
                                             const std::string& port_name) const override;

 private:
  FlitFramingParams p_;
};

}  // namespace fabricsim
