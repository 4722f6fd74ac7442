// The system graph and shortest-path routing (fabrics/topologies/graph.h). Graphs are built by
// hand here, without YAML, the way the topology builders emit them.
#include "fabrics/topologies/graph.h"

#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace fabricsim::topo {
namespace {

int add_endpoint(Graph& g, const std::string& name, int ports) {
  Device d;
  d.name = name;
  d.type = "gpu";
  d.terminal = true;
  d.ports = ports;
  return g.add_device(d);
}

int add_switch(Graph& g, const std::string& name, int ports) {
  Device d;
  d.name = name;
  d.type = "nvswitch";
  d.forwards = true;
  d.ports = ports;
  return g.add_device(d);
}

void link(Graph& g, int a, int ap, int b, int bp) {
  Link l;
  l.a = LinkEnd{a, ap};
  l.b = LinkEnd{b, bp};
  l.type = "nvlink";
  g.links.push_back(l);
}

std::vector<int> iota_vec(int first, int count) {
  std::vector<int> v(count);
  std::iota(v.begin(), v.end(), first);
  return v;
}

// DGX-H100-like: 8 GPUs x 18 NVLink ports, 4 NVSwitches x 64 ports, 5/4/4/5 links from
// every GPU to switches 0..3, wired exactly as the switched_node builder does: GPU g's
// ports are numbered consecutively across switches, switch s's port g*lps[s]+k.
struct Dgx {
  static constexpr int kGpus = 8, kGpuPorts = 18, kSwitches = 4, kSwitchPorts = 64;
  const std::vector<int> lps{5, 4, 4, 5};
  Graph g;
  std::vector<int> gpus, sws;
  Dgx() {
    for (int i = 0; i < kGpus; ++i)
      gpus.push_back(add_endpoint(g, "gpu" + std::to_string(i), kGpuPorts));
    for (int s = 0; s < kSwitches; ++s)
      sws.push_back(add_switch(g, "nvswitch" + std::to_string(s), kSwitchPorts));
    for (int gi = 0; gi < kGpus; ++gi) {
      int gport = 0;
      for (int s = 0; s < kSwitches; ++s)
        for (int k = 0; k < lps[s]; ++k) link(g, gpus[gi], gport++, sws[s], gi * lps[s] + k);
    }
    g.index_ports();
  }
};

TEST(Topology, AddDeviceAssignsEndpointIdsInDeclarationOrder) {
  Graph g;
  const int e0 = add_endpoint(g, "a", 1);
  const int s0 = add_switch(g, "s", 2);
  const int e1 = add_endpoint(g, "b", 1);
  EXPECT_EQ(e0, 0);
  EXPECT_EQ(s0, 1);
  EXPECT_EQ(e1, 2);
  EXPECT_EQ(g.devices[e0].endpoint_id, 0);
  EXPECT_EQ(g.devices[s0].endpoint_id, -1);
  EXPECT_EQ(g.devices[e1].endpoint_id, 1);
  EXPECT_EQ(g.endpoints, (std::vector<int>{0, 2}));
  EXPECT_EQ(g.by_name.at("s"), 1);
}

TEST(Topology, PeersAreSymmetricAndUnboundPortsHaveNoPeer) {
  Dgx d;
  // GPU 3 port 5 is its first link to switch 1 (ports 0-4 go to switch 0): switch port 3*4.
  const LinkEnd p = d.g.peer(d.gpus[3], 5);
  EXPECT_EQ(p.device, d.sws[1]);
  EXPECT_EQ(p.port, 12);
  const LinkEnd back = d.g.peer(d.sws[1], 12);
  EXPECT_EQ(back.device, d.gpus[3]);
  EXPECT_EQ(back.port, 5);
  // Switch 0 uses 8 x 5 = 40 of its 64 ports; port 40 and up are unbound.
  EXPECT_EQ(d.g.peer(d.sws[0], 40).device, -1);
  EXPECT_EQ(d.g.peer(d.sws[0], 63).port, -1);
  // Switch 1 uses 8 x 4 = 32 ports.
  EXPECT_EQ(d.g.peer(d.sws[1], 31).device, d.gpus[7]);
  EXPECT_EQ(d.g.peer(d.sws[1], 32).device, -1);
}

// Every GPU reaches every other GPU through all 18 of its ports (each is one hop to a
// switch that is one hop from the destination), and has no route to itself.
TEST(Topology, DgxEveryEndpointUsesAllPortsToEveryOther) {
  Dgx d;
  const Routes r = compute_routes(d.g);
  ASSERT_EQ(r.size(), d.g.devices.size());
  for (int src = 0; src < Dgx::kGpus; ++src) {
    ASSERT_EQ(r[d.gpus[src]].size(), size_t(Dgx::kGpus));
    for (int dst = 0; dst < Dgx::kGpus; ++dst) {
      if (src == dst) {
        EXPECT_TRUE(r[d.gpus[src]][dst].empty()) << "gpu" << src << " routes to itself";
        continue;
      }
      EXPECT_EQ(r[d.gpus[src]][dst], iota_vec(0, Dgx::kGpuPorts))
          << "gpu" << src << " -> gpu" << dst;
    }
  }
}

// Switch s reaches GPU d through exactly its lps[s] ports to d: g*lps[s] .. +lps[s]-1.
TEST(Topology, DgxSwitchReachesEndpointThroughItsParallelLinks) {
  Dgx d;
  const Routes r = compute_routes(d.g);
  for (int s = 0; s < Dgx::kSwitches; ++s)
    for (int dst = 0; dst < Dgx::kGpus; ++dst)
      EXPECT_EQ(r[d.sws[s]][dst], iota_vec(dst * d.lps[s], d.lps[s]))
          << "nvswitch" << s << " -> gpu" << dst;
}

// Endpoints never forward: ep0 - ep1 - ep2 by direct links gives ep0 no route to ep2.
TEST(Topology, EndpointsNeverForward) {
  Graph g;
  const int e0 = add_endpoint(g, "ep0", 1);
  const int e1 = add_endpoint(g, "ep1", 2);
  const int e2 = add_endpoint(g, "ep2", 1);
  link(g, e0, 0, e1, 0);
  link(g, e1, 1, e2, 0);
  g.index_ports();
  const Routes r = compute_routes(g);
  EXPECT_EQ(r[e0][1], (std::vector<int>{0}));  // direct neighbour: fine
  EXPECT_TRUE(r[e0][2].empty()) << "ep0 routed to ep2 through ep1";
  EXPECT_TRUE(r[e2][0].empty()) << "ep2 routed to ep0 through ep1";
  EXPECT_EQ(r[e1][0], (std::vector<int>{0}));
  EXPECT_EQ(r[e1][2], (std::vector<int>{1}));
}

// A switch whose only path to the destination passes through an endpoint has no route:
// sw0 - ep_mid - sw1 - ep_dst.
TEST(Topology, SwitchesDoNotRouteThroughEndpoints) {
  Graph g;
  const int mid = add_endpoint(g, "mid", 2);
  const int dst = add_endpoint(g, "dst", 1);
  const int src = add_endpoint(g, "src", 1);
  const int s0 = add_switch(g, "s0", 2);
  const int s1 = add_switch(g, "s1", 2);
  link(g, src, 0, s0, 0);
  link(g, s0, 1, mid, 0);
  link(g, mid, 1, s1, 0);
  link(g, s1, 1, dst, 0);
  g.index_ports();
  const Routes r = compute_routes(g);
  const int dst_id = g.devices[dst].endpoint_id;
  EXPECT_TRUE(r[s0][dst_id].empty());
  EXPECT_TRUE(r[src][dst_id].empty());
  EXPECT_EQ(r[mid][dst_id], (std::vector<int>{1}));  // mid itself may send via s1
  EXPECT_EQ(r[s1][dst_id], (std::vector<int>{1}));
}

// A neighbour endpoint one hop closer to the destination is not a next hop: it would have
// to forward. dst - s1; s1 - mid (endpoint) - s0; s1 - s2 - s0; mid - src - s2.
// Distances to dst: s1 1, mid 2, s2 2, s0 3, src 3. s0 and src each have a neighbour at
// distance 2 that is an endpoint (mid), so their only routes go via s2.
TEST(Topology, EndpointNeighbourCloserToDestinationIsNotANextHop) {
  Graph g;
  const int dst = add_endpoint(g, "dst", 1);
  const int mid = add_endpoint(g, "mid", 3);
  const int src = add_endpoint(g, "src", 2);
  const int s0 = add_switch(g, "s0", 2);
  const int s1 = add_switch(g, "s1", 3);
  const int s2 = add_switch(g, "s2", 3);
  link(g, dst, 0, s1, 0);
  link(g, s1, 1, mid, 0);
  link(g, mid, 1, s0, 0);
  link(g, s1, 2, s2, 0);
  link(g, s2, 1, s0, 1);
  link(g, mid, 2, src, 0);
  link(g, src, 1, s2, 2);
  g.index_ports();
  const Routes r = compute_routes(g);
  const int d = g.devices[dst].endpoint_id;
  EXPECT_EQ(r[s0][d], (std::vector<int>{1}));   // via s2, not via mid (port 0)
  EXPECT_EQ(r[src][d], (std::vector<int>{1}));  // via s2, not via mid (port 0)
  EXPECT_EQ(r[mid][d], (std::vector<int>{0}));  // mid's own traffic goes via s1
  EXPECT_EQ(r[s2][d], (std::vector<int>{0}));
  EXPECT_EQ(r[s1][d], (std::vector<int>{0}));
  // src's direct link to mid is still its route to mid itself.
  EXPECT_EQ(r[src][g.devices[mid].endpoint_id], (std::vector<int>{0}));
}

// Two tiers: 4 leaves x 2 endpoints, 3 spines, one link from every leaf to every spine.
// Leaf l: ports 0-1 down to its endpoints, port 2+s up to spine s. Spine s: port l to leaf l.
TEST(Topology, TwoTierGivesEqualCostMultipathThroughEverySpine) {
  const int kLeaves = 4, kPerLeaf = 2, kSpines = 3;
  Graph g;
  std::vector<int> eps, leaves, spines;
  for (int i = 0; i < kLeaves * kPerLeaf; ++i)
    eps.push_back(add_endpoint(g, "ep" + std::to_string(i), 1));
  for (int l = 0; l < kLeaves; ++l)
    leaves.push_back(add_switch(g, "leaf" + std::to_string(l), kPerLeaf + kSpines));
  for (int s = 0; s < kSpines; ++s)
    spines.push_back(add_switch(g, "spine" + std::to_string(s), kLeaves));
  for (int i = 0; i < kLeaves * kPerLeaf; ++i) link(g, eps[i], 0, leaves[i / kPerLeaf], i % kPerLeaf);
  for (int l = 0; l < kLeaves; ++l)
    for (int s = 0; s < kSpines; ++s) link(g, leaves[l], kPerLeaf + s, spines[s], l);
  g.index_ports();
  const Routes r = compute_routes(g);

  for (int dst = 0; dst < kLeaves * kPerLeaf; ++dst) {
    const int dleaf = dst / kPerLeaf;
    for (int l = 0; l < kLeaves; ++l) {
      if (l == dleaf)  // the destination's own leaf goes straight down, never via a spine
        EXPECT_EQ(r[leaves[l]][dst], (std::vector<int>{dst % kPerLeaf})) << "leaf" << l;
      else  // every other leaf spreads over all spines (ECMP)
        EXPECT_EQ(r[leaves[l]][dst], iota_vec(kPerLeaf, kSpines)) << "leaf" << l << " dst " << dst;
    }
    for (int s = 0; s < kSpines; ++s)
      EXPECT_EQ(r[spines[s]][dst], (std::vector<int>{dleaf})) << "spine" << s;
    for (int src = 0; src < kLeaves * kPerLeaf; ++src) {
      if (src == dst) continue;
      EXPECT_EQ(r[eps[src]][dst], (std::vector<int>{0}));
    }
  }
}

// Shortest paths only: a direct switch-to-endpoint link wins over a two-hop detour.
TEST(Topology, OnlyShortestPathsAreRoutes) {
  Graph g;
  const int e = add_endpoint(g, "e", 2);
  const int s0 = add_switch(g, "s0", 3);
  const int s1 = add_switch(g, "s1", 2);
  link(g, s0, 0, e, 0);   // direct
  link(g, s0, 1, s1, 0);  // detour s0 -> s1 -> e
  link(g, s1, 1, e, 1);
  g.index_ports();
  const Routes r = compute_routes(g);
  EXPECT_EQ(r[s0][0], (std::vector<int>{0}));
  EXPECT_EQ(r[s1][0], (std::vector<int>{1}));
}

// Unlinked ports never appear in a route; an isolated device has no routes at all.
TEST(Topology, UnlinkedPortsGiveNoRoute) {
  Graph g;
  const int a = add_endpoint(g, "a", 4);
  const int b = add_endpoint(g, "b", 4);
  const int lonely = add_endpoint(g, "lonely", 2);
  const int s = add_switch(g, "s", 8);
  link(g, a, 1, s, 5);
  link(g, b, 2, s, 0);
  g.index_ports();
  const Routes r = compute_routes(g);
  EXPECT_EQ(r[a][1], (std::vector<int>{1}));
  EXPECT_EQ(r[b][0], (std::vector<int>{2}));
  EXPECT_EQ(r[s][0], (std::vector<int>{5}));
  EXPECT_EQ(r[s][1], (std::vector<int>{0}));
  for (int id = 0; id < 3; ++id) EXPECT_TRUE(r[lonely][id].empty()) << "lonely -> " << id;
  EXPECT_TRUE(r[s][2].empty());
  EXPECT_TRUE(r[a][2].empty());
  EXPECT_TRUE(r[b][2].empty());
}

}  // namespace
}  // namespace fabricsim::topo

namespace fabricsim::topo {
namespace {

// Reach (the config check's connectivity) agrees with compute_routes (the elaborator's
// routes) on every endpoint pair: two islands, a direct endpoint link, a chain of
// switches, and an endpoint whose only neighbour is another endpoint.
TEST(Reach, AgreesWithRoutesOnEveryPair) {
  Graph g;
  const int a = add_endpoint(g, "a", 2), b = add_endpoint(g, "b", 1), c = add_endpoint(g, "c", 1);
  const int d = add_endpoint(g, "d", 2), e = add_endpoint(g, "e", 1), f = add_endpoint(g, "f", 1);
  const int s0 = add_switch(g, "s0", 4), s1 = add_switch(g, "s1", 4), s2 = add_switch(g, "s2", 4);
  link(g, a, 0, s0, 0);
  link(g, b, 0, s0, 1);
  link(g, s0, 2, s1, 0);
  link(g, c, 0, s1, 1);  // a, b, c: one component of switches s0-s1
  link(g, a, 1, d, 0);   // a - d directly: connected, but d does not relay to the others
  link(g, d, 1, s2, 0);
  link(g, e, 0, s2, 1);  // d, e on s2
  // f has no link at all.
  g.index_ports();
  const Routes routes = compute_routes(g);
  const Reach reach(g);
  for (size_t i = 0; i < g.endpoints.size(); ++i)
    for (size_t j = 0; j < g.endpoints.size(); ++j) {
      const int from = g.endpoints[i], to = g.endpoints[j];
      if (from == to) continue;
      EXPECT_EQ(reach.connected(from, to), !routes[from][j].empty())
          << g.devices[from].name << " -> " << g.devices[to].name;
    }
  EXPECT_TRUE(reach.connected(a, c));
  EXPECT_TRUE(reach.connected(a, d));
  EXPECT_FALSE(reach.connected(b, d));  // only through a, an endpoint
  EXPECT_TRUE(reach.connected(d, e));
  EXPECT_FALSE(reach.connected(a, f));
}

}  // namespace
}  // namespace fabricsim::topo

namespace fabricsim::topo {
namespace {

// PathSearch (the cost model's and the flow level's paths) gives compute_routes' ports at
// every device on every shortest path of every endpoint pair, with and without keeping the
// whole searches, and finds exactly the pairs Reach connects.
void expect_search_matches_routes(const Graph& g, size_t cache_devices) {
  const Routes routes = compute_routes(g);
  const Reach reach(g);
  PathSearch search(g, cache_devices);
  int paths = 0;
  for (size_t j = 0; j < g.endpoints.size(); ++j)
    for (size_t i = 0; i < g.endpoints.size(); ++i) {
      const int from = g.endpoints[i], to = g.endpoints[j];
      const bool found = search.search(from, to);
      EXPECT_EQ(found, from != to && reach.connected(from, to))
          << g.devices[from].name << " -> " << g.devices[to].name;
      if (!found) continue;
      ++paths;
      // Every device reached from `from` by following the route ports towards `to`.
      std::vector<int> at{from};
      std::vector<char> seen(g.devices.size(), 0);
      while (!at.empty()) {
        const int v = at.back();
        at.pop_back();
        if (v == to || seen[size_t(v)]) continue;
        seen[size_t(v)] = 1;
        const std::vector<int> ports = search.route_ports(v);
        EXPECT_EQ(ports, routes[size_t(v)][j])
            << g.devices[v].name << " towards " << g.devices[to].name << " (from "
            << g.devices[from].name << ", cache " << cache_devices << ")";
        for (int p : ports) at.push_back(g.peer(v, p).device);
      }
    }
  EXPECT_GT(paths, 0);
}

TEST(PathSearch, AgreesWithRoutesOnIslandsAndDirectLinks) {
  Graph g;
  const int a = add_endpoint(g, "a", 2), b = add_endpoint(g, "b", 1), c = add_endpoint(g, "c", 1);
  const int d = add_endpoint(g, "d", 2), e = add_endpoint(g, "e", 1);
  add_endpoint(g, "f", 1);  // no link at all
  const int s0 = add_switch(g, "s0", 4), s1 = add_switch(g, "s1", 4), s2 = add_switch(g, "s2", 4);
  link(g, a, 0, s0, 0);
  link(g, b, 0, s0, 1);
  link(g, s0, 2, s1, 0);
  link(g, c, 0, s1, 1);
  link(g, a, 1, d, 0);
  link(g, d, 1, s2, 0);
  link(g, e, 0, s2, 1);
  g.index_ports();
  for (size_t cache : {size_t(0), size_t(9), size_t(1000)}) expect_search_matches_routes(g, cache);
}

TEST(PathSearch, AgreesWithRoutesOnTwoTiersAndADgx) {
  const int kLeaves = 4, kPerLeaf = 3, kSpines = 3;
  Graph g;
  std::vector<int> eps, leaves, spines;
  for (int i = 0; i < kLeaves * kPerLeaf; ++i)
    eps.push_back(add_endpoint(g, "ep" + std::to_string(i), 1));
  for (int l = 0; l < kLeaves; ++l)
    leaves.push_back(add_switch(g, "leaf" + std::to_string(l), kPerLeaf + 2 * kSpines));
  for (int s = 0; s < kSpines; ++s)
    spines.push_back(add_switch(g, "spine" + std::to_string(s), 2 * kLeaves));
  for (int i = 0; i < kLeaves * kPerLeaf; ++i) link(g, eps[i], 0, leaves[i / kPerLeaf], i % kPerLeaf);
  for (int l = 0; l < kLeaves; ++l)  // two parallel links from every leaf to every spine
    for (int s = 0; s < kSpines; ++s)
      for (int k = 0; k < 2; ++k) link(g, leaves[l], kPerLeaf + 2 * s + k, spines[s], 2 * l + k);
  g.index_ports();
  // 0: no search kept; 3 destinations' worth (of 19 devices) kept, the rest not; all kept.
  for (size_t cache : {size_t(0), size_t(3 * 19), size_t(1) << 20})
    expect_search_matches_routes(g, cache);
  const Dgx dgx;
  expect_search_matches_routes(dgx.g, 0);
  expect_search_matches_routes(dgx.g, size_t(1) << 20);
}

}  // namespace
}  // namespace fabricsim::topo
