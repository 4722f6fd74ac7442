// rail_optimized: DGX/HGX-style nodes (endpoints on scale-up switches, as switched_node)
// whose scale-out NICs form rails: NIC l of every node on rail leaf l, with a spine tier
// above the rails, or none (rail-only: traffic between different local indices must first
// cross the node's scale-up fabric). The scale-out network is chosen by one key,
// `scale_out`:
//  * uec / roce: every endpoint's NIC port links (host_link_type) to a NIC device of
//    uec_nic_type / roce_nic_type, whose network port goes to the rail (eth_link_type,
//    Ethernet switches eth_switch_type);
//  * infiniband: the endpoint's own credit NIC port goes to the rail (ib_link_type, switches
//    ib_switch_type), endpoints of ib_endpoint_type.
// Names: node<k>_gpu<l>, node<k>_sw<s>, node<k>_nic<l>, rail<l>, spine<s>; ranks node-major.
#include "fabrics/topologies/switched_node.h"

namespace fabricsim::topo {

namespace {

void build(const cfg::Params& p, Builder& b) {
  const std::string mode = p.str("scale_out");
  const bool ib = mode == "infiniband";
  const char* ekey = ib ? "ib_endpoint_type" : "endpoint_type";
  const std::string et = p.str(ekey), st = p.str("switch_type");
  const DeviceType& edt = b.device_type(p, ekey, false);
  const DeviceType& sdt = b.device_type(p, "switch_type", true);
  const char* rkey = ib ? "ib_switch_type" : "eth_switch_type";
  const std::string rt = p.str(rkey);
  const DeviceType& rdt = b.device_type(p, rkey, true);
  const int nic = edt.ports_with_role("NIC"), fabric_ports = edt.ports - nic;
  if (nic != 1)
    p.fail(ekey, "device type '" + et + "' has " + std::to_string(nic) + " NIC ports",
           "set device_types." + et + ".nic_ports: 1 (one NIC per GPU, one rail each)");
  const int nodes = int(p.integer("nodes")), per = int(p.integer("endpoints_per_node"));
  const int ns = int(p.integer("switches_per_node"));
  const std::vector<int64_t>& lps = p.int_list("links_per_switch");
  int64_t total = 0;
  for (int64_t x : lps) total += x;
  if (int(lps.size()) != ns || total != fabric_ports)
    p.fail("links_per_switch",
           "links_per_switch must have switches_per_node (" + std::to_string(ns) +
               ") entries summing to the endpoint's " + std::to_string(fabric_ports) +
               " fabric ports",
           "e.g. [5, 4, 4, 5] for a DGX H100");
  for (int s = 0; s < ns; ++s)
    if (lps[size_t(s)] * per > sdt.ports)
      p.fail("links_per_switch",
             "switch " + std::to_string(s) + " needs " + std::to_string(lps[size_t(s)] * per) +
                 " ports but switch type '" + st + "' has " + std::to_string(sdt.ports),
             "use fewer endpoints or links, or a larger switch");
  const int spines = int(p.integer("spines")), up = int(p.integer("uplinks_per_rail"));
  if (nodes + up > rdt.ports)
    p.fail("uplinks_per_rail",
           "a rail switch needs " + std::to_string(nodes) + " NIC ports + " +
               std::to_string(up) + " uplinks but switch type '" + rt + "' has " +
               std::to_string(rdt.ports),
           "use fewer nodes or uplinks, or a larger rail switch");
  if ((spines == 0) != (up == 0) || (spines > 0 && up % spines != 0))
    p.fail("uplinks_per_rail",
           "uplinks_per_rail " + std::to_string(up) + " with spines " + std::to_string(spines) +
               ": give both (uplinks a multiple of spines) or neither (rail-only)",
           "e.g. spines: 8, uplinks_per_rail: 32");
  if (spines > 0 && per * (up / spines) > rdt.ports)
    p.fail("spines",
           "every spine needs " + std::to_string(per * (up / spines)) +
               " ports but switch type '" + rt + "' has " + std::to_string(rdt.ports),
           "use more spines");
  const char* lkey = ib ? "ib_link_type" : "eth_link_type";
  const std::string lt = p.str("link_type"), nlt = p.str(lkey);
  b.link_type(p, "link_type");
  b.link_type(p, lkey);
  std::string nic_type, hlt;
  if (!ib) {
    const char* nkey = mode == "uec" ? "uec_nic_type" : "roce_nic_type";
    nic_type = p.str(nkey);
    const DeviceType& ndt = b.device_type(p.node(nkey), std::string("topology.") + nkey, nic_type);
    if (ndt.ports_with_role("network") != 1)
      p.fail(nkey, "device type '" + nic_type + "' is not a NIC", "name a " + mode + "_nic type");
    hlt = p.str("host_link_type");
    b.link_type(p, "host_link_type");
  }
  const YAML::Node& t = b.section();
  const LinkSite site{t, t, t, "topology", false};
  std::vector<int> rail;
  for (int l = 0; l < per; ++l) rail.push_back(b.add_device("rail" + std::to_string(l), rt, t, "topology"));
  for (int k = 0; k < nodes; ++k) {
    const std::string node = "node" + std::to_string(k) + "_";
    std::vector<int> eps, sws;
    for (int l = 0; l < per; ++l)
      eps.push_back(b.add_device(node + "gpu" + std::to_string(l), et, t, "topology"));
    for (int s = 0; s < ns; ++s)
      sws.push_back(b.add_device(node + "sw" + std::to_string(s), st, t, "topology"));
    wire_switched_node(b, eps, sws, lps, lt, site);
    for (int l = 0; l < per; ++l) {
      LinkEnd out{eps[size_t(l)], fabric_ports};
      if (!ib) {
        const int n = b.add_device(node + "nic" + std::to_string(l), nic_type, t, "topology");
        b.add_link(out, {n, 0}, hlt, site);
        out = {n, b.graph().devices[size_t(n)].ports - 1};
      }
      b.add_link(out, {rail[size_t(l)], k}, nlt, site);
    }
  }
  for (int s = 0; s < spines; ++s) {
    const int dev = b.add_device("spine" + std::to_string(s), rt, t, "topology");
    for (int l = 0; l < per; ++l)
      for (int u = s; u < up; u += spines)
        b.add_link({rail[size_t(l)], nodes + u}, {dev, l * (up / spines) + u / spines}, nlt, site);
  }
  b.set_domain_size(per);
}

}  // namespace

TopologyKind rail_optimized_topology() {
  using K = ParamKind;
  TopologyKind k;
  k.name = "rail_optimized";
  k.summary =
      "Rail-optimised cluster of switched nodes (DGX/HGX): NIC l of every node on rail switch "
      "l, a spine tier above the rails or none (rail-only); the scale-out network (uec, roce: "
      "NIC devices on Ethernet rails; infiniband: the endpoints' credit NICs on InfiniBand "
      "rails) chosen by `scale_out`. Names: node<k>_gpu<l>, node<k>_sw<s>, node<k>_nic<l>, "
      "rail<l>, spine<s>; ranks node-major.";
  k.params = {
      param("nodes", K::kInt, "", "", "Number of nodes.", 1, 65536),
      param("endpoints_per_node", K::kInt, "", "", "Endpoints (GPUs) per node: also the rails.",
            1, 4096),
      param("switches_per_node", K::kInt, "", "", "Scale-up switches per node.", 1, 4096),
      param("links_per_switch", K::kIntList, "", "links",
            "Links from every endpoint to scale-up switch s; sums to its fabric ports.", 0, 4096),
      param("switch_type", K::kString, "", "", "Scale-up switch type."),
      param("link_type", K::kString, "", "", "Scale-up link type (endpoint - switch)."),
      choice("scale_out", {"uec", "roce", "infiniband"}, "uec",
             "The scale-out network: Ultra Ethernet or RoCEv2 NICs on Ethernet rails, or the "
             "endpoints' InfiniBand credit NICs on InfiniBand rails."),
      param("endpoint_type", K::kString, "", "",
            "Endpoint type (uec, roce): one NIC port to its NIC device."),
      param("uec_nic_type", K::kString, "uec", "", "NIC device type of scale_out: uec."),
      param("roce_nic_type", K::kString, "roce", "", "NIC device type of scale_out: roce."),
      param("host_link_type", K::kString, "none", "", "Link type endpoint - NIC (uec, roce)."),
      param("eth_switch_type", K::kString, "none", "",
            "Rail and spine switch type (uec, roce)."),
      param("eth_link_type", K::kString, "none", "", "Link type NIC - rail and rail - spine."),
      param("ib_endpoint_type", K::kString, "none", "",
            "Endpoint type (infiniband): its NIC port speaks infiniband."),
      param("ib_switch_type", K::kString, "none", "", "Rail and spine switch type (infiniband)."),
      param("ib_link_type", K::kString, "none", "",
            "Link type endpoint NIC - rail and rail - spine (infiniband)."),
      param("spines", K::kInt, "0", "",
            "Spine switches (0: rail-only, no path between different local indices of "
            "different nodes).",
            0, 4096),
      param("uplinks_per_rail", K::kInt, "0", "links",
            "Links from every rail to the spines, dealt round-robin (a multiple of spines).", 0,
            4096)};
  k.build = build;
  return k;
}

}  // namespace fabricsim::topo
