#include "models/link/frame_framing.h"

#include "models/link/link_type.h"

#include <sstream>

#include "models/core/limits.h"
#include "models/link/packet_link_layer.h"

namespace fabricsim {

std::string FrameFraming::describe() const {
  std::ostringstream os;
  os << p_.header_bytes << " B header+FCS, min frame " << p_.min_frame_bytes << " B, "
     << p_.gap_bytes << " B preamble+gap per packet";
  return os.str();
}

std::unique_ptr<LinkLayer> FrameFraming::make_link_layer(const LinkParams& link, uint64_t seed,
                                                         const std::string& port_name) const {
  return std::make_unique<FramedLinkLayer<FrameFraming>>(*this, link, seed, port_name);
}

// The frame framing as a link framing: its keys in a link type.

FramingKind frame_framing() {
  using K = ParamKind;
  using F = FrameFramingParams;
  FramingKind f;
  f.name = "frame";
  f.params = param_block<F>(
      "frame",
      {bind(param("header_bytes", K::kBytes, "0B", "bytes",
                  "Per-packet header and trailer incl. FCS (framing: frame).", 0,
                  limits::kMaxFramingBytes),
            &F::header_bytes),
       bind(param("min_frame_bytes", K::kBytes, "0B", "bytes",
                  "Frames shorter than this are padded (framing: frame).", 0, 65536),
            &F::min_frame_bytes),
       bind(param("gap_bytes", K::kBytes, "0B", "bytes",
                  "Preamble + SFD + inter-frame gap per packet (framing: frame).", 0,
                  limits::kMaxFramingBytes),
            &F::gap_bytes)});
  f.apply = [](LinkParams& l, const std::any& p) {
    l.framing = std::make_shared<const FrameFraming>(std::any_cast<const F&>(p));
  };
  return f;
}

}  // namespace fabricsim
