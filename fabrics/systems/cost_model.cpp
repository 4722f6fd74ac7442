#include "fabrics/systems/cost_model.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "fabrics/topologies/graph.h"
#include "models/collectives/algorithms.h"
#include "models/core/errors.h"
#include "models/core/packet.h"
#include "models/nvlink/nvls_params.h"
#include "models/switch/switch_params.h"

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
  std::vector<std::map<std::vector<int>, int>> groups_of(n);  // [rank]: ports -> group
  for (int s = 0; s < n; ++s) {
    const int sdev = g.endpoints[spec.ranks[s]];
    std::map<std::vector<int>, int>& groups = groups_of[s];
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
          bps += double(lp.rate_bps) / 8.0 * lp.framing->efficiency(lp.packet_payload);
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
             double(lp.framing->packet_wire_bytes(uint32_t(std::min<uint64_t>(small, lp.packet_payload)))) *
                 8.0 / double(lp.rate_bps);
        dev = g.peer(dev, port).device;
        if (const SwitchParams* sp = spec.type_of(dev).find<SwitchParams>("switch_frame"))
          t += double(sp->pipeline_latency_ps) * 1e-12;
      }
      path[s][d] = coll::PathCost{trips * t, it->second};
    }
  }
  // The in-switch path of every rank: its links into NVLS switches (one port group; the
  // same group as its point-to-point traffic over those links when they are the ports
  // that reach its peers), the header bytes of requests and reads against a full data
  // packet, the share of its traffic each NVLS switch takes, and the latency of one
  // reduction and one store of a small packet.
  std::vector<coll::NvlsPath> nvls(n);
  std::vector<coll::NvlsEngine> engines;
  std::map<int, int> engine_of;  // switch device -> index in engines
  const auto sec = [](uint64_t ps) { return double(ps) * 1e-12; };
  for (int s = 0; s < n; ++s) {
    const int sdev = g.endpoints[spec.ranks[s]];
    std::vector<int> ports;
    std::map<int, double> sw_Bps;  // NVLS switch device -> wire rate of our links to it
    double wire_Bps = 0;
    for (int port = 0; port < g.devices[sdev].ports; ++port) {
      const topo::LinkEnd e = g.peer(sdev, port);
      if (e.device < 0) continue;
      const NvlsParams* nv = spec.type_of(e.device).find<NvlsParams>("nvls");
      if (!nv || !nv->enabled) continue;
      ports.push_back(port);
      const double r = double(link_of.at({sdev, port})->rate_bps) / 8.0;
      sw_Bps[e.device] += r;
      wire_Bps += r;
      if (engine_of.try_emplace(e.device, int(engines.size())).second)
        engines.push_back({double(nv->reduce_Bps), double(nv->multicast_Bps)});
    }
    if (ports.empty()) continue;
    coll::NvlsPath& np = nvls[s];
    std::vector<int> key = ports;
    std::map<std::vector<int>, int>& groups = groups_of[s];
    int grp = -1;
    for (const auto& [k, id] : groups) {
      std::vector<int> sorted = k;
      std::sort(sorted.begin(), sorted.end());
      if (sorted == key) grp = id;
    }
    if (grp < 0) {  // links that reach no peer point to point: a group of their own
      grp = int(rate[s].size());
      groups.emplace(key, grp);
      double bps = 0;
      for (int port : ports) {
        const LinkParams& lp = *link_of.at({sdev, port});
        bps += double(lp.rate_bps) / 8.0 * lp.framing->efficiency(lp.packet_payload);
      }
      rate[s].push_back(bps);
    }
    np.group = grp;
    for (const auto& [dev, r] : sw_Bps) np.switches.emplace_back(engine_of.at(dev), r / wire_Bps);
    // Costs on the rank's first NVLS link (the links of a group are alike on every
    // shipped system): one small packet's serialisation, the link latency and the
    // switch's pipeline per hop; the engines pass one small packet.
    const LinkParams& lp = *link_of.at({sdev, ports.front()});
    const int nvls_switch = g.peer(sdev, ports.front()).device;
    const SwitchParams& sp = *spec.type_of(nvls_switch).find<SwitchParams>("switch_frame");
    const NvlsParams& nv = *spec.type_of(nvls_switch).find<NvlsParams>("nvls");
    const double full = double(lp.framing->packet_wire_bytes(lp.packet_payload));
    np.req_bytes = double(lp.framing->packet_wire_bytes(0, PacketKind::kNvlsReq)) / full;
    np.read_bytes = double(lp.framing->packet_wire_bytes(0, PacketKind::kNvlsRead)) / full;
    const uint32_t one = uint32_t(std::min<uint64_t>(small, lp.packet_payload));
    const auto ser = [&](PacketKind k, uint32_t payload) {
      return double(lp.framing->packet_wire_bytes(payload, k)) * 8.0 / double(lp.rate_bps);
    };
    const double lat = sec(lp.latency_ps), pipe = sec(sp.pipeline_latency_ps);
    const auto engine = [&](uint64_t Bps) { return Bps ? double(one) / double(Bps) : 0.0; };
    np.reduce_alpha_s = ser(PacketKind::kNvlsReq, 0) + lat + pipe +         // request up
                        ser(PacketKind::kNvlsRead, 0) + lat +               // read down
                        ser(PacketKind::kNvlsResp, one) + lat + pipe +      // answer up
                        engine(nv.reduce_Bps) +                        // reduction
                        ser(PacketKind::kNvlsResult, one) + lat;            // result down
    np.store_alpha_s = ser(PacketKind::kNvlsMcast, one) + lat + pipe +      // store up
                       engine(nv.multicast_Bps) +                      // multicast
                       ser(PacketKind::kNvlsData, one) + lat;               // replica down
  }
  coll::FabricCosts f;
  f.ranks = n;
  f.domain_size = spec.domain_size;
  f.path = [path](int s, int d) { return path[s][d]; };
  f.group_Bps = [rate](int r, int grp) { return rate[r][grp]; };
  f.nvls = std::move(nvls);
  f.nvls_switches = std::move(engines);
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
    // In-switch algorithms are candidates where the system runs them (the same checks as
    // naming them: SystemSpec::auto_in_switch).
    if (coll::uses_nvls_switches(name) &&
        std::find(spec.auto_in_switch.begin(), spec.auto_in_switch.end(), name) ==
            spec.auto_in_switch.end())
      continue;
    // Torus algorithms are candidates where the topology declares a torus.
    if (coll::algo_info(w.collective, name).torus && w.torus.empty()) continue;
    // Channels decide which rails a rail-aligned ring uses; the other algorithms' per-port
    // volumes do not depend on them (and one channel keeps direct's n^2 deps small).
    const int channels = name == "ring" ? w.channels : 1;
    const bool sliced = name == "hierarchical" || name == "hierarchical_nvls";
    for (int m : sliced ? std::vector<int>{1, 2, 4, 8} : std::vector<int>{1}) {
      a.names.push_back(name);
      a.slices.push_back(m);
      a.costs.push_back(
          coll::schedule_cost(w.collective, name, channels, w.elem_bytes, w.root, f, m));
    }
  }
  return a;
}

}  // namespace fabricsim
