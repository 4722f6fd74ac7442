// The cost proxy of `fabricsim compare` (fabrics/systems/inventory.h) counted by hand on
// small systems, and the circuits of the rack_spine topology's optical spine.
#include <map>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "fabrics/systems/inventory.h"
#include "fabrics/systems/system_spec.h"

namespace fabricsim {
namespace {

std::string source(const std::string& rel) { return std::string(FABRICSIM_SOURCE_DIR) + "/" + rel; }

SystemSpec spine(const std::string& spine_type, int racks, int per_rack, int uplinks) {
  return load_system(source("configs/rack_spine_ocs.yaml"),
                     {"topology.spine_type=" + spine_type, "topology.racks=" + std::to_string(racks),
                      "topology.endpoints_per_rack=" + std::to_string(per_rack),
                      "topology.uplinks=" + std::to_string(uplinks)},
                     std::nullopt);
}

// 2 racks x 2 GPUs, one uplink per leaf. By hand: 4 copper GPU-leaf links; 2 fibres
// leaf-spine. OCS spine: 2 leaves with 3 used ports each = 6 switch ports; the OCS's 2 ports
// need no transceiver, the leaves' 2 fibre ends do: 2 transceivers for one leaf-to-leaf
// circuit. Electrical spine: 3 switches, 6 + 2 = 8 ports; both ends of both fibres: 4.
TEST(Inventory, RackSpineCountedByHand) {
  const Inventory o = count_inventory(spine("ocs", 2, 2, 1));
  EXPECT_EQ(o.packet_switches, 2);
  EXPECT_EQ(o.switch_ports, 6);
  EXPECT_EQ(o.nics, 0);
  EXPECT_EQ(o.circuit_switches, 1);
  EXPECT_EQ(o.ocs_ports, 2);
  EXPECT_EQ(o.optical_links, 2);
  EXPECT_EQ(o.electrical_links, 4);
  EXPECT_EQ(o.transceivers, 2);
  const Inventory e = count_inventory(spine("spine_switch", 2, 2, 1));
  EXPECT_EQ(e.packet_switches, 3);
  EXPECT_EQ(e.switch_ports, 8);
  EXPECT_EQ(e.circuit_switches, 0);
  EXPECT_EQ(e.ocs_ports, 0);
  EXPECT_EQ(e.optical_links, 2);
  EXPECT_EQ(e.electrical_links, 4);
  EXPECT_EQ(e.transceivers, 4);
}

// The shipped comparison's size (4 racks x 6 GPUs, 6 uplinks): 24 fibres either way; the
// OCS spine halves the transceivers (24 vs 48) and has no spine switch ports (48 vs 72).
TEST(Inventory, ShippedOcsSpineHalvesTheTransceivers) {
  const Inventory o = count_inventory(spine("ocs", 4, 6, 6));
  const Inventory e = count_inventory(spine("spine_switch", 4, 6, 6));
  EXPECT_EQ(o.switch_ports, 4 * 12);
  EXPECT_EQ(e.switch_ports, 4 * 12 + 6 * 4);
  EXPECT_EQ(o.ocs_ports, 6 * 4);
  EXPECT_EQ(o.transceivers, 24);
  EXPECT_EQ(e.transceivers, 48);
}

// medium: auto counts a fibre to an OCS as optical (ocs_pair: 2 fibres, 2 transceivers, no
// switch port) and every other link as copper (ib_leaf_spine: 8 links, no transceiver, 12
// switch ports: 2 GPUs + 2 uplinks on each leaf, 2 leaves on each spine).
TEST(Inventory, AutoMediumIsOpticalOnlyAtAnOcs) {
  const Inventory p = count_inventory(load_system(source("configs/ocs_pair.yaml"), {}, std::nullopt));
  EXPECT_EQ(p.optical_links, 2);
  EXPECT_EQ(p.transceivers, 2);
  EXPECT_EQ(p.switch_ports, 0);
  EXPECT_EQ(p.ocs_ports, 2);
  const Inventory ib =
      count_inventory(load_system(source("configs/ib_leaf_spine.yaml"), {}, std::nullopt));
  EXPECT_EQ(ib.optical_links, 0);
  EXPECT_EQ(ib.electrical_links, 8);
  EXPECT_EQ(ib.transceivers, 0);
  EXPECT_EQ(ib.packet_switches, 4);
  EXPECT_EQ(ib.switch_ports, 4 + 4 + 4);  // leaves: 2 GPUs + 2 uplinks each; spines: 2 each
  // Declared optical, the same links need a transceiver at both ends.
  const Inventory ibo = count_inventory(
      load_system(source("configs/ib_leaf_spine.yaml"), {"link_types.ndr.medium=optical"},
                  std::nullopt));
  EXPECT_EQ(ibo.optical_links, 8);
  EXPECT_EQ(ibo.transceivers, 16);
}

// circuits: mesh joins every pair of racks by uplinks / (racks - 1) circuits; ring joins
// neighbouring racks by uplinks / 2 and no other pair.
TEST(RackSpine, MeshAndRingCircuitsJoinTheLeavesDirectly) {
  for (const std::string pattern : {"mesh", "ring"}) {
    const SystemSpec s = load_system(source("configs/rack_spine_ocs.yaml"),
                                     {"topology.circuits=" + pattern}, std::nullopt);
    std::map<std::pair<int, int>, int> circuits;  // (leaf a, leaf b) -> circuits a -> b
    for (int r = 0; r < 4; ++r)
      for (int u = 0; u < 6; ++u) {
        const topo::LinkEnd e = s.graph.peer(s.graph.by_name.at("leaf" + std::to_string(r)), 6 + u);
        ASSERT_GE(e.device, 0) << pattern << " leaf" << r << " uplink " << u << " is dark";
        const std::string& n = s.graph.devices[size_t(e.device)].name;
        ASSERT_EQ(n.rfind("leaf", 0), 0u) << n;
        EXPECT_EQ(e.port, 6 + u) << "uplink u meets uplink u of the other leaf";
        ++circuits[{r, std::stoi(n.substr(4))}];
      }
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b) {
        const bool neighbours = (a + 1) % 4 == b || (b + 1) % 4 == a;
        const int want = a == b ? 0 : pattern == "mesh" ? 2 : neighbours ? 3 : 0;
        EXPECT_EQ((circuits[{a, b}]), want) << pattern << " " << a << "-" << b;
      }
  }
}

}  // namespace
}  // namespace fabricsim
