#include "models/nvlink/flit_framing.h"

#include <sstream>

#include "models/link/packet_link_layer.h"

namespace fabricsim {

std::string FlitFraming::describe() const {
  std::ostringstream os;
  os << "flits of " << p_.flit_bytes << " B, " << p_.overhead_flits
     << " overhead flit(s) per packet";
  return os.str();
}

std::unique_ptr<LinkLayer> FlitFraming::make_link_layer(const LinkParams& link, uint64_t seed,
                                                        const std::string& port_name) const {
  return std::make_unique<FramedLinkLayer<FlitFraming>>(*this, link, seed, port_name);
}

}  // namespace fabricsim
