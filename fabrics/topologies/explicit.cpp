// explicit: devices and links listed one by one, and optionally the ranks.
#include <regex>
#include <set>

#include "fabrics/topologies/builder.h"
#include "models/core/text.h"

namespace fabricsim::topo {

using cfg::fail;
using cfg::join_key;

namespace {

LinkEnd parse_end(Builder& b, const YAML::Node& n, const std::string& path) {
  static const std::regex kEnd(R"(([A-Za-z_][A-Za-z0-9_]*)\.port\[([0-9]+)\])");
  const std::string& file = b.file();
  const std::string text = cfg::scalar(file, n, path, "a port like gpu0.port[3]",
                                       "write DEVICE.port[INDEX], e.g. gpu0.port[3]");
  std::smatch m;
  if (!std::regex_match(text, m, kEnd))
    fail(file, n, path, "bad port reference '" + text + "'",
         "write DEVICE.port[INDEX], e.g. gpu0.port[3]");
  const Graph& g = b.graph();
  auto it = g.by_name.find(m[1].str());
  if (it == g.by_name.end()) {
    std::vector<std::string> names;
    for (const auto& kv : g.by_name) names.push_back(kv.first);
    fail(file, n, path, "unknown device '" + m[1].str() + "'", did_you_mean(m[1].str(), names));
  }
  if (m[2].str().size() > 6)
    fail(file, n, path, "port index " + m[2].str() + " is too large",
         "ports are numbered from 0 to the device's ports - 1");
  return LinkEnd{it->second, std::stoi(m[2].str())};
}

void build(const cfg::Params&, Builder& b) {
  const std::string& file = b.file();
  const YAML::Node& t = b.section();
  static const std::vector<std::string> keys{"type", "devices", "links", "ranks"};
  for (const auto& kv : t) {
    const std::string k = cfg::key_name(file, kv.first, "topology");
    if (std::find(keys.begin(), keys.end(), k) == keys.end())
      fail(file, kv.first, join_key("topology", k), "unknown key '" + k + "'",
           did_you_mean(k, keys));
  }
  YAML::Node devs = t["devices"];
  if (!devs.IsDefined() || !devs.IsMap() || devs.size() == 0)
    fail(file, devs.IsDefined() ? devs : t, "topology.devices",
         "expected a map of device name -> device type",
         "e.g. devices: {gpu0: h100, sw0: nvswitch3}");
  nlohmann::json rd = nlohmann::json::object();
  for (const auto& kv : devs) {
    const std::string name = cfg::key_name(file, kv.first, "topology.devices");
    const std::string path = join_key("topology.devices", name);
    const std::string type = cfg::scalar(file, kv.second, path, "a device type name",
                                         "known: " + join_list(b.device_type_names()));
    b.add_device(name, type, kv.second, path);
    rd[name] = type;
  }
  YAML::Node links = t["links"];
  if (!links.IsDefined() || !links.IsSequence())
    fail(file, links.IsDefined() ? links : t, "topology.links", "expected a list of links",
         "e.g. links: [{a: \"gpu0.port[0]\", b: \"sw0.port[0]\", type: nvlink4}]");
  nlohmann::json rl = nlohmann::json::array();
  for (size_t i = 0; i < links.size(); ++i) {
    const YAML::Node l = links[i];
    const std::string path = "topology.links[" + std::to_string(i) + "]";
    if (!l.IsMap())
      fail(file, l, path, "expected a map {a, b, type}",
           "e.g. - {a: \"gpu0.port[0]\", b: \"sw0.port[0]\", type: nvlink4}");
    static const std::vector<std::string> lkeys{"a", "b", "type"};
    for (const auto& kv : l) {
      const std::string k = cfg::key_name(file, kv.first, path);
      if (std::find(lkeys.begin(), lkeys.end(), k) == lkeys.end())
        fail(file, kv.first, join_key(path, k), "unknown key '" + k + "'",
             did_you_mean(k, lkeys));
    }
    for (const char* k : {"a", "b", "type"})
      if (!l[k].IsDefined() || l[k].IsNull())
        fail(file, l, path, std::string("missing required key '") + k + "'",
             "a link is {a: DEV.port[i], b: DEV.port[j], type: LINK_TYPE}");
    const LinkEnd a = parse_end(b, l["a"], join_key(path, "a"));
    const LinkEnd e = parse_end(b, l["b"], join_key(path, "b"));
    const std::string type = cfg::scalar(file, l["type"], join_key(path, "type"),
                                         "a link type name",
                                         "known: " + join_list(b.link_type_names()));
    b.add_link(a, e, type, LinkSite{l["a"], l["b"], l["type"], path, true});
    rl.push_back({{"a", l["a"].Scalar()}, {"b", l["b"].Scalar()}, {"type", type}});
  }
  YAML::Node ranks = t["ranks"];
  if (ranks.IsDefined() && !ranks.IsNull()) {
    if (!ranks.IsSequence())
      fail(file, ranks, "topology.ranks", "expected a list of endpoint names",
           "e.g. ranks: [gpu0, gpu1]");
    if (ranks.size() == 0)
      fail(file, ranks, "topology.ranks", "the list of ranks is empty",
           "list the endpoints that run the workload, or remove the key to use every endpoint");
    std::set<int> seen;
    std::vector<int> order;
    const Graph& g = b.graph();
    for (size_t i = 0; i < ranks.size(); ++i) {
      const std::string path = "topology.ranks[" + std::to_string(i) + "]";
      const std::string name = cfg::scalar(file, ranks[i], path, "an endpoint name", "e.g. gpu0");
      auto it = g.by_name.find(name);
      if (it == g.by_name.end() || !g.devices[it->second].terminal)
        fail(file, ranks[i], path, "'" + name + "' is not an endpoint",
             "list endpoint device names");
      const int id = g.devices[it->second].endpoint_id;
      if (!seen.insert(id).second)
        fail(file, ranks[i], path, "'" + name + "' is listed twice",
             "each endpoint takes one rank");
      order.push_back(id);
    }
    b.set_ranks(std::move(order));
  }
  b.set_resolved({{"type", "explicit"}, {"devices", rd}, {"links", rl}});
}

}  // namespace

TopologyKind explicit_topology() {
  TopologyKind k;
  k.name = "explicit";
  k.summary =
      "Devices and links listed one by one: `devices: {name: device_type}`, `links: - {a: "
      "\"gpu0.port[0]\", b: \"sw0.port[3]\", type: link_type}` (quote port names inside "
      "{...}: '[' is YAML syntax there), optional `ranks: [names]` (default: every "
      "endpoint in declaration order).";
  k.reads_section = true;
  k.build = build;
  return k;
}

}  // namespace fabricsim::topo
