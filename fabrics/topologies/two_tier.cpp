// two_tier: a two-tier scale-up domain, plane by plane (endpoint port p is plane p). In every
// plane each rack has endpoints_per_rack / leaf_down leaf chips (leaf_down endpoints each),
// and the plane's spines join all its leaves, every leaf's uplinks dealt round-robin.
#include "fabrics/topologies/builder.h"

namespace fabricsim::topo {

namespace {

void build(const cfg::Params& p, Builder& b) {
  const std::string et = p.str("endpoint_type"), lt = p.str("leaf_switch_type");
  const std::string st = p.str("spine_switch_type");
  const DeviceType& edt = b.device_type(p, "endpoint_type", false);
  const DeviceType& ldt = b.device_type(p, "leaf_switch_type", true);
  const DeviceType& sdt = b.device_type(p, "spine_switch_type", true);
  const int nic = edt.ports_with_role("NIC");
  if (nic > 0)
    p.fail("endpoint_type",
           "device type '" + et + "' has " + std::to_string(nic) +
               " NIC ports; two_tier links every endpoint port into a scale-up plane",
           "set device_types." + et + ".nic_ports: 0, or use multi_node for NICs");
  const int ne = int(p.integer("endpoints")), racks = int(p.integer("racks"));
  const int down = int(p.integer("leaf_down")), up = int(p.integer("leaf_up"));
  const int spines = int(p.integer("spines_per_plane")), planes = edt.ports;
  if (ne % racks != 0)
    p.fail("racks",
           std::to_string(ne) + " endpoints do not divide into " + std::to_string(racks) +
               " racks",
           "make endpoints a multiple of racks");
  const int per_rack = ne / racks;
  if (per_rack % down != 0)
    p.fail("leaf_down",
           "a rack's " + std::to_string(per_rack) + " endpoints do not divide into leaves of " +
               std::to_string(down),
           "make endpoints / racks a multiple of leaf_down");
  if (down + up > ldt.ports)
    p.fail("leaf_up",
           "a leaf needs leaf_down + leaf_up = " + std::to_string(down) + " + " +
               std::to_string(up) + " = " + std::to_string(down + up) +
               " ports but switch type '" + lt + "' has " + std::to_string(ldt.ports),
           "lower leaf_down or leaf_up (leaf_up < leaf_down tapers the spine tier)");
  if (up % spines != 0)
    p.fail("spines_per_plane",
           "a leaf's " + std::to_string(up) + " uplinks do not deal evenly over " +
               std::to_string(spines) + " spines",
           "make leaf_up a multiple of spines_per_plane");
  const int leaves_per_rack = per_rack / down, leaves = racks * leaves_per_rack;
  const int per_pair = up / spines;  // links from a leaf to each spine of its plane
  if (leaves * per_pair > sdt.ports)
    p.fail("spines_per_plane",
           "every spine needs " + std::to_string(leaves) + " leaves x " +
               std::to_string(per_pair) + " links = " + std::to_string(leaves * per_pair) +
               " ports but switch type '" + st + "' has " + std::to_string(sdt.ports),
           "use more spines per plane, or a larger spine switch");
  const std::string link = p.str("link_type"), uplink = p.str("uplink_type");
  b.link_type(p, "link_type");
  b.link_type(p, "uplink_type");
  const YAML::Node& t = b.section();
  const LinkSite site{t, t, t, "topology", false};
  std::vector<int> eps;
  for (int g = 0; g < ne; ++g)
    eps.push_back(b.add_device(p.str("endpoint_prefix") + std::to_string(g), et, t, "topology"));
  const std::string lp = p.str("leaf_prefix"), sp = p.str("spine_prefix");
  for (int pl = 0; pl < planes; ++pl) {
    const std::string plane = "_p" + std::to_string(pl) + "_";
    std::vector<int> leaf, spine;
    for (int r = 0; r < racks; ++r)
      for (int k = 0; k < leaves_per_rack; ++k)
        leaf.push_back(
            b.add_device(lp + "_r" + std::to_string(r) + plane + std::to_string(k), lt, t,
                         "topology"));
    for (int s = 0; s < spines; ++s)
      spine.push_back(b.add_device(sp + plane + std::to_string(s), st, t, "topology"));
    for (int g = 0; g < ne; ++g)  // rack g / per_rack, leaf (g % per_rack) / down
      b.add_link({eps[g], pl}, {leaf[g / down], g % down}, link, site);
    for (int l = 0; l < leaves; ++l)
      for (int u = 0; u < up; ++u)
        b.add_link({leaf[l], down + u}, {spine[u % spines], l * per_pair + u / spines}, uplink,
                   site);
  }
}

}  // namespace

TopologyKind two_tier_topology() {
  using K = ParamKind;
  TopologyKind k;
  k.name = "two_tier";
  k.summary =
      "A two-tier scale-up domain (e.g. 576 NVLink GPUs in 8 racks), one plane per "
      "endpoint port: port p of every endpoint goes to a leaf (L1) switch of plane p in its "
      "rack, leaf_down endpoints per leaf, and each plane's spine (L2) switches join its "
      "leaves, every leaf's leaf_up uplinks dealt round-robin over them. One domain: all "
      "endpoints are one node. Names: <endpoint_prefix><g> (g = 0..endpoints-1, rack-major), "
      "<leaf_prefix>_r<rack>_p<plane>_<k>, <spine_prefix>_p<plane>_<s>; ranks in endpoint "
      "order.";
  k.params = {
      param("endpoint_type", K::kString, "", "",
            "A device type of type endpoint without NIC ports; its ports are the planes."),
      param("endpoints", K::kInt, "", "", "Number of endpoints (ranks, in order).", 1, 65536),
      param("endpoint_prefix", K::kString, "gpu", "", "Endpoint names: prefix + index."),
      param("racks", K::kInt, "1", "", "Racks; endpoints / racks endpoints each.", 1, 4096),
      param("leaf_switch_type", K::kString, "", "", "Leaf (L1) switch type."),
      param("leaf_prefix", K::kString, "l1", "", "Leaf switch names."),
      param("leaf_down", K::kInt, "", "links",
            "Endpoint links per leaf (its ports 0..leaf_down-1); divides endpoints / racks.", 1,
            4096),
      param("leaf_up", K::kInt, "", "links",
            "Uplinks per leaf (ports leaf_down..); leaf_up < leaf_down oversubscribes the "
            "spine tier by leaf_down : leaf_up.",
            1, 4096),
      param("spine_switch_type", K::kString, "", "", "Spine (L2) switch type."),
      param("spine_prefix", K::kString, "l2", "", "Spine switch names."),
      param("spines_per_plane", K::kInt, "", "",
            "Spine switches per plane; divides leaf_up (every leaf has leaf_up / "
            "spines_per_plane links to each spine of its plane).",
            1, 4096),
      param("link_type", K::kString, "", "", "Link type endpoint - leaf."),
      param("uplink_type", K::kString, "", "", "Link type leaf - spine.")};
  k.build = build;
  return k;
}

}  // namespace fabricsim::topo
