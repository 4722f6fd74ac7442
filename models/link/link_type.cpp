#include "models/link/link_type.h"

#include <algorithm>
#include <cmath>

#include "models/core/limits.h"
#include "models/core/types.h"
#include "models/core/units.h"

namespace fabricsim {

const std::vector<std::string>& link_protocols() {
  static const std::vector<std::string> names{"nvlink",     "ualink", "ethernet",
                                              "infiniband", "pcie",   "generic"};
  return names;
}

Registry<FramingKind>& framings() {
  static Registry<FramingKind> r("link framing");
  return r;
}

namespace {

// The link's keys up to `framing`, which the framing's own keys follow.
constexpr size_t kHeadKeys = 5;

}  // namespace

const ParamBlock& link_params() {
  using K = ParamKind;
  using L = LinkParams;
  static const ParamBlock block = param_block<L>(
      "link",
      {bind(choice("protocol", link_protocols(), "",
                   "Protocol the link carries; both ends' devices must speak it."),
            &L::protocol),
       param("lanes", K::kInt, "", "lanes", "Lanes per direction.", 1, 64),
       param("lane_rate", K::kBandwidth, "", "Gb/s (per lane, per direction)",
             "Data rate of one lane after line coding.", limits::kMinLaneRateBps,
             limits::kMaxLaneRateBps),
       param("encoding_efficiency", K::kReal, "1.0", "ratio",
             "Line-code efficiency applied to lanes x lane_rate, as a decimal (e.g. 0.984615 "
             "for PCIe Gen5's 128b/130b).",
             0.01, 1.0),
       choice("framing", {}, "flit",
              "flit: whole flits, with overhead flits per packet (NVLink). frame: header+FCS, "
              "minimum frame, preamble and gap (Ethernet). ualink: UALink 1.0 stream: a TL "
              "field + data half-flits per packet, packed back to back into DL flits, each "
              "sent as one FEC codeword (set lane_rate to the signalling rate, 212.5Gb/s: the "
              "codeword bytes already count the FEC)."),
       bind(param("packet_payload", K::kBytes, "", "bytes",
                  "Payload bytes per packet that the traffic uses (e.g. 128B for SM-issued "
                  "NVLink stores, 256B for copy engines).",
                  1, 65536),
            &L::packet_payload),
       bind(param("latency", K::kTime, "", "ns (one way)",
                  "Propagation + PHY/FEC latency of one direction.", 0, limits::kMaxLatencyPs),
            &L::latency_ps),
       bind(param("vcs", K::kInt, "1", "", "Virtual channels, each with its own credits.", 1, 16),
            &L::vcs),
       bind(param("rx_buffer", K::kBytes, "", "bytes (per VC, counted in wire bytes)",
                  "Receive buffer per virtual channel at each end; credits = its size.", 1,
                  limits::kMaxBufferBytes),
            &L::rx_buffer_bytes),
       bind(param("aggregate", K::kBool, "true", "",
                  "Whether an aggregated run (simulation.aggregate_bytes > 0) may send "
                  "transactions of several packets on this link type. false: one packet each, "
                  "as per packet, for links whose packets are already large (an InfiniBand "
                  "MTU of 4 KiB), where aggregation saves few hops and whole transactions "
                  "taking round-robin turns run ahead of per packet (docs/fidelity.md, "
                  "\"16 x DGX H100 at 1 MiB\")."),
            &L::aggregate),
       bind(param("energy_per_bit", K::kReal, "0", "pJ/bit",
                  "Energy per wire bit sent, one direction, both ends' PHYs together (SerDes "
                  "and retimers for copper, the transceiver pair for optics); the energy of a "
                  "row counts every port's wire bits at its link's value (docs/optical.md, "
                  "\"Energy\"). 0: not modelled.",
                  0.0, 1000.0),
            &L::energy_pj_per_bit),
       bind(param("ber", K::kReal, "0", "errors per wire bit",
                  "Bit error rate of each direction, after FEC. > 0 turns on link-level "
                  "retry: CRC errors drawn per wire bit, NAK and go-back-N replay from the "
                  "replay buffer; the unit that is NAKed and replayed is the packet, or on "
                  "framing: ualink the FEC codeword (one DL flit). 0: an ideal link, the "
                  "retry machinery idle.",
                  0.0, 1e-3),
            &L::ber),
       bind(param("replay_buffer", K::kBytes, "64KiB", "bytes (wire bytes, per direction)",
                  "Sender's replay buffer: wire bytes kept until acknowledged. A transaction "
                  "starts only when it fits. Used only when ber > 0, and then it must hold one "
                  "transaction + the bytes of an ack round trip (rate x (2 x latency + "
                  "ack_delay), + one codeword on framing: ualink).",
                  1, limits::kMaxBufferBytes),
            &L::replay_buffer_bytes),
       bind(param("ack_delay", K::kTime, "20ns", "ns",
                  "Receiver's ack coalescing: a good packet is acknowledged this long after "
                  "its tail arrives (PCIe's AckNak latency timer). Sets when the replay buffer "
                  "frees. Used only when ber > 0.",
                  0, limits::kMaxLatencyPs),
            &L::ack_delay_ps),
       bind(param("retry_latency", K::kTime, "30ns", "ns",
                  "NAK turnaround: from a bad packet's tail at the receiver to the NAK "
                  "leaving, plus the sender's time to start the replay. A replay starts 2 x "
                  "latency + retry_latency after the bad packet's tail left the sender. Used "
                  "only when ber > 0.",
                  0, limits::kMaxLatencyPs),
            &L::retry_latency_ps),
       bind(choice("medium", {"auto", "copper", "optical"}, "auto",
                   "What the link is made of, for the cost proxy of `fabricsim compare` "
                   "(docs/optical_vs_electrical.md): optical links need a transceiver at each "
                   "end that is not an optical circuit switch, copper ones none. auto: optical "
                   "when one end is an optical circuit switch's port (light does not convert), "
                   "copper otherwise. Timing and energy do not depend on it (energy_per_bit "
                   "does that)."),
            &L::medium)},
      [](L& l, const ParamReader& r) {
        const long double rate = (long double)r.integer("lanes") * r.bandwidth_bps("lane_rate") *
                                 r.real("encoding_efficiency");
        l.rate_bps = uint64_t(std::llround(rate));
        l.recovery = link_recovery(l.protocol);
      });
  return block;
}

std::vector<ParamSpec> link_type_specs() {
  const std::vector<ParamSpec>& own = link_params().specs;
  std::vector<ParamSpec> out(own.begin(), own.begin() + kHeadKeys);
  out.back().choices = framings().names();  // `framing`: every registered framing
  for (const FramingKind& f : framings().entries())
    out.insert(out.end(), f.params.specs.begin(), f.params.specs.end());
  out.insert(out.end(), own.begin() + kHeadKeys, own.end());
  return out;
}

LossRecovery link_recovery(const std::string& protocol) {
  if (protocol == "nvlink" || protocol == "ualink" || protocol == "pcie")
    return LossRecovery::kLinkReplay;
  if (protocol == "infiniband") return LossRecovery::kEndToEnd;
  if (protocol == "ethernet") return LossRecovery::kTransport;
  return LossRecovery::kNone;  // generic
}

const char* recovery_name(LossRecovery r) {
  switch (r) {
    case LossRecovery::kLinkReplay: return "link-level replay";
    case LossRecovery::kEndToEnd: return "end-to-end retransmission";
    case LossRecovery::kTransport: return "the NIC transport's retransmission";
    case LossRecovery::kNone: break;
  }
  return "no retransmission";
}

uint64_t credit_free_rx_buffer(const LinkParams& l, uint64_t receiver_pipeline_ps) {
  const u128 loop_ps = u128(2) * l.latency_ps + receiver_pipeline_ps;
  const uint64_t bytes = uint64_t((loop_ps * l.rate_bps + 8000000000000ull - 1) / 8000000000000ull);
  return bytes + 2 * l.framing->packet_wire_bytes(l.packet_payload);
}

void check_link(const LinkParams& l, const ParamReader& r) {
  const uint64_t pkt_wire = l.framing->packet_wire_bytes(l.packet_payload);
  if (l.rx_buffer_bytes < pkt_wire)
    r.fail("rx_buffer",
           "rx_buffer " + format_bytes(l.rx_buffer_bytes) + " is smaller than one packet (" +
               format_bytes(l.packet_payload) + " payload = " + format_bytes(pkt_wire) +
               " on the wire)",
           "raise rx_buffer to at least " + format_bytes(pkt_wire));
}

// A transaction starts only when its sender holds credits for all of its wire bytes, and
// they come back a latency after its tail has arrived. Per packet, the line runs at its
// rate when the receive buffer holds the credit loop (2 x latency at the line rate) and two
// packets; aggregated, it needs the loop and two whole transactions. Larger transactions
// would make the receive buffer, not the line, set the rate: an artefact of aggregation,
// measured on the 2-node rail cluster (a 64 KiB PCIe buffer behind a 300 ns link: 16 KiB
// transactions 4.6% slower than per packet, 32 KiB ones 2x). So a port's transactions
// take at most that many whole packets (at least one); the loop is covered exactly as
// per packet (docs/architecture.md, "Aggregation").
uint64_t aggregate_txn_packets(const LinkParams& l, uint64_t aggregate_bytes) {
  const uint64_t whole = aggregate_bytes / l.packet_payload;
  if (whole <= 1 || !l.aggregate) return 1;
  const uint64_t wire = l.framing->packet_wire_bytes(l.packet_payload);
  const double loop_bytes = double(l.rate_bps) / 8.0 * 2.0 * double(l.latency_ps) * 1e-12;
  const double room = double(l.rx_buffer_bytes) - std::ceil(loop_bytes);
  const uint64_t fit = room > 0 ? uint64_t(room) / (2 * wire) : 0;
  return std::max<uint64_t>(1, std::min(whole, fit));
}

}  // namespace fabricsim
