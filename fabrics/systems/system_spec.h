// A whole config file, validated and resolved into plain data (no SystemC): simulation
// settings, link and device types, the topology graph, the workload. Every problem is an
// InputError in the "file:line:col: key.path: problem; hint" form.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fabrics/systems/references.h"
#include "fabrics/topologies/graph.h"
#include "fabrics/workloads/workload.h"
#include "models/core/device_kind.h"
#include "models/link/link_params.h"

namespace fabricsim {

// The `simulation:` section (declared in fabrics/systems/simulation.cpp).
struct SimulationParams {
  uint64_t aggregate_bytes = 0;
  uint64_t aggregate_min_message = 0;
  uint64_t aggregate_min_group_message = 0;
  // false, true or nvls (the group messages and answers only): shared turns of one packet.
  std::string aggregate_round_robin_packets = "false";
  PacketTurns packet_turns() const {
    return aggregate_round_robin_packets == "true"   ? PacketTurns::kAll
           : aggregate_round_robin_packets == "nvls" ? PacketTurns::kGroupOnly
                                                     : PacketTurns::kNone;
  }
  // Under round robin, a message's last packet waits for its finish in the processor
  // sharing of its port class (Endpoint, "fair completion").
  bool aggregate_fair_completion = false;
  uint64_t time_limit_ps = 0;
  bool functional = false;
  uint64_t wall_limit_ps = 0;    // wall-clock time a run may take (ps, as every time)
  uint64_t memory_limit = 0;     // bytes the run may use; 0 in the config: default_memory_limit()
  // packet: per packet (aggregate_bytes forced to 0); transaction: aggregated
  // (aggregate_bytes > 0); flow: flows at max-min fair rates (fabrics/sim/flow_system.h).
  // Unset: transaction if aggregate_bytes > 0, else packet.
  std::string fidelity;
  bool flow_fold = false;  // flow level: run one period of a symmetric system
  int flow_window = 0;     // flow level: a rank's messages moving at once per first hop
  bool flow() const { return fidelity == "flow"; }
};
const ParamBlock& simulation_params();

// The `faults:` section (fabrics/systems/faults.cpp), as the timeline the fault manager
// (fabrics/sim/faults.h) plays: primitive actions in time order.
struct FaultAction {
  enum Kind { kLinkDown, kLinkUp, kDeviceDown, kDeviceUp, kBer, kReconfigure, kCubeFail, kCircuitMap };
  uint64_t at_ps = 0;
  Kind kind = kLinkDown;
  int target = -1;  // graph link index (links, ber), device index (devices), or index in
                    // FaultPlan::reconfigs (kReconfigure), in FaultPlan::bypasses (kCubeFail),
                    // in FaultPlan::timed_maps (kCircuitMap)
  double ber = 0;   // kBer: the link's bit error rate from now on
  int event = -1;   // index in FaultPlan::events
};
// An optical circuit switch's circuit map replaced during the run (ocs_reconfigure): the
// circuits that change go dark for the switch's reconfiguration time (docs/optical.md).
struct OcsReconfig {
  int device = -1;
  std::vector<int> map;  // the new map: map[p] = joined port or -1 (dark)
  uint64_t dark_ps = 0;  // the switch's reconfiguration_time
  bool immediate = false;  // reconfiguration_mode: immediate
};
// cube_fail (docs/optical.md, "Failure bypass"): a cube of a tpu_pod slice fails and a
// spare cube takes its place in the torus through the optical circuit switches.
struct CubeBypass {
  int failed_cube = -1, spare_cube = -1;
  // Endpoint ids: each failed chip and the spare's chip at the same place in its cube
  // (the ranks of the first move to the second).
  std::vector<std::pair<int, int>> moves;
  std::vector<int> reconfigs;  // indices in FaultPlan::reconfigs: the switches' new maps
  uint64_t restart_ps = 0;     // the job's own restart cost once the new maps are lit
};
struct FaultPlan {
  uint64_t detection_ps = 0;   // a link or device changes state -> routes recomputed
  uint64_t retransmit_ps = 0;  // end-to-end retransmission timeout
  std::vector<FaultAction> actions;  // by time; at equal times in declaration order
  std::vector<std::string> events;   // per event: what it is, for reports
  std::vector<std::string> where;    // per event: "file:line:col: faults.events[i]"
  std::vector<char> replay_links;    // per graph link: bursts planned (replay buffer on)
  std::vector<OcsReconfig> reconfigs;  // kReconfigure actions' targets (and bypasses' maps)
  std::vector<CubeBypass> bypasses;    // kCubeFail actions' targets
  // faults.circuit_maps: per name, its switches' maps (indices in reconfigs), played by
  // the OCS controller (models/optics/ocs_controller.h) when a workload asks for one.
  std::map<std::string, std::vector<int>> circuit_maps;
  // ocs_phase_map: per workload phase, the circuit map its start takes (and the event).
  struct PhaseMap {
    std::string map;
    int event = -1;
  };
  std::map<std::string, PhaseMap> phase_maps;
  // ocs_circuit_map: kCircuitMap actions' targets, the names of the circuit maps the whole
  // system takes at a time (through the OCS controller, one request at a time).
  std::vector<std::string> timed_maps;
  bool any() const { return !actions.empty() || !phase_maps.empty(); }
};

struct SystemSpec {
  std::string file;
  std::string name;
  uint64_t seed = 0;
  SimulationParams simulation;
  std::map<std::string, LinkParams> link_types;
  std::map<std::string, DeviceType> device_types;
  topo::Graph graph;
  std::vector<int> ranks;    // endpoint ids in rank order
  int domain_size = 0;       // ranks per node (multi_node: endpoints_per_node), 0: one node
  WorkloadSpec workload;
  FaultPlan faults;          // empty without a `faults:` section
  // algorithm: auto: the in-switch algorithms of the collective (nvls, hierarchical_nvls)
  // that pass the checks of naming them explicitly, so auto may choose them; on a single
  // domain hierarchical_nvls is nvls's schedule and is left to nvls.
  std::vector<std::string> auto_in_switch;
  // The ring of every channel from the topology (fabrics/systems/rings.h); empty: every
  // channel runs 0, 1, .., n-1 (or rail-aligned orders on two levels).
  std::vector<std::vector<int>> rings;
  nlohmann::json resolved;   // the resolved config, echoed into results.json
  // "file:line:col" (or "file:<--set>", or just "file" when defaulted) of the settings that
  // errors found while running point at: "simulation.time_limit", "simulation.wall_limit".
  std::map<std::string, std::string> where;
  // The resource estimate made by the checks (fabrics/systems/estimate.h).
  struct Estimate {
    double memory_bytes = 0, transaction_hops = 0, wall_s = 0;
    std::string text;
  } estimate;
  std::vector<PublishedCurve> published;  // `published:` (fabrics/systems/references.h)
  std::vector<Assumption> assumptions;    // `assumptions:`

  // What the models need of the run-wide settings when they are built.
  RunSettings run_settings() const {
    return RunSettings{seed, simulation.aggregate_bytes, simulation.aggregate_min_message,
                       simulation.aggregate_min_group_message,
                       simulation.packet_turns(), simulation.aggregate_fair_completion};
  }
  const DeviceType& type_of(int device) const { return device_types.at(graph.devices[device].type); }

  // The routes of `graph` (topo::compute_routes), computed by the first step that asks
  // (the ring orders at load, elaboration, the busbw ceiling) and kept for the others
  // until drop_routes(). They belong to this spec's graph object: a copy of the spec
  // (whose graph may then change, e.g. without failed links) computes its own.
  const topo::Routes& routes() const {
    if (!routes_cache_ || routes_graph_ != &graph) {
      routes_cache_ = std::make_shared<const topo::Routes>(topo::compute_routes(graph));
      routes_graph_ = &graph;
    }
    return *routes_cache_;
  }
  // Frees them (the run drops them once the system is built and the ceiling computed).
  void drop_routes() const {
    routes_cache_.reset();
    routes_graph_ = nullptr;
  }

  mutable std::shared_ptr<const topo::Routes> routes_cache_;  // see routes()
  mutable const topo::Graph* routes_graph_ = nullptr;
};

// Loads, applies --set overrides, validates and resolves. `seed` overrides the file's.
SystemSpec load_system(const std::string& file, const std::vector<std::string>& overrides,
                       std::optional<uint64_t> seed);

}  // namespace fabricsim
