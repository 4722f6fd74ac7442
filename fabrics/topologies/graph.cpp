#include "fabrics/topologies/graph.h"

#include <algorithm>
#include <deque>

namespace fabricsim::topo {

int Graph::add_device(Device d) {
  const int idx = int(devices.size());
  if (d.terminal) {
    d.endpoint_id = int(endpoints.size());
    endpoints.push_back(idx);
  }
  by_name[d.name] = idx;
  devices.push_back(std::move(d));
  return idx;
}

void Graph::index_ports() {
  physical_.assign(devices.size(), {});
  for (size_t i = 0; i < devices.size(); ++i) physical_[i].assign(devices[i].ports, LinkEnd{});
  for (const Link& l : links) {
    physical_[l.a.device][l.a.port] = l.b;
    physical_[l.b.device][l.b.port] = l.a;
  }
  index_circuits();
}

void Graph::index_circuits() {
  peers_ = physical_;
  for (size_t c = 0; c < devices.size(); ++c) {
    const std::vector<int>& map = devices[c].circuit;
    for (size_t p = 0; p < map.size(); ++p) {
      const LinkEnd near = physical_[c][p];
      if (near.device < 0) continue;
      const int q = map[p];
      const LinkEnd far = q >= 0 ? physical_[c][size_t(q)] : LinkEnd{};
      peers_[size_t(near.device)][size_t(near.port)] = far;
    }
  }
}

void Graph::set_circuit(int device, std::vector<int> circuit) {
  devices[size_t(device)].circuit = std::move(circuit);
  index_circuits();
}

Reach::Reach(const Graph& g) : g_(g), component_(g.devices.size(), -1) {
  std::deque<int> q;
  int next = 0;
  for (size_t s = 0; s < g.devices.size(); ++s) {
    if (!g.devices[s].forwards || component_[s] >= 0) continue;
    component_[s] = next;
    q.assign(1, int(s));
    while (!q.empty()) {
      const int u = q.front();
      q.pop_front();
      for (int p = 0; p < g.devices[u].ports; ++p) {
        const LinkEnd nb = g.peer(u, p);
        if (nb.device < 0 || !g.devices[nb.device].forwards || component_[nb.device] >= 0) continue;
        component_[nb.device] = next;
        q.push_back(nb.device);
      }
    }
    ++next;
  }
  touches_.resize(g.devices.size());
  for (size_t d = 0; d < g.devices.size(); ++d) {
    if (!g.devices[d].terminal) continue;
    std::vector<int>& t = touches_[d];
    for (int p = 0; p < g.devices[d].ports; ++p) {
      const LinkEnd nb = g.peer(int(d), p);
      if (nb.device >= 0 && component_[nb.device] >= 0) t.push_back(component_[nb.device]);
    }
    std::sort(t.begin(), t.end());
    t.erase(std::unique(t.begin(), t.end()), t.end());
  }
}

bool Reach::connected(int a, int b) const {
  if (a == b) return true;
  for (int p = 0; p < g_.devices[a].ports; ++p)
    if (g_.peer(a, p).device == b) return true;
  const std::vector<int>&ta = touches_[a], &tb = touches_[b];
  for (size_t i = 0, j = 0; i < ta.size() && j < tb.size();) {
    if (ta[i] == tb[j]) return true;
    ta[i] < tb[j] ? ++i : ++j;
  }
  return false;
}

Graph without_links(const Graph& g, const std::vector<char>& removed) {
  Graph out = g;
  out.links.clear();
  for (size_t i = 0; i < g.links.size(); ++i)
    if (i >= removed.size() || !removed[i]) out.links.push_back(g.links[i]);
  out.index_ports();
  return out;
}

Routes compute_routes(const Graph& g) {
  const int n = int(g.devices.size());
  const int e = int(g.endpoints.size());
  Routes routes(n, std::vector<std::vector<int>>(e));
  std::vector<int> dist(n);
  std::vector<int> ports;
  std::deque<int> q;
  for (int dst_id = 0; dst_id < e; ++dst_id) {
    // Breadth-first from the destination; only forwarding devices relay.
    const int dst = g.endpoints[dst_id];
    std::fill(dist.begin(), dist.end(), -1);
    dist[dst] = 0;
    q.assign(1, dst);
    while (!q.empty()) {
      const int u = q.front();
      q.pop_front();
      if (u != dst && !g.devices[u].forwards) continue;
      for (int p = 0; p < g.devices[u].ports; ++p) {
        const LinkEnd nb = g.peer(u, p);
        if (nb.device < 0 || dist[nb.device] >= 0) continue;
        dist[nb.device] = dist[u] + 1;
        q.push_back(nb.device);
      }
    }
    for (int v = 0; v < n; ++v) {
      if (v == dst || dist[v] < 0) continue;
      // Collected in a scratch list, then copied once: one exact allocation per route list
      // (growing each list by push_back cost several, over devices x endpoints lists).
      ports.clear();
      for (int p = 0; p < g.devices[v].ports; ++p) {
        const LinkEnd nb = g.peer(v, p);
        if (nb.device < 0 || dist[nb.device] != dist[v] - 1) continue;
        if (nb.device != dst && !g.devices[nb.device].forwards) continue;
        ports.push_back(p);
      }
      if (!ports.empty()) routes[v][dst_id].assign(ports.begin(), ports.end());
    }
  }
  return routes;
}

}  // namespace fabricsim::topo

namespace fabricsim::topo {

PathSearch::PathSearch(const Graph& g, size_t cache_devices)
    : g_(g), cache_left_(cache_devices), scratch_(g.devices.size(), -1) {}

bool PathSearch::search(int from, int to) {
  to_ = to;
  if (auto it = cached_.find(to); it != cached_.end()) {
    dist_ = it->second.data();
    return from != to && dist_[size_t(from)] > 0;
  }
  for (int v : touched_) scratch_[size_t(v)] = -1;
  touched_.clear();
  // A whole search when it can be kept (every source of this destination then reads it);
  // otherwise until `from` is reached (the distances route_ports reads, those below
  // from's, are complete either way).
  const bool keep = cache_left_ >= g_.devices.size();
  std::vector<int> level{to}, next;
  scratch_[size_t(to)] = 0;
  touched_.push_back(to);
  bool found = false;
  // Not kept: it stops at `from` itself, mid-level (on a 16k-GPU fabric that level holds
  // thousands of devices).
  const auto stop = [&] { return found && !keep; };
  for (int depth = 0; !level.empty() && !stop(); ++depth) {
    next.clear();
    for (size_t i = 0; i < level.size() && !stop(); ++i) {
      const int u = level[i];
      if (u != to && !g_.devices[size_t(u)].forwards) continue;
      for (int p = 0; p < g_.devices[size_t(u)].ports && !stop(); ++p) {
        const LinkEnd nb = g_.peer(u, p);
        if (nb.device < 0 || scratch_[size_t(nb.device)] >= 0) continue;
        scratch_[size_t(nb.device)] = depth + 1;
        touched_.push_back(nb.device);
        next.push_back(nb.device);
        found = found || nb.device == from;
      }
    }
    level.swap(next);
  }
  if (keep) {
    cache_left_ -= g_.devices.size();
    std::vector<int>& d = cached_[to];
    d = scratch_;
    dist_ = d.data();
  } else {
    dist_ = scratch_.data();
  }
  return found;
}

void PathSearch::route_ports(int v, std::vector<int>& out) const {
  out.clear();
  for (int p = 0; p < g_.devices[size_t(v)].ports; ++p) {
    const LinkEnd nb = g_.peer(v, p);
    if (nb.device < 0 || dist_[size_t(nb.device)] != dist_[size_t(v)] - 1) continue;
    if (nb.device != to_ && !g_.devices[size_t(nb.device)].forwards) continue;
    out.push_back(p);
  }
}

}  // namespace fabricsim::topo
