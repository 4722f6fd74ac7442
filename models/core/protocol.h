// The fabric's TLM-2.0 protocol: our own payload type (Packet) and phases, so a fabric
// port cannot be bound to a memory-mapped (generic payload) socket by mistake.
#pragma once
#include <tlm>

#include "models/core/packet.h"

namespace fabricsim {

// Credits travel on the backward path with this phase (see models/link/port.h).
DECLARE_EXTENDED_PHASE(CREDIT_RETURN);

struct fabric_protocol_types {
  typedef Packet tlm_payload_type;
  typedef tlm::tlm_phase tlm_phase_type;
};

}  // namespace fabricsim
