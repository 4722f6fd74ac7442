// switched_node: N endpoints, S switches, links_per_switch[s] links from every endpoint to
// switch s (a DGX/HGX node, an NVL72 rack, a UALink pod).
#include "fabrics/topologies/switched_node.h"

namespace fabricsim::topo {

void wire_switched_node(Builder& b, const std::vector<int>& endpoints,
                        const std::vector<int>& switches, const std::vector<int64_t>& lps,
                        const std::string& link_type, const LinkSite& site) {
  for (size_t g = 0; g < endpoints.size(); ++g) {
    int port = 0;
    for (size_t s = 0; s < switches.size(); ++s)
      for (int k = 0; k < lps[s]; ++k)
        b.add_link({endpoints[g], port++}, {switches[s], int(int64_t(g) * lps[s] + k)},
                   link_type, site);
  }
}

namespace {

void build(const cfg::Params& p, Builder& b) {
  const std::string et = p.str("endpoint_type"), st = p.str("switch_type");
  const DeviceType& edt = b.device_type(p, "endpoint_type", false);
  const DeviceType& sdt = b.device_type(p, "switch_type", true);
  const int ne = int(p.integer("endpoints")), ns = int(p.integer("switches"));
  const std::vector<int64_t>& lps = p.int_list("links_per_switch");
  if (int(lps.size()) != ns)
    p.fail("links_per_switch",
           "links_per_switch has " + std::to_string(lps.size()) + " entries but switches is " +
               std::to_string(ns),
           "give one entry per switch");
  int64_t total = 0;
  for (int64_t x : lps) total += x;
  if (total != edt.ports)
    p.fail("links_per_switch",
           "links_per_switch sums to " + std::to_string(total) + " but endpoint type '" + et +
               "' has " + std::to_string(edt.ports) + " ports",
           "make them equal: every endpoint port needs a link");
  for (int sidx = 0; sidx < ns; ++sidx)
    if (lps[sidx] * ne > sdt.ports)
      p.fail("links_per_switch",
             "switch " + std::to_string(sidx) + " needs " + std::to_string(lps[sidx]) + " x " +
                 std::to_string(ne) + " = " + std::to_string(lps[sidx] * ne) +
                 " ports but switch type '" + st + "' has " + std::to_string(sdt.ports),
             "use fewer endpoints or links, or a larger switch");
  const std::string lt = p.str("link_type");
  b.link_type(p, "link_type");
  const YAML::Node& t = b.section();
  std::vector<int> eps, sws;
  for (int i = 0; i < ne; ++i)
    eps.push_back(b.add_device(p.str("endpoint_prefix") + std::to_string(i), et, t, "topology"));
  for (int i = 0; i < ns; ++i)
    sws.push_back(b.add_device(p.str("switch_prefix") + std::to_string(i), st, t, "topology"));
  wire_switched_node(b, eps, sws, lps, lt, LinkSite{t, t, t, "topology", false});
}

}  // namespace

TopologyKind switched_node_topology() {
  using K = ParamKind;
  TopologyKind k;
  k.name = "switched_node";
  k.summary =
      "N endpoints, S switches, links_per_switch[s] links from every endpoint to switch s "
      "(DGX H100: 8 GPUs, 4 NVSwitch3, 5/4/4/5).";
  k.params = {param("endpoint_type", K::kString, "", "", "A device type of type endpoint."),
              param("endpoints", K::kInt, "", "", "Number of endpoints (ranks, in order).", 1,
                    4096),
              param("endpoint_prefix", K::kString, "gpu", "", "Endpoint names: prefix + index."),
              param("switch_type", K::kString, "", "", "A device type of type switch."),
              param("switches", K::kInt, "", "", "Number of switches.", 1, 4096),
              param("switch_prefix", K::kString, "sw", "", "Switch names: prefix + index."),
              param("links_per_switch", K::kIntList, "", "links",
                    "Links from every endpoint to switch s; sums to the endpoint's ports.", 0,
                    4096),
              param("link_type", K::kString, "", "", "A link type from link_types.")};
  k.build = build;
  return k;
}

}  // namespace fabricsim::topo
