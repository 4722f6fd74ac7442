#include "fabrics/systems/ceiling.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <tuple>
#include <utility>

#include "models/collectives/algorithms.h"
#include "models/pcie/host_path.h"

namespace fabricsim {

namespace {

// Breadth-first distances and shortest-path counts from endpoint device `src`, relaying
// through forwarding devices only (as compute_routes).
void bfs(const topo::Graph& g, int src, std::vector<int>& dist, std::vector<double>& count) {
  dist.assign(g.devices.size(), -1);
  count.assign(g.devices.size(), 0.0);
  dist[src] = 0;
  count[src] = 1.0;
  std::deque<int> q{src};
  while (!q.empty()) {
    const int u = q.front();
    q.pop_front();
    if (u != src && !g.devices[u].forwards) continue;
    for (int p = 0; p < g.devices[u].ports; ++p) {
      const topo::LinkEnd nb = g.peer(u, p);
      if (nb.device < 0) continue;
      if (dist[nb.device] < 0) {
        dist[nb.device] = dist[u] + 1;
        q.push_back(nb.device);
      }
      if (dist[nb.device] == dist[u] + 1) count[nb.device] += count[u];
    }
  }
}

}  // namespace

Ceiling busbw_ceiling(const SystemSpec& spec) {
  const topo::Graph& g = spec.graph;
  const WorkloadSpec& w = spec.workload;
  const int n = int(spec.ranks.size());
  Ceiling c;
  if (n < 2) return c;
  coll::CollParams cp = w.coll_params(n, uint64_t(n) * uint64_t(w.channels) * 4096);
  cp.channels = w.algo_channels(w.algorithm);
  cp.rings = &spec.rings;
  // The bound counts point-to-point sends: `auto` (a different schedule per size) and the
  // in-switch nvls algorithms (no sends; docs/models.md derives their bound) get none.
  if (w.algorithm == "auto" || coll::uses_nvls_switches(w.algorithm)) {
    c.limited_by = "not computed for algorithm " + w.algorithm;
    return c;
  }
  const coll::Schedule s = coll::make_schedule(w.collective, w.algorithm, cp, spec.domain_size);
  const double bus_bytes = double(cp.count) * w.elem_bytes *
                           coll::busbw_factor(coll::algo_info(w.collective, w.algorithm), n);
  const topo::Routes& routes = spec.routes();

  const size_t nd = g.devices.size();
  // The host path of every root complex (nullptr for other devices).
  std::vector<const HostPathParams*> host_of(nd);
  std::vector<int> hosts;  // the devices with a host path, in device order
  for (size_t d = 0; d < nd; ++d) {
    host_of[d] = spec.type_of(int(d)).find<HostPathParams>("host_path");
    if (host_of[d]) hosts.push_back(int(d));
  }
  std::vector<std::vector<double>> tx(nd), rx(nd);
  for (size_t d = 0; d < nd; ++d) {
    tx[d].assign(g.devices[d].ports, 0.0);
    rx[d].assign(g.devices[d].ports, 0.0);
  }
  std::vector<double> host_load(nd, 0.0);  // bytes crossing each root complex
  std::vector<std::vector<int>> dist(nd);
  std::vector<std::vector<double>> count(nd);
  auto from = [&](int dev) {
    if (dist[dev].empty()) bfs(g, dev, dist[dev], count[dev]);
  };
  // The sends' bytes by (destination endpoint id, source endpoint id), for the switch
  // links below: a flat list, stably sorted after the loop, so that each pair's bytes add
  // up in send order (576 ranks' all-to-all: 331k pairs, a std::map node each before).
  struct PairSend {
    int dst_id, src_id;
    double bytes;
  };
  std::vector<PairSend> pair_sends;
  for (int r = 0; r < n; ++r) {
    const int src_id = spec.ranks[r];
    const int src = g.endpoints[src_id];
    for (const coll::Op& op : s.programs[r].ops) {
      if (op.kind != coll::OpKind::kSend) continue;
      const double b = double(op.count) * w.elem_bytes;
      const int dst_id = spec.ranks[op.peer];
      const int dst = g.endpoints[dst_id];
      pair_sends.push_back(PairSend{dst_id, src_id, b});
      const std::vector<int>& out = routes[src][dst_id];
      const std::vector<int>& in = routes[dst][src_id];
      for (int p : out) tx[src][p] += b / double(out.size());
      for (int p : in) rx[dst][p] += b / double(in.size());
      if (hosts.empty()) continue;
      from(src);
      from(dst);
      // Only the root complexes (every send scanning every device was most of this
      // function's time on 576 ranks, whose fabric has none).
      for (const int d : hosts) {
        // On every shortest path: on one, and all of them pass through it.
        if (dist[src][d] >= 0 && dist[dst][d] >= 0 &&
            dist[src][d] + dist[dst][d] == dist[src][dst] &&
            count[src][d] * count[dst][d] == count[src][dst])
          host_load[d] += b;
      }
    }
  }

  // Switch egress links: every switch splits what it forwards towards a destination evenly
  // over that destination's routes (what route_select does on average), hop by hop from
  // the sources down the shortest-path DAG. Catches tapered or shared switch-to-switch links.
  std::vector<std::vector<double>> sw_tx(nd);
  for (size_t d = 0; d < nd; ++d)
    if (g.devices[d].forwards) sw_tx[d].assign(g.devices[d].ports, 0.0);
  std::vector<double> flow(nd, 0.0);
  std::vector<std::vector<int>> at_dist;
  std::stable_sort(pair_sends.begin(), pair_sends.end(),
                   [](const PairSend& x, const PairSend& y) {
                     return std::tie(x.dst_id, x.src_id) < std::tie(y.dst_id, y.src_id);
                   });
  for (auto it = pair_sends.begin(); it != pair_sends.end();) {
    const int dst_id = it->dst_id;
    const int dst = g.endpoints[dst_id];
    from(dst);
    std::fill(flow.begin(), flow.end(), 0.0);
    while (it != pair_sends.end() && it->dst_id == dst_id) {
      const int src_id = it->src_id;
      double pair = 0.0;  // the pair's bytes, summed in send order
      for (; it != pair_sends.end() && it->dst_id == dst_id && it->src_id == src_id; ++it)
        pair += it->bytes;
      flow[g.endpoints[src_id]] += pair;
    }
    at_dist.clear();
    for (size_t d = 0; d < nd; ++d) {
      const int k = dist[dst][d];
      if (k <= 0) continue;
      if (int(at_dist.size()) <= k) at_dist.resize(k + 1);
      at_dist[k].push_back(int(d));
    }
    for (int k = int(at_dist.size()) - 1; k >= 1; --k)
      for (int u : at_dist[k]) {
        const std::vector<int>& ports = routes[u][dst_id];
        if (flow[u] <= 0 || ports.empty()) continue;
        const double share = flow[u] / double(ports.size());
        for (int p : ports) {
          if (g.devices[u].forwards) sw_tx[u][p] += share;
          flow[g.peer(u, p).device] += share;
        }
      }
  }

  // Keeps the tightest bound of each kind.
  std::vector<std::string> kinds;
  auto add = [&](const std::string& kind, const std::string& resource, double load_bytes,
                 double rate_Bps) {
    if (load_bytes <= 0) return;
    const double busbw = bus_bytes / (load_bytes / rate_Bps) / 1e9;
    for (size_t i = 0; i < kinds.size(); ++i)
      if (kinds[i] == kind) {
        if (busbw < c.bounds[i].busbw_GBps) c.bounds[i] = {resource, busbw};
        return;
      }
    kinds.push_back(kind);
    c.bounds.push_back({resource, busbw});
  };
  for (const topo::Link& l : g.links) {
    const LinkParams& lp = spec.link_types.at(l.type);
    const double rate = double(lp.rate_bps) / 8.0 * lp.framing->efficiency(lp.packet_payload);
    for (const topo::LinkEnd& e : {l.a, l.b}) {
      const std::string port = g.devices[e.device].name + ".port[" + std::to_string(e.port) + "]";
      if (g.devices[e.device].forwards) {
        add("switch tx", port + " tx", sw_tx[e.device][e.port], rate);
        continue;
      }
      add("endpoint tx", port + " tx", tx[e.device][e.port], rate);
      add("endpoint rx", port + " rx", rx[e.device][e.port], rate);
    }
  }
  for (size_t d = 0; d < nd; ++d) {
    if (!host_of[d]) continue;
    const HostPathParams& h = *host_of[d];
    const std::string& name = g.devices[d].name;
    // Up and down carry the same bytes: one bound for the data path.
    add(name + " data path", name + " root complex data path", host_load[d],
        double(h.rc_bps) / 8.0);
    if (!h.p2p)
      add(name + " memory", name + " host memory", 2.0 * host_load[d], double(h.memory_bps) / 8.0);
  }
  c.busbw_GBps = std::numeric_limits<double>::infinity();
  // Ties (within rounding of the different summation orders) go to the kind listed first:
  // a switch port that carries exactly what an endpoint port carries does not displace it.
  for (const CeilingBound& x : c.bounds)
    if (x.busbw_GBps < c.busbw_GBps * (1 - 1e-9)) {
      c.busbw_GBps = x.busbw_GBps;
      c.limited_by = x.resource;
    }
  if (c.bounds.empty()) c.busbw_GBps = 0;
  return c;
}

nlohmann::json ceiling_json(const Ceiling& c) {
  nlohmann::json j;
  j["busbw_GBps"] = c.busbw_GBps;
  j["limited_by"] = c.limited_by;
  nlohmann::json b = nlohmann::json::array();
  for (const CeilingBound& x : c.bounds)
    b.push_back({{"resource", x.resource}, {"busbw_GBps", x.busbw_GBps}});
  j["bounds"] = b;
  return j;
}

}  // namespace fabricsim
