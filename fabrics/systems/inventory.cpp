#include "fabrics/systems/inventory.h"

#include <algorithm>

namespace fabricsim {

namespace {

bool is_nic(const DeviceType& t) {
  return std::any_of(t.port_groups.begin(), t.port_groups.end(),
                     [](const PortGroup& g) { return g.role == "host"; });
}

}  // namespace

Inventory count_inventory(const SystemSpec& spec) {
  const topo::Graph& g = spec.graph;
  Inventory inv;
  for (size_t d = 0; d < g.devices.size(); ++d) {
    const DeviceType& t = spec.type_of(int(d));
    if (t.kind->circuits)
      ++inv.circuit_switches;
    else if (t.kind->forwards)
      ++(is_nic(t) ? inv.nics : inv.packet_switches);
  }
  for (const topo::Link& l : g.links) {
    const DeviceType& ta = spec.type_of(l.a.device);
    const DeviceType& tb = spec.type_of(l.b.device);
    const bool ocs_a = bool(ta.kind->circuits), ocs_b = bool(tb.kind->circuits);
    const std::string& medium = spec.link_types.at(l.type).medium;
    const bool optical = medium == "optical" || (medium == "auto" && (ocs_a || ocs_b));
    if (optical) {
      ++inv.optical_links;
      inv.transceivers += (ocs_a ? 0 : 1) + (ocs_b ? 0 : 1);
    } else {
      ++inv.electrical_links;
    }
    for (const DeviceType* t : {&ta, &tb}) {
      if (t->kind->circuits)
        ++inv.ocs_ports;
      else if (t->kind->forwards && !is_nic(*t))
        ++inv.switch_ports;
    }
  }
  return inv;
}

nlohmann::json inventory_json(const Inventory& inv) {
  return {{"packet_switches", inv.packet_switches},
          {"switch_ports", inv.switch_ports},
          {"nics", inv.nics},
          {"circuit_switches", inv.circuit_switches},
          {"ocs_ports", inv.ocs_ports},
          {"optical_links", inv.optical_links},
          {"electrical_links", inv.electrical_links},
          {"transceivers", inv.transceivers}};
}

}  // namespace fabricsim
