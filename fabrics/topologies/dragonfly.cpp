// dragonfly: `groups` groups of `routers` routers each; the routers of a group are linked
// all-to-all (local links), every router has `hosts` hosts and `global_links` links to other
// groups. The a x h global ports of a group are dealt in order of the group they reach, the
// same number m = a x h / (groups - 1) to each other group, so every pair of groups has m
// links (the "numbers close": groups - 1 must divide a x h). Router ports: hosts first, then
// local links (to the other routers in order), then global links. Routing (minimal, Valiant,
// UGAL) is the routers' dragonfly feature (models/ethernet/dragonfly_routing.cpp), which
// reads the coordinates given here: {group, groups, endpoints per group, router, routers,
// hosts, global links} (and this wiring rule).
// Names: g<G>_r<R>, hosts h<i> (and nic<i>), host i on router i / hosts; ranks in host order.
#include "fabrics/topologies/hosts.h"

namespace fabricsim::topo {

namespace {

void build(const cfg::Params& p, Builder& b) {
  const HostSpec hs = host_spec(p, b);
  const int g = int(p.integer("groups")), a = int(p.integer("routers")),
            hpr = int(p.integer("hosts")), h = int(p.integer("global_links"));
  const DeviceType& rt = b.device_type(p, "router_type", true);
  const int need = hpr + (a - 1) + h;
  if (need > rt.ports)
    p.fail("router_type",
           "a router needs hosts + routers - 1 + global_links = " + std::to_string(need) +
               " ports but router type '" + p.str("router_type") + "' has " +
               std::to_string(rt.ports),
           "use a larger router or fewer hosts or links");
  if (g < 2 || g > a * h + 1)
    p.fail("groups",
           std::to_string(g) + " groups with " + std::to_string(a * h) +
               " global links per group: every group needs a link to each other one (at most " +
               std::to_string(a * h + 1) + " groups)",
           "use groups <= routers x global_links + 1");
  if ((a * h) % (g - 1) != 0)
    p.fail("global_links",
           "a group's " + std::to_string(a * h) + " global links do not divide evenly over the " +
               std::to_string(g - 1) + " other groups",
           "make routers x global_links a multiple of groups - 1 (e.g. groups = routers x "
           "global_links + 1)");
  const int m = a * h / (g - 1);
  const std::string lt = p.str("link_type"), llt = p.str("local_link_type"),
                    glt = p.str("global_link_type");
  b.link_type(p, "link_type");
  b.link_type(p, "local_link_type");
  b.link_type(p, "global_link_type");
  const YAML::Node& t = b.section();
  const LinkSite site{t, t, t, "topology", false};
  const int epg = a * hpr;
  std::vector<int> router;  // [group * a + r]
  for (int G = 0; G < g; ++G)
    for (int r = 0; r < a; ++r) {
      const int dev = b.add_device("g" + std::to_string(G) + "_r" + std::to_string(r),
                                   p.str("router_type"), t, "topology", {G, g, epg, r, a, hpr, h});
      router.push_back(dev);
      for (int k = 0; k < hpr; ++k)
        b.add_link(add_host(b, hs, (G * a + r) * hpr + k, site), {dev, k}, lt, site);
    }
  const auto local_port = [&](int r, int other) { return hpr + (other < r ? other : other - 1); };
  for (int G = 0; G < g; ++G)
    for (int r = 0; r < a; ++r)
      for (int s = r + 1; s < a; ++s)
        b.add_link({router[size_t(G * a + r)], local_port(r, s)},
                   {router[size_t(G * a + s)], local_port(s, r)}, llt, site);
  // Global slot q of group x (0 .. a*h-1) is router q / h's global port q % h; the slots
  // to group y are ((y - x - 1) mod g) * m .. + m - 1.
  const auto slot = [&](int x, int y, int k) -> LinkEnd {
    const int q = ((y - x - 1 + g) % g) * m + k;
    return {router[size_t(x * a + q / h)], hpr + a - 1 + q % h};
  };
  for (int x = 0; x < g; ++x)
    for (int y = x + 1; y < g; ++y)
      for (int k = 0; k < m; ++k) b.add_link(slot(x, y, k), slot(y, x, k), glt, site);
}

}  // namespace

TopologyKind dragonfly_topology() {
  using K = ParamKind;
  TopologyKind k;
  k.name = "dragonfly";
  k.summary =
      "Dragonfly: `groups` groups of `routers` routers linked all-to-all inside the group, "
      "`hosts` hosts and `global_links` links to other groups per router, the same number of "
      "links between every pair of groups. Routing (minimal, Valiant, UGAL) is the routers' "
      "`routing` key. Names: g<G>_r<R>, h<i>, nic<i>.";
  k.params = host_params();
  const std::vector<ParamSpec> own{
      param("groups", K::kInt, "", "groups", "Groups (g).", 2, 100000),
      param("routers", K::kInt, "", "routers", "Routers per group (a).", 1, 4096),
      param("hosts", K::kInt, "", "hosts", "Hosts per router (p).", 1, 4096),
      param("global_links", K::kInt, "", "links", "Global links per router (h).", 1, 4096),
      param("router_type", K::kString, "", "", "Router (switch) type."),
      param("link_type", K::kString, "", "", "Link type host (or its NIC) - router."),
      param("local_link_type", K::kString, "", "", "Link type between routers of a group."),
      param("global_link_type", K::kString, "", "", "Link type between groups.")};
  k.params.insert(k.params.end(), own.begin(), own.end());
  k.build = build;
  return k;
}

}  // namespace fabricsim::topo
