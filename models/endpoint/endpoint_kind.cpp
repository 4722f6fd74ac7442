// The accelerator's fabric interface as a device kind: a terminal device (a rank) with
// fabric ports and optional scale-out NIC ports.
#include <map>

#include "models/core/device_kind.h"
#include "models/core/limits.h"
#include "models/endpoint/endpoint.h"
#include "models/link/link_type.h"

namespace fabricsim {

DeviceKind endpoint_kind() {
  using K = ParamKind;
  using E = EndpointParams;
  DeviceKind k;
  k.name = "endpoint";
  k.summary =
      "An accelerator's fabric interface: DMA engine striping over ports, reassembly, "
      "reduction engine (in `device_types:`).";
  k.terminal = true;
  k.params.push_back(param_block<E>(
      "endpoint",
      {bind(choice("protocol", link_protocols(), "", "Protocol of its ports."), &E::protocol),
       bind(param("ports", K::kInt, "", "ports", "Fabric ports; every one must be linked.", 1,
                  4096),
            &E::ports),
       bind(param("memory_bandwidth", K::kBandwidth, "", "GB/s",
                  "Local memory bandwidth; a reduction of B bytes moves 3B (two reads, one "
                  "write).",
                  limits::kMinDeviceBandwidthBps, limits::kMaxDeviceBandwidthBps),
            &E::memory_bandwidth_bps),
       bind(param("read_turnaround", K::kTime, "0ns", "ns",
                  "Read target: from a read request's arrival to its response data being "
                  "handed to the DMA (memory access latency).",
                  0, limits::kMaxLatencyPs),
            &E::read_turnaround_ps),
       bind(param("nic_ports", K::kInt, "0", "ports",
                  "Scale-out NIC ports (one NIC per GPU: 1), numbered after the fabric ports "
                  "(port[ports] .. port[ports + nic_ports - 1]); they speak nic_protocol. The "
                  "DMA uses whichever ports reach a destination: in multi_node systems NVLink "
                  "inside the node, the NIC across nodes.",
                  0, 64),
            &E::nic_ports),
       bind(choice("nic_protocol", link_protocols(), "infiniband", "Protocol of the NIC ports."),
            &E::nic_protocol)},
      [](E& e, const ParamReader&) { e.memory_bandwidth_Bps = e.memory_bandwidth_bps / 8; }));
  k.ports = [](const DeviceType& t) {
    const E& e = t.get<E>();
    return std::vector<PortGroup>{{"fabric", e.ports, e.protocol},
                                  {"NIC", e.nic_ports, e.nic_protocol}};
  };
  // Its DMA cuts one packet size per protocol: every link of one protocol (its fabric
  // ports, its NIC ports) must agree on packet_payload.
  k.check = [](const DeviceCheck& c) {
    std::map<std::string, uint32_t> payload;
    for (size_t i = 0; i < c.links().size(); ++i) {
      const DeviceCheck::Attached& a = c.links()[i];
      const std::string& proto = c.type().port_protocol(a.port);
      const uint32_t x = a.link.packet_payload;
      const auto it = payload.find(proto);
      if (it != payload.end() && it->second != x)
        c.fail_link(i,
                    c.device() + " has links with different packet_payload (" +
                        std::to_string(it->second) + " B and " + std::to_string(x) +
                        " B) on its " + proto + " ports",
                    "an endpoint's DMA cuts one packet size per protocol: use link types that "
                    "agree");
      payload[proto] = x;
    }
  };
  k.create = [](const DeviceBuild& b) -> std::unique_ptr<DeviceModel> {
    E e = b.type.get<E>();
    e.aggregate_bytes = b.run.aggregate_bytes;
    e.aggregate_min_message = b.run.aggregate_min_message;
    e.seed = b.run.seed;
    return std::make_unique<Endpoint>(b.name.c_str(), b.name, uint32_t(b.endpoint_id), e);
  };
  return k;
}

}  // namespace fabricsim
