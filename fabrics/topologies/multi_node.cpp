// multi_node: switched nodes whose endpoints' NIC ports go to rail switches (NIC j of local
// endpoint l on every node -> rail l * nic_ports + j), optionally with spines above.
#include "fabrics/topologies/switched_node.h"

namespace fabricsim::topo {

namespace {

void build(const cfg::Params& p, Builder& b) {
  const std::string et = p.str("endpoint_type"), st = p.str("switch_type");
  const std::string rt = p.str("rail_switch_type");
  const DeviceType& edt = b.device_type(p, "endpoint_type", false);
  const DeviceType& sdt = b.device_type(p, "switch_type", true);
  const DeviceType& rdt = b.device_type(p, "rail_switch_type", true);
  const int nic = edt.ports_with_role("NIC"), fabric_ports = edt.ports - nic;
  if (nic < 1)
    p.fail("endpoint_type", "device type '" + et + "' has no NIC ports (nic_ports: 0)",
           "set device_types." + et + ".nic_ports: 1 (one NIC per GPU)");
  const int nodes = int(p.integer("nodes")), per = int(p.integer("endpoints_per_node"));
  const int ns = int(p.integer("switches_per_node"));
  const std::vector<int64_t>& lps = p.int_list("links_per_switch");
  if (int(lps.size()) != ns)
    p.fail("links_per_switch",
           "links_per_switch has " + std::to_string(lps.size()) +
               " entries but switches_per_node is " + std::to_string(ns),
           "give one entry per switch");
  int64_t total = 0;
  for (int64_t x : lps) total += x;
  if (total != fabric_ports)
    p.fail("links_per_switch",
           "links_per_switch sums to " + std::to_string(total) + " but endpoint type '" + et +
               "' has " + std::to_string(fabric_ports) + " fabric ports (besides " +
               std::to_string(nic) + " NIC ports)",
           "make them equal: every endpoint port needs a link");
  for (int sidx = 0; sidx < ns; ++sidx)
    if (lps[sidx] * per > sdt.ports)
      p.fail("links_per_switch",
             "switch " + std::to_string(sidx) + " needs " + std::to_string(lps[sidx] * per) +
                 " ports but switch type '" + st + "' has " + std::to_string(sdt.ports),
             "use fewer endpoints or links, or a larger switch");
  const int spines = int(p.integer("spines")), up = int(p.integer("uplinks_per_rail"));
  if (nodes + up > rdt.ports)
    p.fail("uplinks_per_rail",
           "a rail switch needs " + std::to_string(nodes) + " NIC ports + " + std::to_string(up) +
               " uplinks = " + std::to_string(nodes + up) + " ports but switch type '" + rt +
               "' has " + std::to_string(rdt.ports),
           "use fewer nodes or uplinks, or a larger rail switch");
  if ((spines == 0) != (up == 0) || (spines > 0 && up % spines != 0))
    p.fail("uplinks_per_rail",
           "uplinks_per_rail " + std::to_string(up) + " with spines " + std::to_string(spines) +
               ": give both or neither, uplinks a multiple of spines",
           "e.g. spines: 4, uplinks_per_rail: 16");
  const int rails = per * nic;
  const int per_spine = spines > 0 ? rails * (up / spines) : 0;
  std::string spt;
  if (spines > 0) {
    spt = p.str("spine_switch_type");
    if (spt == "none")
      p.fail("spine_switch_type", "spines > 0 needs a spine_switch_type", "name a switch type");
    const DeviceType& pdt = b.device_type(p, "spine_switch_type", true);
    if (per_spine > pdt.ports)
      p.fail("spines",
             "every spine needs " + std::to_string(per_spine) + " ports (" +
                 std::to_string(rails) + " rails x " + std::to_string(up / spines) +
                 " links) but switch type '" + spt + "' has " + std::to_string(pdt.ports),
             "use more spines or a larger spine switch");
  }
  const std::string lt = p.str("link_type"), nlt = p.str("nic_link_type");
  b.link_type(p, "link_type");
  b.link_type(p, "nic_link_type");
  std::string slt = p.str("spine_link_type");
  if (slt == "none")
    slt = nlt;
  else
    b.link_type(p, "spine_link_type");
  const YAML::Node& t = b.section();
  const LinkSite site{t, t, t, "topology", false};
  std::vector<int> rail_dev;
  for (int k = 0; k < nodes; ++k) {
    const std::string node = "node" + std::to_string(k) + "_";
    std::vector<int> eps, sws;
    for (int i = 0; i < per; ++i)
      eps.push_back(
          b.add_device(node + p.str("endpoint_prefix") + std::to_string(i), et, t, "topology"));
    for (int i = 0; i < ns; ++i)
      sws.push_back(
          b.add_device(node + p.str("switch_prefix") + std::to_string(i), st, t, "topology"));
    wire_switched_node(b, eps, sws, lps, lt, site);
    if (k == 0)
      for (int i = 0; i < rails; ++i)
        rail_dev.push_back(b.add_device("rail" + std::to_string(i), rt, t, "topology"));
    for (int g = 0; g < per; ++g)
      for (int j = 0; j < nic; ++j)
        b.add_link({eps[g], fabric_ports + j}, {rail_dev[g * nic + j], k}, nlt, site);
  }
  for (int sp = 0; sp < spines; ++sp) {
    const int dev = b.add_device("spine" + std::to_string(sp), spt, t, "topology");
    for (int i = 0; i < rails; ++i)
      for (int u = sp; u < up; u += spines)
        b.add_link({rail_dev[i], nodes + u}, {dev, i * (up / spines) + u / spines}, slt, site);
  }
  b.set_domain_size(per);
}

}  // namespace

TopologyKind multi_node_topology() {
  using K = ParamKind;
  TopologyKind k;
  k.name = "multi_node";
  k.summary =
      "Two-level system: `nodes` switched nodes (each as switched_node: endpoints_per_node "
      "endpoints, switches_per_node switches, links_per_switch) whose endpoints' NIC "
      "ports go to rail switches (NIC j of local endpoint l on every node -> rail "
      "l * nic_ports + j), optionally with a spine tier above the rails. Names: "
      "node<k>_<endpoint_prefix><l>, node<k>_<switch_prefix><s>, rail<i>, spine<s>; ranks "
      "node-major (rank = node * endpoints_per_node + l).";
  k.params = {
      param("nodes", K::kInt, "", "", "Number of nodes.", 1, 1024),
      param("endpoint_type", K::kString, "", "",
            "A device type of type endpoint with nic_ports >= 1."),
      param("endpoints_per_node", K::kInt, "", "", "Endpoints per node (the domain size).", 1,
            4096),
      param("endpoint_prefix", K::kString, "gpu", "", "Endpoint names inside a node."),
      param("switch_type", K::kString, "", "", "The scale-up switch type inside a node."),
      param("switches_per_node", K::kInt, "", "", "Scale-up switches per node.", 1, 4096),
      param("switch_prefix", K::kString, "sw", "", "Scale-up switch names inside a node."),
      param("links_per_switch", K::kIntList, "", "links",
            "Links from every endpoint to scale-up switch s; sums to the endpoint's ports.", 0,
            4096),
      param("link_type", K::kString, "", "", "Scale-up link type (endpoint - switch)."),
      param("nic_link_type", K::kString, "", "", "Link type from a NIC port to its rail switch."),
      param("rail_switch_type", K::kString, "", "",
            "Rail (leaf) switch type; needs nodes ports for the NICs plus uplinks_per_rail."),
      param("spines", K::kInt, "0", "",
            "Spine switches above the rails (0: rails only; traffic between different "
            "local indices of different nodes then has no path).",
            0, 4096),
      param("spine_switch_type", K::kString, "none", "", "Spine switch type (when spines > 0)."),
      param("uplinks_per_rail", K::kInt, "0", "links",
            "Links from every rail switch to the spine tier, dealt round-robin over the "
            "spines (a multiple of spines).",
            0, 4096),
      param("spine_link_type", K::kString, "none", "",
            "Link type rail - spine (none: nic_link_type).")};
  k.build = build;
  return k;
}

}  // namespace fabricsim::topo
