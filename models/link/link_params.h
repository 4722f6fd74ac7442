// Parameters of one link type. Plain C++ (no SystemC): the config layer builds them
// (declared in models/link/link_type.cpp, defaults there).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "models/link/link_layer.h"

namespace fabricsim {

// What becomes of a transaction cut by a link failure (docs/faults.md, "What the fabric does"), a
// property of the link's protocol (link_recovery() in link_type.h):
//   kLinkReplay  it is still in the transmitter's replay buffer: sent again on the same
//                link once it is up, or, if the link is still down when the failure is
//                detected, handed back to the transmitting device, which sends it on
//                another route (NVLink, UALink, PCIe: link-level retry; the failover is
//                an assumption of the model);
//   kEndToEnd    it is lost on the link; its source sends it again after the transport's
//                retransmission timeout (InfiniBand reliable connection);
//   kTransport   it is dropped in the network, like a packet a switch drops: the NIC
//                transport that sent it (Ultra Ethernet, RoCE: models/nic/) finds the
//                loss and sends it again; it counts in the packet ledger as a drop
//                (Ethernet; without NICs on the path it is kNone);
//   kNone        it is lost; nothing sends it again (generic links): the run cannot
//                finish and says so.
// Transactions lost inside a failed switch were acknowledged hop by hop: only kEndToEnd
// and kTransport recover them (after_device_failure).
enum class LossRecovery : uint8_t { kLinkReplay, kEndToEnd, kTransport, kNone };

// What recovers a transaction a failed device held, on links of recovery `r`.
inline LossRecovery after_device_failure(LossRecovery r) {
  return r == LossRecovery::kEndToEnd || r == LossRecovery::kTransport ? r : LossRecovery::kNone;
}

// Why a fault lost a transaction (for reports and the packet ledger's drop reasons).
enum class LossCause : uint8_t { kLinkDown, kDeviceDown, kNoRoute };
inline const char* loss_cause_name(LossCause c) {
  switch (c) {
    case LossCause::kLinkDown: return "link_down";
    case LossCause::kDeviceDown: return "switch_down";
    case LossCause::kNoRoute: return "no_route";
  }
  return "";
}

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
  // false: transactions on this link type are single packets even when the run aggregates
  // (simulation.aggregate_bytes > 0): links whose packets are large (an InfiniBand MTU
  // carries 32 NVLink packets' payload) gain little from aggregation, and whole
  // transactions there take round-robin turns that per packet interleave.
  bool aggregate = true;
  double energy_pj_per_bit = 0; // transmitter + receiver energy per wire bit, one direction
  // "copper", "optical" or "auto" (optical when a port of an optical circuit switch ends
  // it, copper otherwise): what the cost proxy of `fabricsim compare` counts as needing
  // transceivers (fabrics/systems/inventory.h). The timing does not depend on it.
  std::string medium = "auto";
  // Link-level retry (idle when ber == 0: no errors, no replay buffer, no acks).
  double ber = 0;                  // bit error rate per wire bit, each direction
  uint64_t replay_buffer_bytes = 0;  // unacknowledged wire bytes the sender keeps
  uint64_t ack_delay_ps = 0;       // receiver: tail of a good packet -> its ack is sent
  uint64_t retry_latency_ps = 0;   // bad packet's tail at the receiver -> NAK sent, plus
                                   // the sender's turnaround to start the replay
  LossRecovery recovery = LossRecovery::kNone;  // from the protocol (faults only)
};

// Packets per aggregated transaction on a link of type `l` (at least one): as many as
// `aggregate_bytes` holds, but no more than lets the receive buffer cover the credit loop
// with two transactions, so that aggregation never makes the buffer, not the line, set the
// rate (docs/architecture.md, "Aggregation"). One on a link type with `aggregate: false`.
// Endpoints cut their transactions with it; the resource estimate counts transactions in
// flight with it.
uint64_t aggregate_txn_packets(const LinkParams& l, uint64_t aggregate_bytes);

}  // namespace fabricsim
