// fat_tree: a k-ary fat tree of 2 or 3 tiers (leaf-spine, or leaf-aggregation-core in
// pods), with an oversubscription ratio per tier, built from switches of `radix` ports.
// A tier with ratio r uses radix x r / (r + 1) ports down and radix / (r + 1) up.
//  * 2 tiers: `hosts` / leaf_down leaves; leaf_up spines, each linked once to every leaf.
//  * 3 tiers: a pod is agg_down leaves and leaf_up aggregation switches (every leaf linked
//    once to each); aggregation switch j of every pod links once to each of the agg_up
//    cores of plane j (leaf_up planes, leaf_up x agg_up cores).
// Full size (hosts: 0): as many leaves (2 tiers) or pods (3 tiers) as a spine or core has
// ports. Names: h<i> (and nic<i>), leaf<i>, spine<j> | agg<p>_<j>, core<j>; ranks in host
// order, hosts of a leaf consecutive.
#include "fabrics/topologies/hosts.h"

namespace fabricsim::topo {

namespace {

struct Tier {
  int down, up;
};

Tier split(const cfg::Params& p, int radix, int64_t ratio, const char* key) {
  if (radix % (ratio + 1) != 0)
    p.fail(key,
           "oversubscription " + std::to_string(ratio) + ":1 does not split radix " +
               std::to_string(radix) + " (needs a multiple of " + std::to_string(ratio + 1) + ")",
           "use a radix that ratio + 1 divides, or another ratio");
  return Tier{int(radix * ratio / (ratio + 1)), int(radix / (ratio + 1))};
}

void build(const cfg::Params& p, Builder& b) {
  const HostSpec hs = host_spec(p, b);
  const int tiers = int(p.integer("tiers")), radix = int(p.integer("radix"));
  const DeviceType& swt = b.device_type(p, "switch_type", true);
  if (swt.ports < radix)
    p.fail("radix",
           "radix " + std::to_string(radix) + " but switch type '" + p.str("switch_type") +
               "' has " + std::to_string(swt.ports) + " ports",
           "use a radix of at most the switch's ports");
  const std::vector<int64_t>& os = p.int_list("oversubscription");
  if (int(os.size()) != tiers - 1)
    p.fail("oversubscription",
           std::to_string(os.size()) + " ratios for " + std::to_string(tiers) +
               " tiers: give one per tier below the top (leaf" + (tiers == 3 ? ", agg" : "") +
               ")",
           tiers == 3 ? "e.g. oversubscription: [1, 1]" : "e.g. oversubscription: [1]");
  const Tier leaf = split(p, radix, os[0], "oversubscription");
  const Tier agg = tiers == 3 ? split(p, radix, os[1], "oversubscription") : Tier{0, 0};
  const int per_pod = tiers == 3 ? agg.down * leaf.down : leaf.down;  // hosts per pod / leaf
  const int full = radix * per_pod;  // a top switch's ports, each to a pod (or leaf)
  int hosts = int(p.integer("hosts"));
  if (hosts == 0) hosts = full;
  if (hosts % per_pod != 0 || hosts > full)
    p.fail("hosts",
           std::to_string(hosts) + " hosts: a " + std::to_string(tiers) + "-tier fat tree of "
               "radix " + std::to_string(radix) + " holds multiples of " +
               std::to_string(per_pod) + " up to " + std::to_string(full),
           "use a multiple of " + std::to_string(per_pod) + " up to " + std::to_string(full));
  const std::string lt = p.str("link_type");
  std::string ft = p.str("fabric_link_type");
  b.link_type(p, "link_type");
  if (ft == "none")
    ft = lt;
  else
    b.link_type(p, "fabric_link_type");
  const std::string st = p.str("switch_type");
  const YAML::Node& t = b.section();
  const LinkSite site{t, t, t, "topology", false};

  const int leaves = hosts / leaf.down;
  std::vector<int> leaf_dev;
  for (int l = 0; l < leaves; ++l) {
    leaf_dev.push_back(b.add_device("leaf" + std::to_string(l), st, t, "topology"));
    for (int k = 0; k < leaf.down; ++k)
      b.add_link(add_host(b, hs, l * leaf.down + k, site), {leaf_dev.back(), k}, lt, site);
  }
  if (tiers == 2) {
    for (int s = 0; s < leaf.up; ++s) {
      const int sp = b.add_device("spine" + std::to_string(s), st, t, "topology");
      for (int l = 0; l < leaves; ++l) b.add_link({leaf_dev[l], leaf.down + s}, {sp, l}, ft, site);
    }
  } else {
    const int pods = hosts / per_pod;
    std::vector<std::vector<int>> agg_dev(static_cast<size_t>(pods));
    for (int pod = 0; pod < pods; ++pod)
      for (int j = 0; j < leaf.up; ++j) {
        const int a = b.add_device("agg" + std::to_string(pod) + "_" + std::to_string(j), st, t,
                                   "topology");
        agg_dev[size_t(pod)].push_back(a);
        for (int l = 0; l < agg.down; ++l)
          b.add_link({leaf_dev[size_t(pod * agg.down + l)], leaf.down + j}, {a, l}, ft, site);
      }
    for (int j = 0; j < leaf.up; ++j)
      for (int c = 0; c < agg.up; ++c) {
        const int core = b.add_device("core" + std::to_string(j * agg.up + c), st, t, "topology");
        for (int pod = 0; pod < pods; ++pod)
          b.add_link({agg_dev[size_t(pod)][size_t(j)], agg.down + c}, {core, pod}, ft, site);
      }
  }
}

}  // namespace

TopologyKind fat_tree_topology() {
  using K = ParamKind;
  TopologyKind k;
  k.name = "fat_tree";
  k.summary =
      "k-ary fat tree of 2 tiers (leaf-spine) or 3 (leaf-aggregation-core in pods) built from "
      "switches of `radix` ports, with an oversubscription ratio per tier (r:1 = radix x r / "
      "(r+1) ports down, radix / (r+1) up). Hosts are endpoints, optionally behind NICs. "
      "Names: h<i>, nic<i>, leaf<i>, spine<j> | agg<pod>_<j>, core<j>.";
  k.params = host_params();
  const std::vector<ParamSpec> own{
      param("tiers", K::kInt, "2", "", "Switch tiers: 2 or 3.", 2, 3),
      param("radix", K::kInt, "", "ports", "Ports of every switch the tree uses (k).", 2, 4096),
      param("oversubscription", K::kIntList, "[1]", "down:up",
            "Oversubscription of each tier below the top, leaf first (3 tiers: [leaf, agg]); "
            "1 = non-blocking.",
            1, 64),
      param("hosts", K::kInt, "0", "hosts", "Hosts; 0: the full tree.", 0, 1 << 20),
      param("switch_type", K::kString, "", "", "Switch type of every tier."),
      param("link_type", K::kString, "", "", "Link type host (or its NIC) - leaf."),
      param("fabric_link_type", K::kString, "none", "",
            "Link type between switches (none: link_type).")};
  k.params.insert(k.params.end(), own.begin(), own.end());
  k.build = build;
  return k;
}

}  // namespace fabricsim::topo
