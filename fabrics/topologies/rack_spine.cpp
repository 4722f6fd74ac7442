// rack_spine: racks of endpoints, one leaf (top-of-rack) switch per rack, and a spine tier
// that is either electrical (packet switches) or optical (MEMS circuit switches), so the
// two can be compared on the same racks (docs/optical_vs_electrical.md).
//
// Every leaf has `uplinks` uplinks; uplink u of every leaf goes to spine device u (port =
// the rack). An electrical spine device is a packet switch: any leaf reaches any other
// through any spine. An optical one is a circuit switch whose map pairs the racks: the
// spine tier is then a fixed set of direct leaf-to-leaf links, as in datacenter OCS spines.
// `circuits: mesh` gives switch u the matching of round u mod (racks - 1) of the circle
// method, so every pair of racks gets uplinks / (racks - 1) direct circuits (a full mesh
// of leaves); `circuits: ring` gives switch u matching u mod 2 of the ring of racks, so
// neighbouring racks get uplinks / 2 circuits and other pairs go through leaves.
#include "fabrics/topologies/builder.h"

namespace fabricsim::topo {

namespace {

// Circle method: in round k (0..n-2) rack n-1 meets rack k, and rack (k + i) mod (n-1)
// meets rack (k - i) mod (n-1) for i = 1..n/2-1.
std::vector<int> mesh_round(int n, int k) {
  std::vector<int> partner(size_t(n), -1);
  const int m = n - 1;
  partner[size_t(n - 1)] = k;
  partner[size_t(k)] = n - 1;
  for (int i = 1; i < n / 2; ++i) {
    const int a = (k + i) % m, c = ((k - i) % m + m) % m;
    partner[size_t(a)] = c;
    partner[size_t(c)] = a;
  }
  return partner;
}

// Ring matchings: 0 pairs (0,1), (2,3), ...; 1 pairs (1,2), ..., (n-1,0).
std::vector<int> ring_round(int n, int k) {
  std::vector<int> partner(size_t(n), -1);
  for (int r = k; r < n + k; r += 2) {
    const int a = r % n, c = (r + 1) % n;
    partner[size_t(a)] = c;
    partner[size_t(c)] = a;
  }
  return partner;
}

void build(const cfg::Params& p, Builder& b) {
  const std::string et = p.str("endpoint_type"), lt = p.str("leaf_switch_type");
  const std::string st = p.str("spine_type");
  const DeviceType& edt = b.device_type(p, "endpoint_type", false);
  const DeviceType& ldt = b.device_type(p, "leaf_switch_type", true);
  const DeviceType& sdt = b.device_type(p.node("spine_type"), "topology.spine_type", st);
  const bool optical = bool(sdt.kind->circuits);
  if (!optical && !sdt.kind->forwards)
    p.fail("spine_type", "'" + st + "' is neither a switch nor an optical circuit switch",
           "use a device type of type switch (electrical spine) or optical_circuit_switch");
  const int racks = int(p.integer("racks")), per = int(p.integer("endpoints_per_rack"));
  const int up = int(p.integer("uplinks"));
  const std::string pattern = p.str("circuits");
  if (edt.ports < 1)
    p.fail("endpoint_type", "'" + et + "' has no port", "give the endpoint type one port");
  if (per + up > ldt.ports)
    p.fail("uplinks",
           "a leaf needs endpoints_per_rack + uplinks = " + std::to_string(per + up) +
               " ports but switch type '" + lt + "' has " + std::to_string(ldt.ports),
           "give the leaf switch type more ports, or lower uplinks");
  if (racks > sdt.ports)
    p.fail("racks",
           std::to_string(racks) + " racks but spine type '" + st + "' has " +
               std::to_string(sdt.ports) + " ports (one per rack)",
           "use fewer racks or a spine type with more ports");
  if (optical) {
    if (racks % 2 != 0)
      p.fail("racks", std::to_string(racks) + " racks cannot be paired by circuits",
             "an optical spine pairs racks: use an even number of racks");
    const int rounds = pattern == "mesh" ? racks - 1 : 2;
    if (up % rounds != 0)
      p.fail("uplinks",
             std::to_string(up) + " uplinks do not deal evenly over the " +
                 std::to_string(rounds) + " matchings of circuits: " + pattern,
             "make uplinks a multiple of " + std::to_string(rounds) +
                 " (every pair of racks it joins gets uplinks / " + std::to_string(rounds) +
                 " circuits)");
  }
  const std::string link = p.str("link_type"), uplink = p.str("uplink_type");
  b.link_type(p, "link_type");
  b.link_type(p, "uplink_type");
  const YAML::Node& t = b.section();
  const LinkSite site{t, t, t, "topology", false};
  std::vector<int> eps, leaf;
  for (int r = 0; r < racks; ++r)
    for (int g = 0; g < per; ++g)
      eps.push_back(b.add_device(p.str("endpoint_prefix") + std::to_string(r * per + g), et, t,
                                 "topology"));
  for (int r = 0; r < racks; ++r)
    leaf.push_back(b.add_device("leaf" + std::to_string(r), lt, t, "topology"));
  for (int u = 0; u < up; ++u) {
    std::vector<int> map;
    if (optical) {
      map.assign(size_t(sdt.ports), -1);
      const std::vector<int> partner =
          pattern == "mesh" ? mesh_round(racks, u % (racks - 1)) : ring_round(racks, u % 2);
      for (int r = 0; r < racks; ++r) map[size_t(r)] = partner[size_t(r)];
    }
    const int s = b.add_device((optical ? "ocs" : "spine") + std::to_string(u), st, t,
                               "topology", map);
    for (int r = 0; r < racks; ++r) b.add_link({leaf[size_t(r)], per + u}, {s, r}, uplink, site);
  }
  for (int r = 0; r < racks; ++r)
    for (int g = 0; g < per; ++g) b.add_link({eps[size_t(r * per + g)], 0}, {leaf[size_t(r)], g}, link, site);
}

}  // namespace

TopologyKind rack_spine_topology() {
  using K = ParamKind;
  TopologyKind k;
  k.name = "rack_spine";
  k.summary =
      "Racks of endpoints, one leaf switch per rack, and a spine tier of packet switches "
      "(electrical) or of optical circuit switches whose circuits join the leaves directly "
      "(circuits: mesh, every pair of racks; ring, neighbouring racks). Uplink u of every "
      "leaf goes to spine device u, port = rack. Names: <endpoint_prefix><i> (rack-major), "
      "leaf<r>, spine<u> or ocs<u>; ranks in endpoint order.";
  k.params = {
      param("endpoint_type", K::kString, "", "", "Endpoint device type; its port 0 goes to its leaf."),
      param("endpoint_prefix", K::kString, "gpu", "", "Endpoint names: prefix + index."),
      param("racks", K::kInt, "", "", "Racks, one leaf switch each.", 2, 4096),
      param("endpoints_per_rack", K::kInt, "", "", "Endpoints per rack (leaf ports 0..).", 1, 4096),
      param("leaf_switch_type", K::kString, "", "", "Leaf (top-of-rack) switch type."),
      param("uplinks", K::kInt, "", "links",
            "Uplinks per leaf (ports endpoints_per_rack..), one to each spine device.", 1, 4096),
      param("spine_type", K::kString, "", "",
            "Spine device type: a switch (electrical spine) or an optical_circuit_switch."),
      choice("circuits", {"mesh", "ring"}, "mesh",
             "Optical spine only: mesh: switch u pairs the racks as round u mod (racks - 1) "
             "of a round-robin tournament, every pair of racks gets uplinks / (racks - 1) "
             "circuits; ring: switch u pairs neighbouring racks (matching u mod 2), "
             "uplinks / 2 circuits per neighbour pair."),
      param("link_type", K::kString, "", "", "Link type endpoint - leaf."),
      param("uplink_type", K::kString, "", "", "Link type leaf - spine (or leaf - OCS fibre).")};
  k.build = build;
  return k;
}

}  // namespace fabricsim::topo
