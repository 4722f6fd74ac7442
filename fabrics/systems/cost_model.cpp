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
#include "models/endpoint/endpoint_params.h"
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
      path[s][d] = coll::PathCost{trips * t, it->second, t};
      // Under the protocol model a route that leaves through a NIC port (numbered after the
      // fabric ports, as Endpoint::via_nic) goes through the network proxy.
      if (w.protocol_model())
        if (const EndpointParams* e = spec.type_of(sdev).find<EndpointParams>("endpoint"))
          for (int port : ports) path[s][d].proxy = path[s][d].proxy || port >= e->ports;
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
    np.reduce_alpha_s += sec(nv.latency_ps);
    np.store_alpha_s += sec(nv.latency_ps);
    if (w.protocol_model()) {
      // NVLS's own fences and flags (engine.h): a reduction's handshake; a store's fence
      // on its own replica, then its flag's multicast and the members' poll.
      const EndpointParams& gpu = *spec.type_of(sdev).find<EndpointParams>("endpoint");
      const double fence = sec(gpu.fence_latency_ps), poll = sec(gpu.flag_latency_ps);
      np.reduce_alpha_s += fence + poll;
      np.store_alpha_s = 2.0 * np.store_alpha_s + fence + poll;
    }
  }
  coll::FabricCosts f;
  f.ranks = n;
  f.domain_size = spec.domain_size;
  f.rings = &spec.rings;
  if (w.protocol_model() && n > 0) {
    // The GPU protocol model's costs, from rank 0's GPU (the shipped systems' ranks are
    // alike) and the workload: per protocol the trips and GPU sync of a dependent step,
    // the wire bytes per data byte and a channel's pass rate.
    const int dev0 = g.endpoints[spec.ranks[0]];
    const EndpointParams& gpu = *spec.type_of(dev0).find<EndpointParams>("endpoint");
    f.protocol_model = true;
    f.base_s = double(w.sync.launch_latency_ps + w.sync.completion_latency_ps) * 1e-12;
    // LL's small stores against full packets on the rank's first link.
    double ll_store = 1.0;
    const std::vector<int>& to1 = routes[dev0][spec.ranks[n > 1 ? 1 : 0]];
    if (gpu.ll_store_bytes > 0 && !to1.empty()) {
      const LinkParams& lp = *link_of.at({dev0, to1.front()});
      const uint32_t st = std::min<uint32_t>(gpu.ll_store_bytes, lp.packet_payload);
      ll_store = lp.framing->efficiency(lp.packet_payload) / lp.framing->efficiency(st);
    }
    for (coll::Protocol p : {coll::Protocol::kSimple, coll::Protocol::kLL, coll::Protocol::kLL128}) {
      coll::ProtocolCosts& pc = f.protocols[int(p)];
      pc.line_factor = 1.0 / coll::protocol_efficiency(p);
      pc.wire_factor = pc.line_factor * (p == coll::Protocol::kLL ? ll_store : 1.0);
      pc.channel_Bps = double(gpu.channel_bps[int(p)]) / 8.0;
      if (p == coll::Protocol::kSimple) {
        pc.trips = 3;
        pc.sync_s = sec(gpu.fence_latency_ps + gpu.flag_latency_ps);
        // Through the proxy (engine.h): the local fence, post, poll, flush, the tail's poll.
        pc.proxy_sync_s = sec(gpu.fence_latency_ps + gpu.proxy_post_latency_ps +
                              gpu.proxy_poll_latency_ps + gpu.proxy_flush_latency_ps +
                              gpu.flag_latency_ps);
      } else {
        pc.trips = 1;
        pc.sync_s = sec(p == coll::Protocol::kLL ? gpu.flag_latency_ps : gpu.ll128_flag_latency_ps);
        pc.proxy_sync_s = sec(gpu.proxy_post_latency_ps) + pc.sync_s;  // post, the lines' poll
      }
    }
  }
  f.path = [path](int s, int d) { return path[s][d]; };
  f.group_Bps = [rate](int r, int grp) { return rate[r][grp]; };
  f.nvls = std::move(nvls);
  f.nvls_switches = std::move(engines);
  return f;
}

double AutoChooser::time_s(size_t i, double bytes) const {
  if (!protocol_model) return costs[i].time_s(bytes);
  const uint64_t count = uint64_t(bytes) / elem_bytes;
  const coll::CollParams cp = workload.coll_params(ranks, count, names[i], protos[i]);
  return costs[i].time_s(bytes, cp.channels, double(cp.chunk_bytes));
}

size_t AutoChooser::pick(double bytes) const {
  size_t best = 0;
  double best_t = time_s(0, bytes);
  for (size_t i = 1; i < costs.size(); ++i) {
    const double t = time_s(i, bytes);
    if (t < best_t) {
      best = i;
      best_t = t;
    }
  }
  return best;
}

std::string AutoChooser::label(size_t i) const {
  std::string l = slices[i] > 1 ? names[i] + "/" + std::to_string(slices[i]) : names[i];
  if (protocol_model) l += std::string("/") + coll::protocol_name(protos[i]);
  return l;
}

nlohmann::json AutoChooser::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  for (size_t i = 0; i < names.size(); ++i) {
    nlohmann::json c = {{"latency_us", costs[i].latency_s * 1e6},
                        {"GBps", costs[i].s_per_byte > 0 ? 1e-9 / costs[i].s_per_byte : 0.0}};
    if (protocol_model) {
      c["base_us"] = costs[i].base_s * 1e6;
      c["step_sync_us"] = costs[i].piece_sync_s * 1e6;
      c["stream_steps"] = costs[i].stream_steps;
      if (costs[i].store_forward) {  // the network proxy's terms (coll::AlgoCost)
        c["proxy_share"] = costs[i].proxy_share;
        c["proxy_step_sync_us"] = costs[i].proxy_sync_s * 1e6;
        c["proxy_nic_GBps"] = costs[i].proxy_Bps * 1e-9;
        c["proxy_channel_frac"] = costs[i].proxy_channel_frac;
      }
    }
    j[label(i)] = c;
  }
  return j;
}

AutoChooser make_auto_chooser(const SystemSpec& spec) {
  const WorkloadSpec& w = spec.workload;
  const coll::FabricCosts f = fabric_costs(spec);
  AutoChooser a;
  a.protocol_model = w.protocol_model();
  a.workload = w;
  a.ranks = int(spec.ranks.size());
  a.elem_bytes = w.elem_bytes;
  // Algorithms: the named one, or (auto) NCCL's for the collective, the in-switch ones
  // where the system runs them (the same checks as naming them: auto_in_switch).
  std::vector<std::string> algos{w.algorithm};
  if (w.algorithm == "auto") {
    algos.clear();
    for (const std::string& name : coll::algorithms_for(w.collective)) {
      // NCCL's algorithms; torus algorithms where the topology declares a torus.
      const coll::AlgoInfo& info = coll::algo_info(w.collective, name);
      if (info.torus ? w.torus.empty() : !info.nccl) continue;
      if (coll::uses_nvls_switches(name) &&
          std::find(spec.auto_in_switch.begin(), spec.auto_in_switch.end(), name) ==
              spec.auto_in_switch.end())
        continue;
      algos.push_back(name);
    }
  }
  // Protocols: the named one, or (auto) Simple, LL and, where every rank allows it, LL128;
  // the in-switch algorithms run Simple only (as NCCL's NVLS).
  bool ll128 = true;
  for (int id : spec.ranks) {
    const EndpointParams* e =
        spec.type_of(spec.graph.endpoints[id]).find<EndpointParams>("endpoint");
    ll128 = ll128 && e && e->ll128;
  }
  for (const std::string& name : algos) {
    std::vector<coll::Protocol> protos{coll::Protocol::kSimple};
    if (w.protocol != "auto") protos = {coll::protocol_from_name(w.protocol)};
    else if (!coll::uses_nvls_switches(name)) {
      protos.push_back(coll::Protocol::kLL);
      if (ll128) protos.push_back(coll::Protocol::kLL128);
    }
    // Channels decide which rails a rail-aligned ring uses; the other algorithms' per-port
    // volumes do not depend on them (and one channel keeps direct's n^2 deps small).
    const int channels = name == "ring" ? w.channels : 1;
    const bool sliced = coll::has_levels(w.collective, name) && w.algorithm == "auto";
    for (int m : sliced ? std::vector<int>{1, 2, 4, 8} : std::vector<int>{w.slices})
      for (coll::Protocol p : protos) {
        a.names.push_back(name);
        a.slices.push_back(m);
        a.protos.push_back(p);
        a.costs.push_back(
            coll::schedule_cost(w.collective, name, channels, w.elem_bytes, w.root, f, m, p));
      }
  }
  return a;
}

}  // namespace fabricsim
