// full_mesh: N endpoints, every pair joined by links_per_pair direct links, no switch (an
// AMD MI300X-class platform: 8 GPUs, 7 Infinity Fabric links each, one to every peer).
// Endpoint i's port for its k-th link to peer j is (j < i ? j : j - 1) * links_per_pair + k,
// so its ports list its peers in rank order.
#include "fabrics/topologies/builder.h"

namespace fabricsim::topo {

namespace {

void build(const cfg::Params& p, Builder& b) {
  const std::string et = p.str("endpoint_type");
  const DeviceType& edt = b.device_type(p, "endpoint_type", false);
  const int n = int(p.integer("endpoints"));
  const int lpp = int(p.integer("links_per_pair"));
  const int64_t need = int64_t(n - 1) * lpp;
  if (need != edt.ports)
    p.fail("endpoints",
           std::to_string(n) + " endpoints with links_per_pair " + std::to_string(lpp) +
               " need " + std::to_string(need) + " ports each, endpoint type '" + et +
               "' has " + std::to_string(edt.ports),
           "set device_types." + et + ".ports to " + std::to_string(need) +
               " (a full mesh links every pair directly)");
  const std::string lt = p.str("link_type");
  b.link_type(p, "link_type");
  const YAML::Node& t = b.section();
  std::vector<int> eps;
  for (int i = 0; i < n; ++i)
    eps.push_back(b.add_device(p.str("endpoint_prefix") + std::to_string(i), et, t, "topology"));
  const LinkSite site{t, t, t, "topology", false};
  const auto port = [lpp](int i, int j, int k) { return (j < i ? j : j - 1) * lpp + k; };
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j)
      for (int k = 0; k < lpp; ++k)
        b.add_link({eps[size_t(i)], port(i, j, k)}, {eps[size_t(j)], port(j, i, k)}, lt, site);
}

}  // namespace

TopologyKind full_mesh_topology() {
  using K = ParamKind;
  TopologyKind k;
  k.name = "full_mesh";
  k.summary =
      "N endpoints, every pair joined by links_per_pair direct links, no switch (MI300X-class: "
      "8 GPUs, 7 links each).";
  k.params = {param("endpoint_type", K::kString, "", "", "A device type of type endpoint."),
              param("endpoints", K::kInt, "", "", "Number of endpoints (ranks, in order).", 2,
                    64),
              param("endpoint_prefix", K::kString, "gpu", "", "Endpoint names: prefix + index."),
              param("links_per_pair", K::kInt, "1", "links",
                    "Links between every two endpoints; an endpoint has (endpoints - 1) x this "
                    "ports.",
                    1, 64),
              param("link_type", K::kString, "", "", "A link type from link_types.")};
  k.build = build;
  return k;
}

}  // namespace fabricsim::topo
