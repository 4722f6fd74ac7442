#include "models/nic/nic_kind.h"

#include "models/core/device_model.h"
#include "models/core/units.h"
#include "models/link/frame_framing.h"
#include "models/link/link_type.h"
#include "models/nic/nic.h"

namespace fabricsim {

namespace {

// Ethernet header (14 B) and FCS (4 B) around the L3 packet.
constexpr uint32_t kEthernetHeaderFcs = 18;

void resolve(NicParams& n, const ParamReader& r) {
  if (n.mtu_bytes <= n.l3_header_bytes)
    r.fail("mtu",
           "mtu " + format_bytes(n.mtu_bytes) + " leaves no payload after the " +
               format_bytes(n.l3_header_bytes) + " of L3 headers (l3_header_bytes)",
           "the MTU counts headers and payload: e.g. mtu: 4KiB (4032 B of payload) or 9KiB");
}

// The network link must frame what the NIC sends: its packet_payload is the NIC's MSS and
// a frame framing's header holds the L3 headers plus Ethernet's header and FCS.
void check(const DeviceCheck& c) {
  const NicParams& n = c.type().get<NicParams>();
  bool net_linked = false;
  for (size_t i = 0; i < c.links().size(); ++i) {
    const DeviceCheck::Attached& a = c.links()[i];
    if (a.port != n.host_ports) continue;
    net_linked = true;
    if (a.link.packet_payload != n.mss())
      c.fail_link(i,
                  "link type '" + a.link_type + "' has packet_payload " +
                      format_bytes(a.link.packet_payload) + " but " + c.device() +
                      " sends packets of mtu - l3_header_bytes = " + format_bytes(n.mss()),
                  "set link_types." + a.link_type + ".packet_payload: " +
                      std::to_string(n.mss()) + "B (or change the NIC's mtu)");
    const uint64_t need = credit_free_rx_buffer(a.link, n.pipeline_latency_ps);
    if (a.link.rx_buffer_bytes < need)
      c.fail_link(i,
                  "link type '" + a.link_type + "' has rx_buffer " +
                      format_bytes(a.link.rx_buffer_bytes) + ", less than its credit round trip "
                      "into " + c.device() + " (2 x latency + pipeline_latency at the link rate, "
                      "plus two packets: " + format_bytes(need) + "); Ethernet has no link "
                      "credits, the port's must never stop the sender",
                  "raise link_types." + a.link_type + ".rx_buffer to at least " + format_bytes(need));
    const auto* f = dynamic_cast<const FrameFraming*>(a.link.framing.get());
    if (f && f->params().header_bytes < n.l3_header_bytes + kEthernetHeaderFcs)
      c.fail_link(i,
                  "link type '" + a.link_type + "' frames packets with header_bytes " +
                      format_bytes(f->params().header_bytes) + ", less than " + c.device() +
                      "'s l3_header_bytes " + format_bytes(n.l3_header_bytes) +
                      " + 18 B of Ethernet header and FCS",
                  "set header_bytes to at least " +
                      std::to_string(n.l3_header_bytes + kEthernetHeaderFcs) + "B");
  }
  if (!net_linked)
    c.fail_param("host_ports",
                 c.device() + "'s network port (port[" + std::to_string(n.host_ports) +
                     "]) is not linked",
                 "link it to a switch; ports 0.." + std::to_string(n.host_ports - 1) +
                     " face the accelerators");
}

}  // namespace

ParamBlock nic_params_block(const std::string& rto_default, const std::string& tc_default) {
  using K = ParamKind;
  using N = NicParams;
  return param_block<N>(
      "nic",
      {bind(param("host_ports", K::kInt, "1", "ports",
                  "Ports to accelerators (port[0] ..); the network port follows them.", 1, 64),
            &N::host_ports),
       bind(choice("host_protocol", link_protocols(), "pcie",
                   "Protocol of the host ports (the GPU's NIC port: PCIe, or a direct port)."),
            &N::host_protocol),
       bind(choice("protocol", link_protocols(), "ethernet", "Protocol of the network port."),
            &N::protocol),
       bind(param("mtu", K::kBytes, "4KiB", "bytes (L3)",
                  "Largest packet the NIC sends, headers included (IP MTU): 4 KiB as RoCE "
                  "uses, 9 KiB for jumbo frames. The network link's packet_payload must be "
                  "mtu - l3_header_bytes.",
                  64, 65536),
            &N::mtu_bytes),
       bind(param("l3_header_bytes", K::kBytes, "64B", "bytes",
                  "IP + UDP + transport headers inside the MTU. ASSUMPTION: 64 B (IPv4 20 + "
                  "UDP 8 + 36 B of transport header), htsim's UEC header.",
                  1, 4096),
            &N::l3_header_bytes),
       bind(param("pipeline_latency", K::kTime, "200ns", "ns",
                  "NIC pipeline, added to every packet arriving from a host or the network. "
                  "ASSUMPTION: 200 ns.",
                  0),
            &N::pipeline_latency_ps),
       bind(param("send_buffer", K::kBytes, "256KiB", "bytes (payload)",
                  "Payload the NIC takes from its hosts before sending it once; when full the "
                  "host link's credits stop the GPU.",
                  1),
            &N::send_buffer_bytes),
       bind(param("traffic_class", K::kInt, tc_default, "",
                  "Traffic class (PFC priority) of its data packets; control packets use the "
                  "switches' control queue. Switches with PFC on this class (pfc_classes) "
                  "carry it lossless.",
                  0, 7),
            &N::traffic_class),
       bind(param("rto", K::kTime, rto_default, "us",
                  "Retransmission timeout of an unacknowledged packet (fixed).", 1),
            &N::rto_ps),
       bind(param("ack_bytes", K::kBytes, "16KiB", "bytes",
                  "The receiver acknowledges at least every this many bytes (sooner on ECN "
                  "marks, gaps, duplicates and a message's last packet), as htsim's UEC sink.",
                  1),
            &N::ack_bytes)},
      resolve);
}

DeviceKind nic_device_kind(std::string name, std::string summary, ParamBlock transport_block,
                           TransportFactory make, const std::string& rto_default,
                           const std::string& tc_default) {
  DeviceKind k;
  k.name = std::move(name);
  k.summary = std::move(summary);
  k.forwards = true;
  k.params = {nic_params_block(rto_default, tc_default), std::move(transport_block),
              power_params()};
  k.power = power_from_block;
  k.ports = [](const DeviceType& t) {
    const NicParams& n = t.get<NicParams>();
    return std::vector<PortGroup>{{"host", n.host_ports, n.host_protocol},
                                  {"network", 1, n.protocol}};
  };
  k.check = check;
  k.create = [make](const DeviceBuild& b) -> std::unique_ptr<DeviceModel> {
    NicParams n = b.type.get<NicParams>();
    n.seed = b.run.seed;
    const std::any tp = b.type.params.at(1);
    return std::make_unique<Nic>(b.name.c_str(), b.name, n, b.used_ports,
                                 [make, tp](NicServices& s) { return make(tp, s); });
  };
  return k;
}

}  // namespace fabricsim
