// Optical circuit switching without a simulation: the TPU v4 pod's structure (acceptance:
// 4,096 chips, 64 cubes, 48 switches of 136 ports with 128 used, 6,144 optical links),
// circuits seen as links by the graph, a slice's torus wiring, and the switch's config
// errors (a port named twice, a budget that does not close).
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "fabrics/systems/system_spec.h"
#include "models/core/errors.h"
#include "models/optics/ocs.h"
#include "tests/unit/algorithms/oracles.h"

namespace fabricsim {
namespace {

std::string source(const std::string& rel) { return std::string(FABRICSIM_SOURCE_DIR) + "/" + rel; }

std::pair<std::string, int> peer(const SystemSpec& s, const std::string& name, int port) {
  const topo::LinkEnd e = s.graph.peer(s.graph.by_name.at(name), port);
  if (e.device < 0) return {"", -1};
  return {s.graph.devices[size_t(e.device)].name, e.port};
}
using P = std::pair<std::string, int>;

// The shipped pod, loaded once (about 3 s of CPU: 8,240 devices and their routes' check).
const SystemSpec& pod() {
  static const SystemSpec s = load_system(source("configs/tpu_v4_pod.yaml"), {}, std::nullopt);
  return s;
}

TEST(TpuPod, V4PodHas4096Chips64Cubes48SwitchesOf128UsedPortsAnd6144OpticalLinks) {
  const SystemSpec& s = pod();
  std::map<std::string, int> kinds;  // device count per kind
  std::set<std::string> cubes;
  std::vector<int> used(s.graph.devices.size(), 0);
  for (const topo::Link& l : s.graph.links) {
    ++used[size_t(l.a.device)];
    ++used[size_t(l.b.device)];
  }
  int switches_checked = 0;
  for (size_t i = 0; i < s.graph.devices.size(); ++i) {
    const topo::Device& d = s.graph.devices[i];
    const DeviceType& t = s.type_of(int(i));
    ++kinds[t.kind->name];
    if (d.terminal) cubes.insert(d.name.substr(0, d.name.find('_')));
    if (t.kind->name == "optical_circuit_switch") {
      EXPECT_EQ(d.ports, 136) << d.name;
      EXPECT_EQ(used[i], 128) << d.name;
      int lit = 0;
      for (int q : d.circuit) lit += q >= 0;
      EXPECT_EQ(lit, 128) << d.name;  // the whole pod is one slice: every used port lit
      ++switches_checked;
    }
  }
  EXPECT_EQ(kinds["endpoint"], 4096);
  EXPECT_EQ(kinds["switch"], 4096);  // one router per chip
  EXPECT_EQ(kinds["optical_circuit_switch"], 48);
  EXPECT_EQ(switches_checked, 48);
  EXPECT_EQ(cubes.size(), 64u);
  EXPECT_EQ(s.ranks.size(), 4096u);
  std::map<std::string, int> links;
  for (const topo::Link& l : s.graph.links) ++links[l.type];
  EXPECT_EQ(links["ici_optical"], 6144);
  EXPECT_EQ(links["ici"], 64 * 3 * 16 * 3);  // per cube: 3 dimensions x 16 lines x 3 links
  EXPECT_EQ(links["local"], 6 * 4096);  // six local links per chip
}

// A circuit is a link to the graph: the +x face of cube 0 (x = 3) sees cube 1's -x face
// (x = 0) through ocs_x_<y>_<z>; the slice's last cube in x wraps to the first.
TEST(TpuPod, CircuitsWireTheSliceAsATorus) {
  const SystemSpec& s = pod();
  EXPECT_EQ(peer(s, "r0_3_1_2", 0), P("r1_0_1_2", 1));
  EXPECT_EQ(peer(s, "r1_0_1_2", 1), P("r0_3_1_2", 0));
  EXPECT_EQ(peer(s, "r3_3_0_0", 0), P("r0_0_0_0", 1));    // x wraps: cube 3 -> cube 0
  EXPECT_EQ(peer(s, "r0_2_3_1", 2), P("r4_2_0_1", 3));    // +y: cube 0 -> cube 4
  EXPECT_EQ(peer(s, "r48_1_1_3", 4), P("r0_1_1_0", 5));   // +z wraps: cube 48 -> cube 0
  EXPECT_EQ(peer(s, "r0_1_1_1", 0), P("r0_2_1_1", 1));    // inside a cube: electrical
  // The switch's own ports still see their physical peers.
  const int o = s.graph.by_name.at("ocs_x_1_2");
  EXPECT_EQ(s.graph.devices[size_t(o)].name, "ocs_x_1_2");
  const topo::LinkEnd e = s.graph.physical_peer(o, 0);
  EXPECT_EQ(s.graph.devices[size_t(e.device)].name, "r0_3_1_2");
}

std::string small_pod(const std::string& extra_types = "", const std::string& slice = "[2, 1, 1]",
                      const std::string& cubes = "3") {
  return R"(name: pod
link_types:
  ici: {protocol: generic, lanes: 4, lane_rate: 100Gb/s, framing: flit, flit_bytes: 32B,
        overhead_flits: 1, packet_payload: 512B, latency: 20ns, rx_buffer: 64KiB}
device_types:
  tpu: {type: endpoint, protocol: generic, ports: 1, memory_bandwidth: 1000GB/s}
  r: {type: switch, protocol: generic, ports: 7, pipeline_latency: 50ns, egress_buffer: 64KiB}
  o: {type: optical_circuit_switch, protocol: generic, ports: 8)" +
         extra_types + R"(}
topology: {type: tpu_pod, cube: [2, 2, 2], cubes: )" +
         cubes + ", slice: " + slice + R"(, chip_type: tpu, router_type: r, ocs_type: o,
           electrical_link_type: ici, optical_link_type: ici, local_link_type: ici}
workload: {type: collective_sweep, collective: sendrecv, min_bytes: 4KiB, max_bytes: 4KiB}
)";
}

SystemSpec load_text(const std::string& text) {
  const std::string file = "/tmp/fabricsim_optics_" + std::to_string(::getpid()) + ".yaml";
  std::ofstream(file) << text;
  return load_system(file, {}, std::nullopt);
}

std::string error_of(const std::string& text) {
  try {
    load_text(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// A 2-cube slice of 2x2x2 cubes in a 3-cube pod: 12 switches (3 dimensions x 4 face
// positions), cube 2 a spare whose optical ports are dark.
TEST(TpuPod, SliceLeavesSpareCubesDark) {
  const SystemSpec s = load_text(small_pod());
  int switches = 0;
  for (const topo::Device& d : s.graph.devices)
    if (!d.circuit.empty()) {
      ++switches;
      EXPECT_EQ(d.circuit[4], -1) << d.name;  // cube 2's ports
      EXPECT_EQ(d.circuit[5], -1) << d.name;
    }
  EXPECT_EQ(switches, 12);
  EXPECT_EQ(s.ranks.size(), 16u);
  EXPECT_EQ(peer(s, "r2_1_0_0", 0), P("", -1));           // spare: dark
  EXPECT_EQ(peer(s, "r1_1_0_0", 0), P("r0_0_0_0", 1));    // x wraps after 2 cubes
  EXPECT_EQ(peer(s, "r0_0_1_0", 2), P("r0_0_0_0", 3));    // y: a one-cube slice wraps to itself
}

TEST(TpuPod, Errors) {
  EXPECT_NE(error_of(small_pod("", "[2, 2, 1]")).find("topology.slice: a slice of 4 cubes in a pod of 3"),
            std::string::npos);
  EXPECT_NE(error_of(small_pod("", "[1, 1, 1]", "5")).find("has 8 ports; 5 cubes need 10"),
            std::string::npos)
      << error_of(small_pod("", "[1, 1, 1]", "5"));
}

// Twisted 4x4x8 (configs/tpu_v4_slice.yaml, 2 cubes of 4x4x4, twisted: true): the wraparounds
// of the short dimensions x and y land 4 chips further on in z (the other cube); z wraps as
// in the regular torus. Only the circuit maps differ: the same 96 circuits per cube pair,
// the same fibres.
int lit_circuits(const SystemSpec& s) {
  int n = 0;
  for (const topo::Device& d : s.graph.devices)
    for (size_t p = 0; p < d.circuit.size(); ++p) n += d.circuit[p] > int(p);
  return n;
}

TEST(TpuPod, TwistedSliceShiftsTheShortWraparoundsByHalfTheLongDimension) {
  const std::string cfg = source("configs/tpu_v4_slice.yaml");
  const SystemSpec reg = load_system(cfg, {}, std::nullopt);
  const SystemSpec tw =
      load_system(cfg, {"topology.twisted=true", "workload.algorithm=ring"}, std::nullopt);
  // Regular: x and y wrap inside the cube's own z half.
  EXPECT_EQ(peer(reg, "r0_3_1_2", 0), P("r0_0_1_2", 1));
  EXPECT_EQ(peer(reg, "r1_2_3_0", 2), P("r1_2_0_0", 3));
  // Twisted: chip (3, 1, 2) -> (0, 1, 6), (2, 3, 4) -> (2, 0, 0): + by 4 in z.
  EXPECT_EQ(peer(tw, "r0_3_1_2", 0), P("r1_0_1_2", 1));   // +x wraps into cube 1
  EXPECT_EQ(peer(tw, "r1_0_1_2", 1), P("r0_3_1_2", 0));   // and back
  EXPECT_EQ(peer(tw, "r1_3_1_2", 0), P("r0_0_1_2", 1));   // (3,1,6) -> (0,1,2)
  EXPECT_EQ(peer(tw, "r1_2_3_0", 2), P("r0_2_0_0", 3));   // +y wraps into cube 0
  EXPECT_EQ(peer(tw, "r0_2_3_0", 2), P("r1_2_0_0", 3));
  EXPECT_EQ(peer(tw, "r1_1_1_3", 4), P("r0_1_1_0", 5));   // z: untwisted, as regular
  EXPECT_EQ(peer(reg, "r1_1_1_3", 4), P("r0_1_1_0", 5));
  EXPECT_EQ(peer(tw, "r0_1_1_1", 0), P("r0_2_1_1", 1));   // inside a cube: electrical
  // The same circuits in number, on the same switches and fibres.
  EXPECT_EQ(lit_circuits(reg), 3 * 16 * 2);
  EXPECT_EQ(lit_circuits(tw), lit_circuits(reg));
  EXPECT_EQ(tw.graph.devices.size(), reg.graph.devices.size());
  EXPECT_EQ(tw.graph.links.size(), reg.graph.links.size());
  // The workload sees no torus (its per-dimension rings are not rings of neighbours).
  EXPECT_TRUE(tw.workload.torus.empty());
  EXPECT_EQ(reg.workload.torus, (std::vector<int>{4, 4, 8}));
}

// A q x 2q x 2q slice (2x4x4 chips of 2x2x2 cubes, slice [1, 2, 2]): x wraps by (+2, +2) in
// (y, z), a diagonal move into the cube one along y and z.
TEST(TpuPod, TwistedQ2Q2QSliceShiftsXAlongBothLongDimensions) {
  const SystemSpec s = load_text(small_pod("", "[1, 2, 2], twisted: true", "4"));
  EXPECT_EQ(peer(s, "r0_1_0_1", 0), P("r3_0_0_1", 1));  // cube (y 0, z 0) -> (y 1, z 1)
  EXPECT_EQ(peer(s, "r1_1_1_0", 0), P("r2_0_1_0", 1));  // cube (y 1, z 0) -> (y 0, z 1)
  EXPECT_EQ(peer(s, "r1_0_1_0", 2), P("r0_0_0_0", 3));  // y (long): untwisted
  EXPECT_EQ(peer(s, "r2_0_0_1", 4), P("r0_0_0_0", 5));  // z (long): untwisted
  EXPECT_NE(error_of(small_pod("", "[1, 1, 3], twisted: true", "4"))
                .find("topology.twisted: a twisted torus needs a slice of q x q x 2q or q x 2q x 2q "
                      "chips (in any order); this slice is 2x2x6"),
            std::string::npos);
}

TEST(Ocs, CircuitMapRefusesAPortNamedTwice) {
  std::vector<int> map;
  EXPECT_EQ(circuit_map({0, 1, 2, 3}, 4, map), -1);
  EXPECT_EQ(map, (std::vector<int>{1, 0, 3, 2}));
  EXPECT_EQ(circuit_map({0, 1, 2, 1}, 4, map), 3);
  EXPECT_EQ(circuit_map({0, 0}, 4, map), 1);
  EXPECT_EQ(circuit_map({0, 4}, 4, map), 1);
  const std::string twice = error_of(small_pod(", circuits: [0, 1, 2, 1]"));
  EXPECT_NE(twice.find("device_types.o.circuits: port 1 is named twice (circuits[1] and circuits[3])"),
            std::string::npos)
      << twice;
  EXPECT_NE(twice.find(".yaml:8:"), std::string::npos) << twice;  // located at its line
}

TEST(Ocs, ALinkBudgetThatDoesNotCloseIsRefused) {
  // 1 dBm - (2 + 4 x 0.3 + 2 x 10 km x 0.4) dB = -10.2 dBm < -6 + 1.
  const std::string e = error_of(small_pod(", fibre_length_m: 10000"));
  EXPECT_NE(e.find("device_types.o.launch_power_dbm: the link budget of ocs_x_0_0's circuits does "
                   "not close: launch 1.00 dBm - loss 11.20 dB"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("= -10.20 dBm < sensitivity -6.00 dBm + margin 1.00 dB"), std::string::npos) << e;
  // The defaults close: 1 - (2 + 1.2 + 0.04) = -2.24 dBm >= -5 dBm.
  EXPECT_EQ(error_of(small_pod()), "");
}

}  // namespace
}  // namespace fabricsim

namespace fabricsim {
namespace {

// The torus all-reduce on 2-D and 3-D tori: exact sums in program order and shuffled,
// traffic per pair against the oracle's model (only torus neighbours, (k-1)/k of each
// stage's half per direction), tags and order. Not the bare dependency rule: a stage
// waits for the stage before (PhaseByPhase below).
TEST(TorusAllReduce, ExactOnTwoAndThreeDimensionalTori) {
  const coll::AlgoInfo* a = &coll::algo_info("all_reduce", "torus");
  for (const std::vector<int>& dims :
       {std::vector<int>{4, 4}, std::vector<int>{2, 3, 4}, std::vector<int>{4, 4, 4},
        std::vector<int>{3, 1, 2}}) {
    int n = 1;
    for (int d : dims) n *= d;
    for (int channels : {1, 2}) {
      coll::CollParams p{n, uint64_t(n) * 37 + 5, 4, channels, 64, 0};
      p.torus = dims;
      SCOPED_TRACE(std::to_string(n) + " ranks, " + std::to_string(channels) + " channels");
      coll::algotest::check_config(*a, p, false, 0);
    }
  }
}

// Phase by phase: on 4x4x4 each rank's stages run in order x, y, z (reduce-scatter and
// all-gather), y, x, and the sends of the first step of a stage in a new dimension wait
// for every op of the stage before (by the rule or the barrier).
TEST(TorusAllReduce, PhaseByPhase) {
  coll::CollParams p{64, 64 * 1024, 4, 1, 256, 0};
  p.torus = {4, 4, 4};
  const coll::Schedule s = coll::make_schedule("all_reduce", "torus", p);
  for (int r : {0, 21, 63}) {
    const auto& ops = s.programs[size_t(r)].ops;
    auto dim_of = [&](int peer) {
      const int d = std::abs(peer - r);
      return d % 16 == 0 ? 2 : d % 4 == 0 ? 1 : 0;
    };
    std::vector<int> order;     // the dimension of each stage, in program order
    std::vector<size_t> first;  // the index of each stage's first op
    for (size_t i = 0; i < ops.size(); ++i) {
      const int d = dim_of(ops[i].peer);
      if (order.empty() || order.back() != d) {
        order.push_back(d);
        first.push_back(i);
      }
    }
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 1, 0})) << "rank " << r;
    ASSERT_EQ(first.size(), 5u);
    for (size_t k = 1; k < first.size(); ++k) {
      ASSERT_EQ(ops[first[k]].kind, coll::OpKind::kSend);
      size_t checked = 0;
      // The stage's first step: its sends, up to its first receive.
      for (size_t i = first[k]; i < ops.size() && ops[i].kind == coll::OpKind::kSend; ++i) {
        ++checked;
        for (size_t j = first[k - 1]; j < first[k]; ++j)
          EXPECT_TRUE(std::binary_search(ops[i].deps.begin(), ops[i].deps.end(), uint32_t(j)))
              << "rank " << r << " stage " << k << " op " << i << " misses op " << j;
      }
      EXPECT_GT(checked, 0u) << "rank " << r << " stage " << k;
    }
  }
}

// Only torus neighbours talk: on 4x4x4 every rank sends to exactly its 6 neighbours.
TEST(TorusAllReduce, TalksOnlyToTorusNeighbours) {
  coll::CollParams p{64, 64 * 1024, 4, 1, 1 << 20, 0};
  p.torus = {4, 4, 4};
  const coll::Schedule s = coll::make_schedule("all_reduce", "torus", p);
  for (int r = 0; r < 64; ++r) {
    std::set<int> peers;
    for (const coll::Op& op : s.programs[size_t(r)].ops)
      if (op.kind == coll::OpKind::kSend) peers.insert(op.peer);
    const int x = r % 4, y = r / 4 % 4, z = r / 16;
    const std::set<int> want{(x + 1) % 4 + 4 * y + 16 * z, (x + 3) % 4 + 4 * y + 16 * z,
                             x + 4 * ((y + 1) % 4) + 16 * z, x + 4 * ((y + 3) % 4) + 16 * z,
                             x + 4 * y + 16 * ((z + 1) % 4), x + 4 * y + 16 * ((z + 3) % 4)};
    EXPECT_EQ(peers, want) << "rank " << r;
  }
}

}  // namespace
}  // namespace fabricsim
