#include "fabrics/systems/rings.h"

#include <algorithm>
#include <cstdint>
#include <map>

#include "fabrics/topologies/graph.h"
#include "models/collectives/algorithms.h"

namespace fabricsim {

namespace {

// Depth-first search for one ring under a load ceiling; gives up after `budget` steps.
class RingSearch {
 public:
  RingSearch(int n, const std::vector<std::vector<std::vector<int>>>& ports,
             const std::vector<std::vector<double>>& load, double ceiling)
      : n_(n), ports_(ports), load_(load), ceiling_(ceiling) {}

  bool find(std::vector<int>& ring) {
    ring.assign(1, 0);
    std::vector<char> used(size_t(n_), 0);
    used[0] = 1;
    return extend(ring, used);
  }

  // The busiest load of a's ports after a hop a -> b, or -1 if it breaks the ceiling.
  double after(int a, int b) const {
    const std::vector<int>& ps = ports_[size_t(a)][size_t(b)];
    if (ps.empty()) return -1;
    double most = 0;
    for (int p : ps) most = std::max(most, load_[size_t(a)][size_t(p)] + 1.0 / double(ps.size()));
    return most <= ceiling_ + 1e-9 ? most : -1;
  }

 private:
  bool extend(std::vector<int>& ring, std::vector<char>& used) {
    if (++steps_ > kBudget) return false;
    const int a = ring.back();
    if (int(ring.size()) == n_) return after(a, ring.front()) >= 0;
    std::vector<std::pair<double, int>> next;
    for (int b = 0; b < n_; ++b)
      if (!used[size_t(b)]) {
        const double l = after(a, b);
        if (l >= 0) next.emplace_back(l, b);
      }
    std::sort(next.begin(), next.end());
    for (const auto& [l, b] : next) {
      ring.push_back(b);
      used[size_t(b)] = 1;
      if (extend(ring, used)) return true;
      used[size_t(b)] = 0;
      ring.pop_back();
    }
    return false;
  }

  static constexpr uint64_t kBudget = 200000;
  int n_;
  const std::vector<std::vector<std::vector<int>>>& ports_;
  const std::vector<std::vector<double>>& load_;
  double ceiling_;
  uint64_t steps_ = 0;
};

}  // namespace

std::vector<std::vector<int>> search_rings(int ranks, int channels, const PortsOf& ports_of) {
  const int n = ranks;
  std::vector<std::vector<std::vector<int>>> ports(static_cast<size_t>(n));
  for (auto& row : ports) row.resize(static_cast<size_t>(n));
  int most_port = 0;
  double step = 1.0;  // the smallest load a hop adds
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b)
      if (a != b) {
        ports[size_t(a)][size_t(b)] = ports_of(a, b);
        for (int p : ports[size_t(a)][size_t(b)]) most_port = std::max(most_port, p + 1);
        if (!ports[size_t(a)][size_t(b)].empty())
          step = std::min(step, 1.0 / double(ports[size_t(a)][size_t(b)].size()));
      }
  std::vector<std::vector<double>> load(size_t(n), std::vector<double>(size_t(most_port), 0.0));
  std::vector<std::vector<int>> rings;
  for (int c = 0; c < channels; ++c) {
    double busiest = 0;
    for (const auto& l : load)
      for (double x : l) busiest = std::max(busiest, x);
    std::vector<int> ring;
    bool found = false;
    // The lowest ceiling a ring fits under, in steps of the smallest hop load.
    for (double ceiling = step; ceiling <= busiest + double(n) + 1; ceiling += step)
      if (RingSearch(n, ports, load, ceiling).find(ring)) {
        found = true;
        break;
      }
    if (!found) return {};
    for (int i = 0; i < n; ++i) {
      const int a = ring[size_t(i)], b = ring[size_t((i + 1) % n)];
      const std::vector<int>& ps = ports[size_t(a)][size_t(b)];
      for (int p : ps) load[size_t(a)][size_t(p)] += 1.0 / double(ps.size());
    }
    rings.push_back(ring);
  }
  return rings;
}

std::vector<std::vector<int>> topology_rings(const SystemSpec& spec) {
  const int n = int(spec.ranks.size());
  const int channels = std::max(spec.workload.channels, 1);
  if (n <= 2) return {};
  if (spec.domain_size > 0 && spec.domain_size < n)
    return coll::rail_ring_orders(n, spec.domain_size, channels);
  const topo::Graph& g = spec.graph;
  const topo::Routes& routes = spec.routes();  // kept for elaboration and the ceiling
  const auto ports_of = [&](int a, int b) {
    return routes[size_t(g.endpoints[size_t(spec.ranks[size_t(a)])])]
                 [size_t(spec.ranks[size_t(b)])];
  };
  // Every rank reaches every other over the same ports: any ring is as good as another.
  bool uniform = true;
  for (int a = 0; a < n && uniform; ++a) {
    std::vector<int> first;
    for (int b = 0; b < n && uniform; ++b) {
      if (a == b) continue;
      std::vector<int> ps = ports_of(a, b);
      std::sort(ps.begin(), ps.end());
      if (first.empty()) first = ps;
      uniform = ps == first;
    }
  }
  if (uniform) return {};
  return search_rings(n, channels, ports_of);
}

}  // namespace fabricsim
