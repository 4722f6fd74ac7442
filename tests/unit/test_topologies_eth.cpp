// The scale-out topology generators (fat_tree, rail_optimized, dragonfly) and the traffic
// workloads (incast, permutation): devices, wiring, ranks and their errors. No SystemC.
#include <unistd.h>

#include <fstream>
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "fabrics/systems/system_spec.h"
#include "models/core/errors.h"

namespace fabricsim {
namespace {

const char* kTypes = R"(
link_types:
  eth: {protocol: ethernet, lanes: 4, lane_rate: 100Gb/s, framing: frame, header_bytes: 86B,
        min_frame_bytes: 64B, gap_bytes: 20B, packet_payload: 4032B, latency: 100ns, rx_buffer: 1MiB}
  pcie: {protocol: pcie, lanes: 16, lane_rate: 32Gb/s, framing: frame, header_bytes: 24B,
         packet_payload: 4096B, latency: 100ns, rx_buffer: 64KiB}
  nv: {protocol: nvlink, lanes: 2, lane_rate: 100Gb/s, packet_payload: 128B, latency: 10ns, rx_buffer: 16KiB}
  ib: {protocol: infiniband, lanes: 4, lane_rate: 100Gb/s, framing: frame, header_bytes: 26B,
       packet_payload: 4KiB, latency: 100ns, rx_buffer: 64KiB}
device_types:
  host: {type: endpoint, protocol: pcie, ports: 1, memory_bandwidth: 1000GB/s}
  gpu: {type: endpoint, protocol: nvlink, ports: 2, nic_ports: 1, nic_protocol: pcie, memory_bandwidth: 1000GB/s}
  gpu_ib: {type: endpoint, protocol: nvlink, ports: 2, nic_ports: 1, memory_bandwidth: 1000GB/s}
  uec: {type: uec_nic}
  roce: {type: roce_nic}
  es: {type: ethernet_switch, ports: 16, pipeline_latency: 100ns}
  nvs: {type: switch, protocol: nvlink, ports: 16, pipeline_latency: 100ns, egress_buffer: 4KiB}
  ibs: {type: switch, protocol: infiniband, ports: 16, pipeline_latency: 100ns, egress_buffer: 64KiB}
)";

SystemSpec load(const std::string& topology, const std::string& workload =
                    "{type: incast, senders: 2}") {
  const std::string file = "/tmp/fabricsim_etopo_" + std::to_string(::getpid()) + ".yaml";
  std::ofstream(file) << "name: t" << kTypes << "topology: " << topology
                      << "\nworkload: " << workload << "\n";
  return load_system(file, {}, std::nullopt);
}

std::string error_of(const std::string& topology, const std::string& workload =
                         "{type: incast, senders: 2}") {
  try {
    load(topology, workload);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::pair<std::string, int> peer(const SystemSpec& s, const std::string& name, int port) {
  const topo::LinkEnd e = s.graph.peer(s.graph.by_name.at(name), port);
  if (e.device < 0) return {"", -1};
  return {s.graph.devices[size_t(e.device)].name, e.port};
}

int count_prefix(const SystemSpec& s, const std::string& prefix) {
  int n = 0;
  for (const auto& d : s.graph.devices) n += d.name.rfind(prefix, 0) == 0;
  return n;
}

using P = std::pair<std::string, int>;

const char* kFt = "{type: fat_tree, endpoint_type: host, nic_type: uec, host_link_type: pcie, "
                  "switch_type: es, link_type: eth";

TEST(FatTreeGenerator, ThreeTierKAryTree) {
  const SystemSpec s = load(std::string(kFt) + ", tiers: 3, radix: 4, oversubscription: [1, 1]}");
  // k = 4: 16 hosts, 8 leaves, 8 aggregation switches (4 pods x 2), 4 cores.
  EXPECT_EQ(s.graph.endpoints.size(), 16u);
  EXPECT_EQ(count_prefix(s, "leaf"), 8);
  EXPECT_EQ(count_prefix(s, "agg"), 8);
  EXPECT_EQ(count_prefix(s, "core"), 4);
  EXPECT_EQ(count_prefix(s, "nic"), 16);
  EXPECT_EQ(peer(s, "h5", 0), P("nic5", 0));
  EXPECT_EQ(peer(s, "nic5", 1), P("leaf2", 1));  // hosts of a leaf are consecutive
  EXPECT_EQ(peer(s, "leaf2", 2), P("agg1_0", 0));  // leaf 2 is in pod 1
  EXPECT_EQ(peer(s, "agg1_1", 3), P("core3", 1));  // plane 1, core 2 x 1 + 1, pod port 1
}

TEST(FatTreeGenerator, TwoTiersWithOversubscription) {
  // radix 8 at 3:1: 6 hosts down, 2 up per leaf; full size 8 leaves x 6 = 48 hosts.
  const SystemSpec s = load(std::string(kFt) + ", tiers: 2, radix: 8, oversubscription: [3]}");
  EXPECT_EQ(s.graph.endpoints.size(), 48u);
  EXPECT_EQ(count_prefix(s, "spine"), 2);
  EXPECT_EQ(peer(s, "leaf7", 7), P("spine1", 7));
  EXPECT_NE(error_of(std::string(kFt) + ", tiers: 2, radix: 8, oversubscription: [2]}")
                .find("topology.oversubscription: oversubscription 2:1 does not split radix 8"),
            std::string::npos);
  EXPECT_NE(error_of(std::string(kFt) + ", tiers: 2, radix: 8, oversubscription: [1], hosts: 10}")
                .find("topology.hosts: 10 hosts"),
            std::string::npos);
}

TEST(RailOptimizedGenerator, NicsOnRailsAndRailOnly) {
  const std::string base =
      "{type: rail_optimized, nodes: 3, endpoints_per_node: 2, switches_per_node: 1, "
      "links_per_switch: [2], switch_type: nvs, link_type: nv, endpoint_type: gpu, "
      "host_link_type: pcie, eth_switch_type: es, eth_link_type: eth, ib_endpoint_type: gpu_ib, "
      "ib_switch_type: ibs, ib_link_type: ib";
  const SystemSpec s = load(base + ", spines: 2, uplinks_per_rail: 2}");
  EXPECT_EQ(peer(s, "node1_gpu0", 2), P("node1_nic0", 0));
  EXPECT_EQ(peer(s, "node1_nic0", 1), P("rail0", 1));  // NIC l of node k: rail l, port k
  EXPECT_EQ(peer(s, "rail1", 4), P("spine1", 1));
  EXPECT_EQ(s.domain_size, 2);
  const SystemSpec r = load(base + ", scale_out: roce}");
  EXPECT_EQ(count_prefix(r, "spine"), 0);
  EXPECT_EQ(r.graph.devices[size_t(r.graph.by_name.at("node0_nic1"))].type, "roce");
  const SystemSpec ib = load(base + ", scale_out: infiniband}");
  EXPECT_EQ(count_prefix(ib, "node0_nic"), 0);
  EXPECT_EQ(peer(ib, "node2_gpu1", 2), P("rail1", 2));  // the GPU's own NIC port
}

TEST(DragonflyGenerator, EveryPairOfGroupsLinkedEqually) {
  // g = 5, a = 2, h = 2: a x h = 4 = g - 1, one global link between every pair.
  const SystemSpec s = load(
      "{type: dragonfly, groups: 5, routers: 2, hosts: 2, global_links: 2, endpoint_type: host, "
      "nic_type: uec, host_link_type: pcie, router_type: es, link_type: eth, local_link_type: "
      "eth, global_link_type: eth}");
  EXPECT_EQ(s.graph.endpoints.size(), 20u);
  EXPECT_EQ(peer(s, "g0_r0", 2), P("g0_r1", 2));  // local link
  std::map<std::pair<int, int>, int> pairs;
  for (const auto& l : s.graph.links) {
    const std::string a = s.graph.devices[size_t(l.a.device)].name,
                      b = s.graph.devices[size_t(l.b.device)].name;
    if (a[0] != 'g' || b[0] != 'g' || a.substr(0, 2) == b.substr(0, 2)) continue;
    ++pairs[{std::min(a[1], b[1]), std::max(a[1], b[1])}];
  }
  EXPECT_EQ(pairs.size(), 10u);
  for (const auto& kv : pairs) EXPECT_EQ(kv.second, 1);
  EXPECT_EQ(s.graph.devices[size_t(s.graph.by_name.at("g3_r1"))].coords,
            (std::vector<int>{3, 5, 4, 1, 2, 2, 2}));
}

TEST(DragonflyGenerator, NumbersThatDoNotCloseAreRefused) {
  const std::string df =
      "{type: dragonfly, routers: 2, hosts: 2, global_links: 2, endpoint_type: host, nic_type: "
      "uec, host_link_type: pcie, router_type: es, link_type: eth, local_link_type: eth, "
      "global_link_type: eth, groups: ";
  EXPECT_NE(error_of(df + "4}").find("topology.global_links: a group's 4 global links do not "
                                     "divide evenly over the 3 other groups"),
            std::string::npos);
  EXPECT_NE(error_of(df + "6}").find("topology.groups: 6 groups"), std::string::npos);
}

TEST(TrafficWorkloads, IncastAndPermutation) {
  const std::string ft = std::string(kFt) + ", tiers: 2, radix: 4, oversubscription: [1]}";
  const SystemSpec s = load(ft, "{type: incast, senders: 3, receiver: 6, bytes: 1KB}");
  ASSERT_EQ(s.workload.flows.size(), 3u);
  EXPECT_EQ(s.workload.flows[0].src, 7);
  EXPECT_EQ(s.workload.flows[2].src, 1);  // wraps
  EXPECT_EQ(s.workload.flows[2].dst, 6);
  EXPECT_EQ(s.workload.flows[0].bytes, 1000u);
  const SystemSpec p = load(ft, "{type: permutation, bytes: 1KB}");
  std::set<int> dsts;
  for (const Flow& f : p.workload.flows) {
    EXPECT_NE(f.src, f.dst);
    dsts.insert(f.dst);
  }
  EXPECT_EQ(dsts.size(), 8u);  // every rank receives once
  EXPECT_NE(error_of(ft, "{type: incast, senders: 8}").find("workload.senders: 8 senders need 9"),
            std::string::npos);
}

}  // namespace
}  // namespace fabricsim
