// The cost model's view of a loaded system (models/collectives/cost.h): per rank pair the
// latency of one dependent step and the sender's port group, per port group its payload
// rate, all derived from the topology and the link and switch parameters.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fabrics/systems/system_spec.h"
#include "models/collectives/cost.h"

namespace fabricsim {

// alpha(src, dst) = trips x one small packet's trip over the route (every link's latency
// plus the packet's serialisation, every switch's pipeline latency), with trips = 3 for
// sync: fence_flag (data, ack, flag) and 1 for data. A group is the set of the sender's
// ports on shortest paths to dst; its rate is the sum of their link rates x framing
// efficiency at the link's packet_payload. Ranks linked to NVLS switches also get their
// in-switch path (coll::NvlsPath: the group of those links, header bytes, engine shares,
// reduce and store latencies; no fence/flag trips: NVLS completes on arrival) and every
// NVLS switch its engines' rates (nvls_reduce_bandwidth, nvls_multicast_bandwidth).
// Rank classes (classes = true): where shifting every rank by some P is a symmetry of the
// graph (rank_period in cost_model.cpp), FabricCosts::period = P and every rank's paths,
// groups and rates are its class representative's (r mod P); paths are found on demand
// and kept per (representative, peer), so memory grows with the pairs used, not with
// ranks^2 or devices x ranks. classes = false: every rank on its own (tests compare them).
// `spec` must outlive the result.
coll::FabricCosts fabric_costs(const SystemSpec& spec, bool classes = true);

// The auto choice (algorithm: auto, or protocol: auto): candidate costs and the pick per
// size. A candidate is an algorithm (the named one, or with algorithm: auto every one NCCL
// has, AlgoInfo::nccl) and, for hierarchical_nvls under auto, a number of slices (1, 2, 4
// or 8: auto chooses the pipelining across levels too); its label is the name, with "/M"
// for M > 1 slices. The in-switch algorithms (nvls, hierarchical_nvls) are candidates only
// where the system runs them (SystemSpec::auto_in_switch).
// With protocol: auto (the protocol model) a candidate is also a protocol, and its time at a
// size uses the channels and pieces the library would use there (WorkloadSpec::
// coll_params); its label ends in "/simple", "/ll" or "/ll128".
struct AutoChooser {
  std::vector<std::string> names;
  std::vector<int> slices;  // CollParams::slices per candidate
  std::vector<coll::Protocol> protos;
  std::vector<coll::AlgoCost> costs;
  bool protocol_model = false;
  WorkloadSpec workload;    // channels and pieces per size
  int ranks = 0;
  int domain_size = 0;      // ranks per node (the tree's depth for its Simple piece)
  uint32_t elem_bytes = 1;
  double time_s(size_t i, double bytes) const;  // candidate i's predicted time
  // Index of the cheapest candidate for `bytes` (first one on ties).
  size_t pick(double bytes) const;
  // Every candidate, cheapest first for `bytes` (pick() first; ties in candidate order).
  std::vector<size_t> ranked(double bytes) const;
  std::string label(size_t i) const;
  nlohmann::json to_json() const;  // per candidate label: latency_us, GBps (1 / s_per_byte)
};
AutoChooser make_auto_chooser(const SystemSpec& spec);
// The same on given costs (fabric_costs(spec) above).
AutoChooser make_auto_chooser(const SystemSpec& spec, const coll::FabricCosts& f);

}  // namespace fabricsim
