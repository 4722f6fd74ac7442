#include "fabrics/systems/cost_model.h"

#include <algorithm>
#include <map>
#include <memory>
#include <unordered_map>
#include <string>
#include <utility>
#include <vector>

#include "fabrics/topologies/graph.h"
#include "models/collectives/algorithms.h"
#include "models/collectives/algorithms/common.h"
#include "models/core/errors.h"
#include "models/core/packet.h"
#include "models/endpoint/endpoint_params.h"
#include "models/nic/nic_params.h"
#include "models/nvlink/nvls_params.h"
#include "models/switch/switch_params.h"

namespace fabricsim {

namespace {

// Rank classes: the smallest P < n dividing n such that shifting every rank by P is a
// symmetry of the graph, 0 if none. As the flow level's fold (flow_system.cpp), per block
// of P ranks: a device is local to the block of the ranks it links to when they are all
// in one block, global otherwise (or when it links to none); the shift maps the j-th
// local device of block k to the j-th of block k + 1 and every global device to itself.
// It is a symmetry when every rank's device maps to the next block's rank's device and
// every link with a local end maps onto a link of the same type (ports kept on local
// ends). Shortest paths, their port groups and costs are then invariant under it.
int rank_period(const SystemSpec& spec, const std::vector<std::vector<int>>& link_at) {
  const topo::Graph& g = spec.graph;
  const int n = int(spec.ranks.size());
  const size_t D = g.devices.size();
  for (const topo::Device& d : g.devices)
    if (!d.circuit.empty()) return 0;  // light paths change at run time
  std::vector<int> dom(D), local_index(D);
  for (int P = 1; 2 * P <= n; ++P) {
    if (n % P != 0) continue;
    const int blocks = n / P;
    std::fill(dom.begin(), dom.end(), -2);  // -2 unknown, -1 global, else block
    for (int r = 0; r < n; ++r) dom[size_t(g.endpoints[size_t(spec.ranks[size_t(r)])])] = r / P;
    for (size_t v = 0; v < D; ++v) {
      if (dom[v] != -2) continue;
      int k = -2;
      for (int p = 0; p < g.devices[v].ports; ++p) {
        const topo::LinkEnd e = g.physical_peer(int(v), p);
        if (e.device < 0 || !g.devices[size_t(e.device)].terminal) continue;
        const int kd = dom[size_t(e.device)];
        if (kd < 0) { k = -1; break; }  // a terminal that is no rank
        k = (k == -2 || k == kd) ? kd : -1;
      }
      dom[v] = k < 0 ? -1 : k;
    }
    std::vector<std::vector<int>> locals(static_cast<size_t>(blocks));
    for (size_t v = 0; v < D; ++v)
      if (dom[v] >= 0) {
        local_index[v] = int(locals[size_t(dom[v])].size());
        locals[size_t(dom[v])].push_back(int(v));
      }
    bool ok = true;
    for (int k = 1; k < blocks && ok; ++k) {
      ok = locals[size_t(k)].size() == locals[0].size();
      for (size_t j = 0; ok && j < locals[0].size(); ++j)
        ok = g.devices[size_t(locals[size_t(k)][j])].type == g.devices[size_t(locals[0][j])].type;
    }
    const auto image = [&](int v) {
      return dom[size_t(v)] < 0 ? v
                                : locals[size_t((dom[size_t(v)] + 1) % blocks)][size_t(local_index[size_t(v)])];
    };
    for (int r = 0; r < n && ok; ++r)
      ok = image(g.endpoints[size_t(spec.ranks[size_t(r)])]) ==
           g.endpoints[size_t(spec.ranks[size_t((r + P) % n)])];
    for (size_t i = 0; i < g.links.size() && ok; ++i) {
      const topo::Link& l = g.links[i];
      if (dom[size_t(l.a.device)] < 0 && dom[size_t(l.b.device)] < 0) continue;
      const bool a_local = dom[size_t(l.a.device)] >= 0;
      const topo::LinkEnd e = a_local ? l.a : l.b, o = a_local ? l.b : l.a;
      const int ie = image(e.device);
      const topo::LinkEnd far = g.physical_peer(ie, e.port);
      const int li = link_at[size_t(ie)][size_t(e.port)];
      ok = li >= 0 && far.device == image(o.device) &&
           (dom[size_t(o.device)] < 0 || far.port == o.port) && g.links[size_t(li)].type == l.type;
    }
    if (ok) return P;
  }
  return 0;
}

// The point-to-point paths of the cost model, found on demand (topo::PathSearch, the flow
// level's search too: one breadth-first search per destination, kept for every source
// that goes there) and kept per
// (class representative, shifted peer): no table of every rank pair or of every device's
// routes. With a period P, rank s's paths, groups and rates are those of its
// representative s mod P to the peer shifted alike.
class PathFinder {
 public:
  PathFinder(const SystemSpec& spec, bool classes)
      : spec_(&spec), search_(spec.graph, kSearchCacheDevices) {
    const topo::Graph& g = spec.graph;
    link_at_.resize(g.devices.size());
    for (size_t v = 0; v < g.devices.size(); ++v)
      link_at_[v].assign(size_t(g.devices[v].ports), -1);
    for (size_t i = 0; i < g.links.size(); ++i) {
      const topo::Link& l = g.links[i];
      link_at_[size_t(l.a.device)][size_t(l.a.port)] = int(i);
      link_at_[size_t(l.b.device)][size_t(l.b.port)] = int(i);
    }
    n_ = int(spec.ranks.size());
    const WorkloadSpec& w = spec.workload;
    trips_ = w.sync.fence_flag ? 3.0 : 1.0;
    small_ = std::max<uint64_t>(1, w.sync.fence_flag ? w.sync.ack_bytes : 1);
    period_ = classes ? rank_period(spec, link_at_) : 0;
    groups_of_.resize(size_t(n_));
    rate_.resize(size_t(n_));
  }
  int period() const { return period_; }
  int rep(int r) const { return period_ > 0 ? r % period_ : r; }
  // (device, port) -> its link's parameters (link_of.at({device, port})).
  struct LinkOf {
    const PathFinder* pf;
    const LinkParams* at(const std::pair<int, int>& dp) const {
      const int i = pf->link_at_[size_t(dp.first)][size_t(dp.second)];
      FABRICSIM_ASSERT(i >= 0, "fabric_costs: an unlinked port");
      return &pf->spec_->link_types.at(pf->spec_->graph.links[size_t(i)].type);
    }
  };
  LinkOf link_of() const { return LinkOf{this}; }
  coll::PathCost path(int s, int d) {
    const int r = rep(s);
    const int dd = ((d - (s - r)) % n_ + n_) % n_;
    const uint64_t key = uint64_t(uint32_t(r)) << 32 | uint32_t(dd);
    auto it = paths_.find(key);
    if (it == paths_.end()) it = paths_.emplace(key, compute(r, dd)).first;
    return it->second;
  }
  // The group of `ports` (ascending) of rank s's representative: its id, made on first use.
  int group_of(int s, const std::vector<int>& ports) {
    const int r = rep(s);
    std::map<std::vector<int>, int>& groups = groups_of_[size_t(r)];
    auto [it, fresh] = groups.try_emplace(ports, int(groups.size()));
    if (fresh) {
      const LinkOf link_of{this};
      const int sdev = spec_->graph.endpoints[size_t(spec_->ranks[size_t(r)])];
      double bps = 0;
      for (int port : ports) {
        const LinkParams& lp = *link_of.at({sdev, port});
        double port_Bps = double(lp.rate_bps) / 8.0 * lp.framing->efficiency(lp.packet_payload);
        // A port into a scale-out NIC device (the PCIe port of the rail Ethernet configs):
        // its traffic leaves through the NIC's network port, whichever is slower (PCIe Gen5
        // x16 62.65 GB/s of payload, 400G Ethernet 48.72 GB/s at 4,032 B per frame).
        const topo::LinkEnd nic = spec_->graph.peer(sdev, port);
        if (nic.device >= 0)
          if (const NicParams* np = spec_->type_of(nic.device).find<NicParams>("nic")) {
            const int net = np->host_ports;  // the network port follows the host ports
            if (net < spec_->graph.devices[size_t(nic.device)].ports &&
                link_at_[size_t(nic.device)][size_t(net)] >= 0) {
              const LinkParams& wp = *link_of.at({nic.device, net});
              port_Bps = std::min(port_Bps, double(wp.rate_bps) / 8.0 *
                                                wp.framing->efficiency(wp.packet_payload));
            }
          }
        bps += port_Bps;
      }
      rate_[size_t(r)].push_back(bps);
    }
    return it->second;
  }
  double group_Bps(int s, int grp) const { return rate_[size_t(rep(s))][size_t(grp)]; }
  // The ports of group `grp` of rank s.
  std::vector<int> group_ports(int s, int grp) const {
    for (const auto& [ports, id] : groups_of_[size_t(rep(s))])
      if (id == grp) return ports;
    return {};
  }

 private:
  coll::PathCost compute(int s, int d) {
    const SystemSpec& spec = *spec_;
    const topo::Graph& g = spec.graph;
    const LinkOf link_of{this};
    const double trips = trips_;
    const uint64_t small = small_;
    const int sdev = g.endpoints[size_t(spec.ranks[size_t(s)])];
    const int ddev = g.endpoints[size_t(spec.ranks[size_t(d)])];
    const bool found = search_.search(sdev, ddev);
    coll::PathCost pc{1e9, -1};  // unreachable: never chosen
    if (found) {
      const int grp = group_of(s, search_.route_ports(sdev));
      // One small packet along the first shortest path.
      double t = 0;
      int dev = sdev;
      for (int hop = 0; dev != ddev; ++hop) {
        FABRICSIM_ASSERT(hop < 64, "fabric_costs: route loop");
        const int port = search_.route_ports(dev).front();
        const LinkParams& lp = *link_of.at({dev, port});
        t += double(lp.latency_ps) * 1e-12 +
             double(lp.framing->packet_wire_bytes(uint32_t(std::min<uint64_t>(small, lp.packet_payload)))) *
                 8.0 / double(lp.rate_bps);
        dev = g.peer(dev, port).device;
        if (const SwitchParams* sp = spec.type_of(dev).find<SwitchParams>("switch_frame"))
          t += double(sp->pipeline_latency_ps) * 1e-12;
        // A scale-out NIC device adds its pipeline to every packet arriving from a host or
        // the network (models/nic/nic.h): twice per trip between two GPUs behind NICs.
        if (const NicParams* np = spec.type_of(dev).find<NicParams>("nic"))
          t += double(np->pipeline_latency_ps) * 1e-12;
      }
      pc = coll::PathCost{trips * t, grp, t};
      // Under the protocol model a route that leaves through a NIC port (numbered after the
      // fabric ports, as Endpoint::via_nic) goes through the network proxy.
      if (spec.workload.protocol_model())
        if (const EndpointParams* e = spec.type_of(sdev).find<EndpointParams>("endpoint"))
          for (int port : search_.route_ports(sdev)) pc.proxy = pc.proxy || port >= e->ports;
    }
    return pc;
  }

  const SystemSpec* spec_;
  std::vector<std::vector<int>> link_at_;                   // (device, port) -> link index
  int n_ = 0, period_ = 0;
  double trips_ = 1;
  uint64_t small_ = 1;
  std::vector<std::map<std::vector<int>, int>> groups_of_;  // [rep]: ports -> group
  std::vector<std::vector<double>> rate_;                   // [rep][group]: payload B/s
  std::unordered_map<uint64_t, coll::PathCost> paths_;      // (rep << 32 | peer) -> cost
  // Every class representative's paths to one peer search once: up to 4M devices' worth
  // of distances (16 MiB) are kept, all of them on NVL576 (576 x 1,026 devices).
  static constexpr size_t kSearchCacheDevices = size_t(1) << 22;
  topo::PathSearch search_;
};

}  // namespace

coll::FabricCosts fabric_costs(const SystemSpec& spec, bool classes) {
  const topo::Graph& g = spec.graph;
  const auto paths = std::make_shared<PathFinder>(spec, classes);
  const PathFinder::LinkOf link_of = paths->link_of();
  const int n = int(spec.ranks.size());
  const WorkloadSpec& w = spec.workload;
  const uint64_t small = std::max<uint64_t>(1, w.sync.fence_flag ? w.sync.ack_bytes : 1);
  const auto path = [paths](int s, int d) { return paths->path(s, d); };
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
    // One group with the point-to-point traffic over the same links (ascending ports, as
    // routes list them), or a group of its own when they reach no peer point to point.
    const int grp = paths->group_of(s, ports);
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
    f.slots = w.sync.slots;
    // LL's small stores against full packets on the rank's first link.
    double ll_store = 1.0;
    // Rank 0's ports towards rank 1.
    const std::vector<int> to1 = n > 1 ? paths->group_ports(0, path(0, 1).group) : std::vector<int>{};
    if (gpu.ll_store_bytes > 0 && !to1.empty()) {
      const LinkParams& lp = *link_of.at({dev0, to1.front()});
      const uint32_t st = std::min<uint32_t>(gpu.ll_store_bytes, lp.packet_payload);
      ll_store = lp.framing->efficiency(lp.packet_payload) / lp.framing->efficiency(st);
    }
    for (coll::Protocol p : {coll::Protocol::kSimple, coll::Protocol::kLL, coll::Protocol::kLL128}) {
      coll::ProtocolCosts& pc = f.protocols[int(p)];
      pc.proxy_head_s = sec(gpu.proxy_post_latency_ps);  // the receive proxy's post
      pc.line_factor = 1.0 / coll::protocol_efficiency(p);
      pc.wire_factor = pc.line_factor * (p == coll::Protocol::kLL ? ll_store : 1.0);
      pc.channel_Bps = double(gpu.channel_bps[int(p)]) / 8.0;
      if (p == coll::Protocol::kSimple) {
        pc.trips = 3;
        pc.sync_s = sec(gpu.fence_latency_ps + gpu.flag_latency_ps);
        pc.send_trips = 2;  // a send holds its stream until its data and the ack have crossed
        pc.send_s = sec(gpu.fence_latency_ps);  // and its fence has retired
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
  f.period = paths->period();
  f.path = path;
  f.group_Bps = [paths](int r, int grp) { return paths->group_Bps(r, grp); };
  f.nvls = std::move(nvls);
  f.nvls_switches = std::move(engines);
  return f;
}

double AutoChooser::time_s(size_t i, double bytes) const {
  if (!protocol_model) return costs[i].time_s(bytes);
  const uint64_t count = uint64_t(bytes) / elem_bytes;
  const coll::CollParams cp = workload.coll_params(ranks, count, names[i], protos[i]);
  uint64_t piece = cp.chunk_bytes;
  if (cp.tree_nccl_chunks) {  // the tree generator's piece (a tree's half of a channel)
    const int L = domain_size > 0 && domain_size < ranks && ranks % domain_size == 0
                      ? domain_size : ranks;
    const int depth = (L - 1) + coll::detail::ceil_log2(ranks / L);
    piece = coll::nccl_tree_chunk_bytes(
        piece, uint64_t(bytes) / uint64_t(2 * std::max(cp.channels, 1)), depth);
  }
  return costs[i].time_s(bytes, cp.channels, double(piece));
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

std::vector<size_t> AutoChooser::ranked(double bytes) const {
  std::vector<double> t(costs.size());
  std::vector<size_t> order(costs.size());
  for (size_t i = 0; i < costs.size(); ++i) {
    t[i] = time_s(i, bytes);
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return t[x] < t[y]; });
  return order;
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
      if (costs[i].conn_sends > 0) {  // one connection's slots (coll::AlgoCost::connection_s)
        c["conn_steps_ref"] = costs[i].conn_sends;
        c["conn_slot_cycle_us"] = costs[i].slot_cycle_s * 1e6;
        c["conn_fill_us"] = costs[i].conn_first_s * 1e6;
        c["conn_drain_us"] = costs[i].conn_drain_s * 1e6;
      }
    }
    j[label(i)] = c;
  }
  return j;
}

AutoChooser make_auto_chooser(const SystemSpec& spec) {
  return make_auto_chooser(spec, fabric_costs(spec));
}

AutoChooser make_auto_chooser(const SystemSpec& spec, const coll::FabricCosts& f) {
  const WorkloadSpec& w = spec.workload;
  AutoChooser a;
  a.protocol_model = w.protocol_model();
  a.workload = w;
  a.ranks = int(spec.ranks.size());
  a.domain_size = spec.domain_size;
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
    // Channels decide which rails a rail-aligned ring uses, and across nodes which NICs
    // the tree's chains cross (channel c's heads sit on local ranks 2c and 2c + 1 mod L:
    // one channel puts every node crossing on two NICs of the eight); the other
    // algorithms' per-port volumes do not depend on them (and one channel keeps direct's
    // n^2 deps small).
    const bool across_nodes = spec.domain_size > 0 && spec.domain_size < a.ranks;
    const int channels = name == "ring" || (name == "tree" && across_nodes) ? w.channels : 1;
    const bool sliced = coll::has_levels(w.collective, name) && w.algorithm == "auto";
    for (int m : sliced ? std::vector<int>{1, 2, 4, 8} : std::vector<int>{w.slices}) {
      // One schedule per (algorithm, slices), costed for every protocol.
      const std::vector<coll::AlgoCost> costs =
          coll::schedule_costs(w.collective, name, channels, w.elem_bytes, w.root, f, m, protos);
      for (size_t i = 0; i < protos.size(); ++i) {
        a.names.push_back(name);
        a.slices.push_back(m);
        a.protos.push_back(protos[i]);
        a.costs.push_back(costs[i]);
      }
    }
  }
  return a;
}

}  // namespace fabricsim
