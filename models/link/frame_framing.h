// Frame framing, Ethernet-style: each packet is a frame of header + FCS around its payload,
// padded to a minimum frame, with preamble + inter-frame gap between frames (PCIe TLPs and
// InfiniBand packets fit it too). Plain C++.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "models/link/link_layer.h"

namespace fabricsim {

// Declared in frame_framing.cpp (frame_framing(); defaults there).
struct FrameFramingParams {
  uint32_t header_bytes = 0;    // per-packet header + trailer bytes (incl. FCS)
  uint32_t min_frame_bytes = 0; // frames shorter than this are padded
  uint32_t gap_bytes = 0;       // preamble + SFD + inter-frame gap
};

class FrameFraming final : public Framing {
 public:
  explicit FrameFraming(const FrameFramingParams& p) : p_(p) {}
  const FrameFramingParams& params() const { return p_; }

  uint64_t packet_wire_bytes(uint32_t payload, PacketKind = PacketKind::kData) const override {
    const uint64_t frame =
        std::max<uint64_t>(uint64_t(payload) + p_.header_bytes, p_.min_frame_bytes);
    return frame + p_.gap_bytes;
  }
  std::string describe() const override;
  bool plain(PlainFraming* out) const override {
    out->unit_mask = 0;
    out->fixed = p_.header_bytes;
    out->min = p_.min_frame_bytes;
    out->gap = p_.gap_bytes;
    out->empty = 0;
    return true;
  }
  std::unique_ptr<LinkLayer> make_link_layer(const LinkParams& link, uint64_t seed,
                                             const std::string& port_name) const override;

 private:
  FrameFramingParams p_;
};

}  // namespace fabricsim
