// Topology generators (fabrics/topologies/), each on its own: the devices, names and port
// wiring it emits, the ranks and domains it declares, and its errors (located, with the
// key path). Configs are small YAML texts; no SystemC, no simulation.
#include <unistd.h>

#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "fabrics/systems/system_spec.h"
#include "models/core/errors.h"

namespace fabricsim {
namespace {

const char* kTypes = R"(
link_types:
  nv:  {protocol: nvlink, lanes: 2, lane_rate: 100Gb/s, packet_payload: 128B, latency: 10ns, rx_buffer: 16KiB}
  ib:  {protocol: infiniband, lanes: 4, lane_rate: 100Gb/s, framing: frame, header_bytes: 26B,
        packet_payload: 4KiB, latency: 100ns, rx_buffer: 64KiB}
device_types:
  gpu:  {type: endpoint, protocol: nvlink, ports: 3, memory_bandwidth: 1000GB/s}
  gpu2: {type: endpoint, protocol: nvlink, ports: 2, memory_bandwidth: 1000GB/s}
  nic:  {type: endpoint, protocol: nvlink, ports: 1, nic_ports: 1, memory_bandwidth: 1000GB/s}
  sw:   {type: switch, protocol: nvlink, ports: 16, pipeline_latency: 100ns, egress_buffer: 4KiB}
  rail: {type: switch, protocol: infiniband, ports: 8, pipeline_latency: 100ns, egress_buffer: 64KiB}
workload: {type: allreduce_sweep, min_bytes: 1MiB, max_bytes: 1MiB}
)";

// Loads kTypes + `topology` (a YAML map written after "topology: ").
SystemSpec load(const std::string& topology) {
  const std::string file = "/tmp/fabricsim_topo_" + std::to_string(::getpid()) + ".yaml";
  std::ofstream(file) << "name: t" << kTypes << "topology: " << topology << "\n";
  return load_system(file, {}, std::nullopt);
}

// The message of the InputError loading `topology` throws ("" if it loads).
std::string error_of(const std::string& topology) {
  try {
    load(topology);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// (device name, port) at the other end of (name, port).
std::pair<std::string, int> peer(const SystemSpec& s, const std::string& name, int port) {
  s.graph.by_name.at(name);
  const topo::LinkEnd e = s.graph.peer(s.graph.by_name.at(name), port);
  if (e.device < 0) return {"", -1};
  return {s.graph.devices[e.device].name, e.port};
}

using P = std::pair<std::string, int>;

TEST(SwitchedNodeGenerator, WiresEveryEndpointPortToItsSwitchInOrder) {
  const SystemSpec s = load(
      "{type: switched_node, endpoint_type: gpu, endpoints: 4, switch_type: sw, switches: 2, "
      "links_per_switch: [1, 2], link_type: nv}");
  ASSERT_EQ(s.graph.devices.size(), 6u);  // gpu0..3, sw0, sw1
  EXPECT_EQ(s.graph.links.size(), 12u);   // 4 endpoints x 3 ports
  EXPECT_EQ(s.graph.endpoints.size(), 4u);
  EXPECT_EQ(s.ranks, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(s.domain_size, 0);
  // gpu g: port 0 -> sw0.port[g]; ports 1, 2 -> sw1.port[2g], sw1.port[2g + 1].
  EXPECT_EQ(peer(s, "gpu0", 0), P("sw0", 0));
  EXPECT_EQ(peer(s, "gpu3", 0), P("sw0", 3));
  EXPECT_EQ(peer(s, "gpu1", 1), P("sw1", 2));
  EXPECT_EQ(peer(s, "gpu1", 2), P("sw1", 3));
  EXPECT_EQ(peer(s, "sw1", 7), P("gpu3", 2));
  EXPECT_EQ(peer(s, "sw0", 4), P("", -1));  // unused switch ports stay unlinked
  EXPECT_TRUE(s.graph.devices[s.graph.by_name.at("sw0")].forwards);
  EXPECT_TRUE(s.graph.devices[s.graph.by_name.at("gpu0")].terminal);
}

TEST(SwitchedNodeGenerator, Errors) {
  const std::string base =
      "{type: switched_node, endpoint_type: gpu, switch_type: sw, link_type: nv, ";
  EXPECT_NE(error_of(base + "endpoints: 4, switches: 2, links_per_switch: [3]}")
                .find("topology.links_per_switch: links_per_switch has 1 entries but switches is 2"),
            std::string::npos);
  EXPECT_NE(error_of(base + "endpoints: 4, switches: 1, links_per_switch: [2]}")
                .find("links_per_switch sums to 2 but endpoint type 'gpu' has 3 ports"),
            std::string::npos);
  EXPECT_NE(error_of(base + "endpoints: 6, switches: 1, links_per_switch: [3]}")
                .find("switch 0 needs 3 x 6 = 18 ports but switch type 'sw' has 16"),
            std::string::npos);
  EXPECT_NE(error_of("{type: switched_node, endpoint_type: sw, switch_type: sw, link_type: nv, "
                     "endpoints: 1, switches: 1, links_per_switch: [1]}")
                .find("topology.endpoint_type: device type 'sw' is a switch; name an endpoint type"),
            std::string::npos);
  EXPECT_NE(error_of("{type: switched_node, endpoint_type: gpu, switch_type: sw, link_type: ib, "
                     "endpoints: 2, switches: 1, links_per_switch: [3]}")
                .find("incompatible link: link type 'ib' carries infiniband but gpu0 (gpu) speaks "
                      "nvlink"),
            std::string::npos);
}

TEST(MultiNodeGenerator, NodesRailsAndSpinesWithTheirNamesPortsAndDomains) {
  const SystemSpec s = load(
      "{type: multi_node, nodes: 3, endpoint_type: nic, endpoints_per_node: 2, switch_type: sw, "
      "switches_per_node: 1, links_per_switch: [1], link_type: nv, nic_link_type: ib, "
      "rail_switch_type: rail, spines: 2, spine_switch_type: rail, uplinks_per_rail: 4}");
  // 3 x (2 gpus + 1 switch) + 2 rails + 2 spines.
  EXPECT_EQ(s.graph.devices.size(), 13u);
  EXPECT_EQ(s.domain_size, 2);
  EXPECT_EQ(s.ranks.size(), 6u);
  // Node-major names; NIC port (after the fabric port) of local endpoint l on rail l, port =
  // node index.
  EXPECT_EQ(peer(s, "node2_gpu1", 0), P("node2_sw0", 1));
  EXPECT_EQ(peer(s, "node2_gpu1", 1), P("rail1", 2));
  EXPECT_EQ(peer(s, "node0_gpu0", 1), P("rail0", 0));
  // Uplinks after the node ports, dealt round-robin: rail i's uplink u -> spine u % 2, port
  // i x 2 + u / 2.
  EXPECT_EQ(peer(s, "rail1", 3), P("spine0", 2));
  EXPECT_EQ(peer(s, "rail1", 4), P("spine1", 2));
  EXPECT_EQ(peer(s, "rail1", 6), P("spine1", 3));
}

TEST(MultiNodeGenerator, Errors) {
  const std::string base =
      "{type: multi_node, nodes: 2, endpoints_per_node: 2, switch_type: sw, switches_per_node: 1, "
      "links_per_switch: [1], link_type: nv, nic_link_type: ib, rail_switch_type: rail, ";
  EXPECT_NE(error_of(base + "endpoint_type: gpu2}")
                .find("topology.endpoint_type: device type 'gpu2' has no NIC ports (nic_ports: 0)"),
            std::string::npos);
  EXPECT_NE(error_of(base + "endpoint_type: nic, spines: 2, spine_switch_type: rail, "
                            "uplinks_per_rail: 3}")
                .find("uplinks_per_rail 3 with spines 2: give both or neither"),
            std::string::npos);
  EXPECT_NE(error_of(base + "endpoint_type: nic, spines: 1, uplinks_per_rail: 1}")
                .find("topology.spine_switch_type: spines > 0 needs a spine_switch_type"),
            std::string::npos);
}

TEST(TwoTierGenerator, PlanesLeavesAndSpinesWiredAsDocumented) {
  const SystemSpec s = load(
      "{type: two_tier, endpoint_type: gpu2, endpoints: 8, racks: 2, leaf_switch_type: sw, "
      "leaf_down: 2, leaf_up: 2, spine_switch_type: sw, spines_per_plane: 2, link_type: nv, "
      "uplink_type: nv}");
  // 8 gpus; per plane (2) 2 racks x 2 leaves + 2 spines.
  EXPECT_EQ(s.graph.devices.size(), 8u + 2 * (4 + 2));
  EXPECT_EQ(s.graph.links.size(), 2 * (8 + 4 * 2));
  // gpu g, plane p -> leaf g / leaf_down of the plane (rack-major), port g % leaf_down.
  EXPECT_EQ(peer(s, "gpu5", 1), P("l1_r1_p1_0", 1));
  EXPECT_EQ(peer(s, "gpu2", 0), P("l1_r0_p0_1", 0));
  // leaf l's uplink u -> spine u % spines, port l x (leaf_up / spines) + u / spines.
  EXPECT_EQ(peer(s, "l1_r1_p0_1", 2), P("l2_p0_0", 3));
  EXPECT_EQ(peer(s, "l1_r1_p0_1", 3), P("l2_p0_1", 3));
}

TEST(TwoTierGenerator, Errors) {
  const std::string base =
      "{type: two_tier, leaf_switch_type: sw, spine_switch_type: sw, link_type: nv, "
      "uplink_type: nv, ";
  EXPECT_NE(error_of(base + "endpoint_type: gpu2, endpoints: 6, racks: 4, leaf_down: 2, "
                            "leaf_up: 2, spines_per_plane: 1}")
                .find("topology.racks: 6 endpoints do not divide into 4 racks"),
            std::string::npos);
  EXPECT_NE(error_of(base + "endpoint_type: nic, endpoints: 2, leaf_down: 2, leaf_up: 2, "
                            "spines_per_plane: 1}")
                .find("device type 'nic' has 1 NIC ports; two_tier links every endpoint port"),
            std::string::npos);
  EXPECT_NE(error_of(base + "endpoint_type: gpu2, endpoints: 4, leaf_down: 2, leaf_up: 3, "
                            "spines_per_plane: 2}")
                .find("topology.spines_per_plane: a leaf's 3 uplinks do not deal evenly over 2 "
                      "spines"),
            std::string::npos);
}

TEST(ExplicitGenerator, DevicesLinksAndRanksAsListed) {
  const SystemSpec s = load(R"({type: explicit,
      devices: {a: gpu2, b: gpu2, s: sw},
      links: [{a: "a.port[0]", b: "s.port[5]", type: nv}, {a: "a.port[1]", b: "b.port[1]", type: nv},
              {a: "b.port[0]", b: "s.port[2]", type: nv}],
      ranks: [b, a]})");
  EXPECT_EQ(s.graph.devices.size(), 3u);
  EXPECT_EQ(s.ranks, (std::vector<int>{1, 0}));  // endpoint ids in declaration order: a 0, b 1
  EXPECT_EQ(peer(s, "s", 5), P("a", 0));
  EXPECT_EQ(peer(s, "b", 1), P("a", 1));
}

TEST(ExplicitGenerator, Errors) {
  const std::string devs = "{type: explicit, devices: {a: nic, s: sw, r: rail}, links: [";
  EXPECT_NE(error_of(devs + R"({a: "a.port[0]", b: "s.port[0]", type: nv},
                                {a: "a.port[0]", b: "s.port[1]", type: nv}]})")
                .find("topology.links[1].a: port a.port[0] is linked twice (first at"),
            std::string::npos);
  EXPECT_NE(error_of(devs + R"({a: "a.port[0]", b: "q.port[0]", type: nv}]})")
                .find("topology.links[0].b: unknown device 'q'"),
            std::string::npos);
  EXPECT_NE(error_of(devs + R"({a: "a.port[0]", b: "s.port[0]", type: nv},
                                {a: "a.port[1]", b: "s.port[1]", type: nv}]})")
                .find("incompatible link: link type 'nv' carries nvlink but a.port[1], a NIC port "
                      "of a (nic) speaks infiniband"),
            std::string::npos);
  EXPECT_NE(error_of(devs + R"({a: "a.port[0]", b: "s.port[0]", type: nv}]})")
                .find("port a.port[1] is not linked; every endpoint port needs a link"),
            std::string::npos);
  EXPECT_NE(error_of(devs + R"({a: "a.port[0]", b: "s.port[0]", type: nv},
                                {a: "a.port[1]", b: "r.port[0]", type: ib}], ranks: [s]})")
                .find("topology.ranks[0]: 's' is not an endpoint"),
            std::string::npos);
}

}  // namespace
}  // namespace fabricsim
