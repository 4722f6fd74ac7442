#include "models/ualink/ualink_framing.h"

#include <sstream>

#include "models/ualink/stream_link_layer.h"

namespace fabricsim {

double UALinkFraming::efficiency(uint32_t payload, PacketKind pk) const {
  return double(payload) * dl_payload_bytes() /
         (double(tl_bytes(payload, pk)) * p_.fec_codeword_bytes);
}

uint64_t UALinkFraming::packet_wire_bytes(uint32_t payload, PacketKind pk) const {
  const uint64_t dlp = dl_payload_bytes();
  return (tl_bytes(payload, pk) * p_.fec_codeword_bytes + dlp - 1) / dlp;
}

std::string UALinkFraming::describe() const {
  std::ostringstream os;
  os << "UALink: " << p_.tl_request_bytes << " B request / " << p_.tl_response_bytes
     << " B response field + data in " << p_.tl_flit_bytes / 2 << " B half-flits, packed into "
     << p_.dl_flit_bytes << " B DL flits (" << dl_payload_bytes() << " B of TL stream each), one "
     << p_.fec_codeword_bytes << " B FEC codeword per DL flit";
  return os.str();
}

std::unique_ptr<LinkLayer> UALinkFraming::make_link_layer(const LinkParams& link, uint64_t seed,
                                                          const std::string& port_name) const {
  return std::make_unique<StreamLinkLayer>(*this, link, seed, port_name);
}

}  // namespace fabricsim
