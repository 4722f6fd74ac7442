// What a built system is made of, counted for the cost proxy of `fabricsim compare`
// (docs/optical_vs_electrical.md, "Counting rules"). Plain C++ over the system graph.
#pragma once
#include <cstdint>

#include <nlohmann/json.hpp>

#include "fabrics/systems/system_spec.h"

namespace fabricsim {

struct Inventory {
  int64_t packet_switches = 0;   // forwarding devices that are not NICs (no "host" ports)
  int64_t switch_ports = 0;      // their ports that carry a link
  int64_t nics = 0;              // forwarding devices with "host" ports
  int64_t circuit_switches = 0;  // optical circuit switches
  int64_t ocs_ports = 0;         // their ports that carry a fibre (lit or dark)
  int64_t optical_links = 0;     // links whose medium is optical (auto: an end on an OCS)
  int64_t electrical_links = 0;  // every other link
  int64_t transceivers = 0;      // ends of optical links that are not OCS ports
};

// Counts `spec`'s graph: every link once; a port counts when a link is bound to it.
Inventory count_inventory(const SystemSpec& spec);

nlohmann::json inventory_json(const Inventory& inv);

}  // namespace fabricsim
