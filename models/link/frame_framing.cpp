#include "models/link/frame_framing.h"

#include <sstream>

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

}  // namespace fabricsim
