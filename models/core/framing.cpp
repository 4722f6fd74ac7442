#include "models/core/framing.h"

#include <algorithm>
#include <sstream>

#include "models/core/packet.h"

namespace fabricsim {

uint64_t Framing::packet_wire_bytes(uint32_t payload) const {
  if (kind == Kind::kFlit) {
    if (payload == 0 && request_flits) return uint64_t(request_flits) * flit_bytes;
    uint64_t data_flits = (uint64_t(payload) + flit_bytes - 1) / flit_bytes;
    return (overhead_flits + data_flits) * flit_bytes;
  }
  uint64_t frame = std::max<uint64_t>(uint64_t(payload) + header_bytes, min_frame_bytes);
  return frame + gap_bytes;
}

uint64_t Framing::transaction_wire_bytes(const Packet& p) const {
  if (p.npackets <= 1) return packet_wire_bytes(p.payload_bytes);
  return uint64_t(p.npackets - 1) * packet_wire_bytes(p.packet_payload) +
         packet_wire_bytes(p.last_packet_payload());
}

std::string Framing::describe() const {
  std::ostringstream os;
  if (kind == Kind::kFlit)
    os << "flits of " << flit_bytes << " B, " << overhead_flits << " overhead flit(s) per packet";
  else
    os << header_bytes << " B header+FCS, min frame " << min_frame_bytes << " B, " << gap_bytes
       << " B preamble+gap per packet";
  return os.str();
}

}  // namespace fabricsim
