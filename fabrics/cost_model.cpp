#include "fabrics/cost_model.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "fabrics/topology.h"
#include "models/collectives/algorithms.h"
#include "models/core/errors.h"

namespace fabricsim {

coll::FabricCosts fabric_costs(const SystemSpec& spec) {
  const topo::Graph& g = spec.graph;
  const topo::Routes routes = topo::compute_routes(g);
  std::map<std::pair<int, int>, const LinkParams*> link_of;  // (device, port) -> its link
  for (const topo::Link& l : g.links) {
    const LinkParams* lp = &spec.link_types.at(l.type);
    link_of[{l.a.device, l.a.port}] = lp;
    link_of[{l.b.device, l.b.port}] = lp;
  }
  const int n = int(spec.ranks.size());
  const WorkloadSpec& w = spec.workload;
  const double trips = w.sync.fence_flag ? 3.0 : 1.0;
  const uint64_t small = std::max<uint64_t>(1, w.sync.fence_flag ? w.sync.ack_bytes : 1);
  std::vector<std::vector<coll::PathCost>> path(n, std::vector<coll::PathCost>(n));
  std::vector<std::vector<double>> rate(n);  // [rank][group]
  for (int s = 0; s < n; ++s) {
    const int sdev = g.endpoints[spec.ranks[s]];
    std::map<std::vector<int>, int> groups;
    for (int d = 0; d < n; ++d) {
      if (d == s) continue;
      const int dst_id = spec.ranks[d];
      const std::vector<int>& ports = routes[sdev][dst_id];
      if (ports.empty()) {  // unreachable: never chosen
        path[s][d] = coll::PathCost{1e9, -1};
        continue;
      }
      auto [it, fresh] = groups.try_emplace(ports, int(groups.size()));
      if (fresh) {
        double bps = 0;
        for (int port : ports) {
          const LinkParams& lp = *link_of.at({sdev, port});
          bps += double(lp.rate_bps) / 8.0 * lp.framing.efficiency(lp.packet_payload);
        }
        rate[s].push_back(bps);
      }
      // One small packet along the first shortest path.
      double t = 0;
      int dev = sdev;
      for (int hop = 0; dev != g.endpoints[dst_id]; ++hop) {
        FABRICSIM_ASSERT(hop < 64, "fabric_costs: route loop");
        const int port = routes[dev][dst_id].front();
        const LinkParams& lp = *link_of.at({dev, port});
        t += double(lp.latency_ps) * 1e-12 +
             double(lp.framing.packet_wire_bytes(uint32_t(std::min<uint64_t>(small, lp.packet_payload)))) *
                 8.0 / double(lp.rate_bps);
        dev = g.peer(dev, port).device;
        if (g.devices[dev].is_switch)
          t += double(spec.device_types.at(g.devices[dev].type).sw.pipeline_latency_ps) * 1e-12;
      }
      path[s][d] = coll::PathCost{trips * t, it->second};
    }
  }
  coll::FabricCosts f;
  f.ranks = n;
  f.domain_size = spec.domain_size;
  f.path = [path](int s, int d) { return path[s][d]; };
  f.group_Bps = [rate](int r, int grp) { return rate[r][grp]; };
  return f;
}

size_t AutoChooser::pick(double bytes) const {
  size_t best = 0;
  for (size_t i = 1; i < costs.size(); ++i)
    if (costs[i].time_s(bytes) < costs[best].time_s(bytes)) best = i;
  return best;
}

std::string AutoChooser::label(size_t i) const {
  return slices[i] > 1 ? names[i] + "/" + std::to_string(slices[i]) : names[i];
}

nlohmann::json AutoChooser::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  for (size_t i = 0; i < names.size(); ++i)
    j[label(i)] = {{"latency_us", costs[i].latency_s * 1e6},
                   {"GBps", costs[i].s_per_byte > 0 ? 1e-9 / costs[i].s_per_byte : 0.0}};
  return j;
}

AutoChooser make_auto_chooser(const SystemSpec& spec) {
  const WorkloadSpec& w = spec.workload;
  const coll::FabricCosts f = fabric_costs(spec);
  AutoChooser a;
  for (const std::string& name : coll::algorithms_for(w.collective)) {
    // In-switch algorithms need NVLS switches and have no cost model here: never chosen.
    if (coll::uses_nvls_switches(name)) continue;
    // Channels decide which rails a rail-aligned ring uses; the other algorithms' per-port
    // volumes do not depend on them (and one channel keeps direct's n^2 deps small).
    const int channels = name == "ring" ? w.channels : 1;
    for (int m : name == "hierarchical" ? std::vector<int>{1, 2, 4, 8} : std::vector<int>{1}) {
      a.names.push_back(name);
      a.slices.push_back(m);
      a.costs.push_back(
          coll::schedule_cost(w.collective, name, channels, w.elem_bytes, w.root, f, m));
    }
  }
  return a;
}

}  // namespace fabricsim
