#include "fabrics/topologies/hosts.h"

namespace fabricsim::topo {

std::vector<ParamSpec> host_params() {
  using K = ParamKind;
  return {param("endpoint_type", K::kString, "", "",
                "Host accelerator: an endpoint type with one port (to its NIC, or to the "
                "network when nic_type is none)."),
          param("nic_type", K::kString, "none", "",
                "NIC device type between each endpoint and the network (uec_nic, roce_nic); "
                "none: the endpoint's port links to its leaf (an InfiniBand-like credit NIC)."),
          param("host_link_type", K::kString, "none", "",
                "Link type endpoint - NIC (PCIe or a direct port); with a NIC.")};
}

HostSpec host_spec(const cfg::Params& p, Builder& b) {
  HostSpec h{p.str("endpoint_type"), p.str("nic_type"), p.str("host_link_type")};
  const DeviceType& et = b.device_type(p, "endpoint_type", false);
  if (et.ports != 1)
    p.fail("endpoint_type",
           "device type '" + h.endpoint_type + "' has " + std::to_string(et.ports) +
               " ports; a scale-out host here has one (to its NIC or its leaf)",
           "set its ports: 1 and nic_ports: 0");
  if (h.with_nic()) {
    const DeviceType& nt = b.device_type(p.node("nic_type"), "topology.nic_type", h.nic_type);
    if (nt.ports_with_role("host") < 1 || nt.ports_with_role("network") != 1)
      p.fail("nic_type", "device type '" + h.nic_type + "' is not a NIC",
             "name a uec_nic or roce_nic device type");
    if (h.host_link_type == "none")
      p.fail("host_link_type", "a host with a NIC needs host_link_type (endpoint - NIC)",
             "name a link type, e.g. a PCIe Gen5 x16 one");
    b.link_type(p, "host_link_type");
  }
  return h;
}

LinkEnd add_host(Builder& b, const HostSpec& h, int i, const LinkSite& site) {
  const YAML::Node& t = b.section();
  const int ep = b.add_device("h" + std::to_string(i), h.endpoint_type, t, "topology");
  if (!h.with_nic()) return {ep, 0};
  const int nic = b.add_device("nic" + std::to_string(i), h.nic_type, t, "topology");
  b.add_link({ep, 0}, {nic, 0}, h.host_link_type, site);
  const int net = b.graph().devices[size_t(nic)].ports - 1;  // the network port is the last
  return {nic, net};
}

}  // namespace fabricsim::topo
