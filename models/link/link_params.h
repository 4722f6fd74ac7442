// Parameters of one link type. Plain C++ (no SystemC): the config layer builds them
// (declared in models/link/link_type.cpp, defaults there).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "models/link/link_layer.h"

namespace fabricsim {

// What becomes of a transaction cut by a link failure (docs/models.md, "Faults"), a
// property of the link's protocol (link_recovery() in link_type.h):
//   kLinkReplay  it is still in the transmitter's replay buffer: sent again on the same
//                link once it is up, or, if the link is still down when the failure is
//                detected, handed back to the transmitting device, which sends it on
//                another route (NVLink, UALink, PCIe: link-level retry; the failover is
//                an assumption of the model);
//   kEndToEnd    it is lost on the link; its source sends it again after the transport's
//                retransmission timeout (InfiniBand reliable connection);
//   kNone        it is lost; nothing sends it again (Ethernet without a reliable
//                transport, generic links): the run cannot finish and says so.
// Transactions lost inside a failed switch were acknowledged hop by hop: only kEndToEnd
// recovers them.
enum class LossRecovery : uint8_t { kLinkReplay, kEndToEnd, kNone };

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
  // Link-level retry (idle when ber == 0: no errors, no replay buffer, no acks).
  double ber = 0;                  // bit error rate per wire bit, each direction
  uint64_t replay_buffer_bytes = 0;  // unacknowledged wire bytes the sender keeps
  uint64_t ack_delay_ps = 0;       // receiver: tail of a good packet -> its ack is sent
  uint64_t retry_latency_ps = 0;   // bad packet's tail at the receiver -> NAK sent, plus
                                   // the sender's turnaround to start the replay
  LossRecovery recovery = LossRecovery::kNone;  // from the protocol (faults only)
};

}  // namespace fabricsim
