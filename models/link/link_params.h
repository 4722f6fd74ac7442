// Parameters of one link type. Plain C++ (no SystemC): the config layer builds them
// (declared in models/link/link_type.cpp, defaults there).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "models/link/link_layer.h"

namespace fabricsim {

// Parameters of one link type (both directions are alike).
struct LinkParams {
  std::string type_name;        // YAML link type name, for messages
  std::string protocol;         // "nvlink", "ethernet", ...: both ends must speak it
  uint64_t rate_bps = 0;        // per direction: lanes x lane rate x encoding efficiency
  std::shared_ptr<const Framing> framing;  // shared by every port of this link type
  uint32_t packet_payload = 0;  // payload bytes per packet the traffic uses
  uint64_t latency_ps = 0;      // propagation + PHY/FEC latency, one way
  uint32_t vcs = 0;             // virtual channels, each with its own credits
  uint64_t rx_buffer_bytes = 0; // receive buffer per VC, in wire bytes
  double energy_pj_per_bit = 0; // transmitter + receiver energy per wire bit, one direction
  // Link-level retry (idle when ber == 0: no errors, no replay buffer, no acks).
  double ber = 0;                  // bit error rate per wire bit, each direction
  uint64_t replay_buffer_bytes = 0;  // unacknowledged wire bytes the sender keeps
  uint64_t ack_delay_ps = 0;       // receiver: tail of a good packet -> its ack is sent
  uint64_t retry_latency_ps = 0;   // bad packet's tail at the receiver -> NAK sent, plus
                                   // the sender's turnaround to start the replay
};

}  // namespace fabricsim
