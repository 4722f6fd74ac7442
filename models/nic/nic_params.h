// Parameters every scale-out NIC kind shares (declared in models/nic/nic_kind.cpp, defaults
// there); each transport adds its own block (models/uec/, models/roce/).
#pragma once
#include <cstdint>
#include <string>

namespace fabricsim {

struct NicParams {
  int host_ports = 0;              // ports 0 .. host_ports - 1: to accelerators
  std::string host_protocol;       // protocol of the host ports
  std::string protocol;            // of the network port (port host_ports)
  uint64_t mtu_bytes = 0;          // L3 MTU: headers + payload of one packet
  uint32_t l3_header_bytes = 0;    // IP + UDP + transport headers inside the MTU
  uint64_t pipeline_latency_ps = 0;  // added to every arrival (host or network side)
  uint64_t send_buffer_bytes = 0;  // payload taken from the hosts, not yet sent once
  int traffic_class = 0;           // Packet::tc of its data (PFC priority)
  uint64_t rto_ps = 0;             // retransmission timeout
  uint64_t ack_bytes = 0;          // receiver: acknowledge at least every this many bytes
  // Run settings (set by the kind when it builds the model, not YAML keys).
  uint64_t seed = 1;

  uint32_t mss() const { return uint32_t(mtu_bytes - l3_header_bytes); }
};

}  // namespace fabricsim
