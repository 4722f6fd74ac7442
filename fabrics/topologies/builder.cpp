#include "fabrics/topologies/builder.h"

#include <cstdio>
#include <regex>

#include "models/core/text.h"

namespace fabricsim::topo {

using cfg::fail;
using cfg::join_key;

namespace {

template <class Map>
std::vector<std::string> keys_of(const Map& m) {
  std::vector<std::string> v;
  for (const auto& kv : m) v.push_back(kv.first);
  return v;
}

}  // namespace

Registry<TopologyKind>& topologies() {
  static Registry<TopologyKind> r("topology generator");
  return r;
}

Builder::Builder(std::string file, YAML::Node section,
                 const std::map<std::string, DeviceType>& device_types,
                 const std::map<std::string, LinkParams>& link_types)
    : file_(std::move(file)),
      section_(std::move(section)),
      device_types_(device_types),
      link_types_(link_types) {}

std::vector<std::string> Builder::device_type_names() const { return keys_of(device_types_); }
std::vector<std::string> Builder::link_type_names() const { return keys_of(link_types_); }

const DeviceType& Builder::device_type(const YAML::Node& at, const std::string& path,
                                       const std::string& name) const {
  auto it = device_types_.find(name);
  if (it == device_types_.end())
    fail(file_, at, path, "unknown device type '" + name + "'",
         did_you_mean(name, device_type_names()));
  return it->second;
}

const DeviceType& Builder::device_type(const cfg::Params& p, const char* key,
                                       bool want_switch) const {
  const std::string& name = p.str(key);
  const DeviceType& dt = device_type(p.node(key), std::string("topology.") + key, name);
  if (want_switch ? !dt.kind->forwards : !dt.kind->terminal)
    p.fail(key, "device type '" + name + (want_switch ? "' is not a switch" : "' is a switch"),
           want_switch ? "name a switch type" : "name an endpoint type");
  return dt;
}

const LinkParams& Builder::link_type(const YAML::Node& at, const std::string& path,
                                     const std::string& name) const {
  auto it = link_types_.find(name);
  if (it == link_types_.end())
    fail(file_, at, path, "unknown link type '" + name + "'",
         did_you_mean(name, link_type_names()));
  return it->second;
}

const LinkParams& Builder::link_type(const cfg::Params& p, const char* key) const {
  return link_type(p.node(key), std::string("topology.") + key, p.str(key));
}

void Builder::spend(double bytes) {
  spent_ += bytes;
  if (budget_ <= 0 || spent_ <= budget_) return;
  char need[32], have[32], per[48];
  std::snprintf(need, sizeof need, "%.1fGiB", spent_ / double(1 << 30));
  std::snprintf(have, sizeof have, "%.1fGiB", budget_ / double(1 << 30));
  std::snprintf(per, sizeof per, "~%.1fKiB per link", per_link_ / 1024);
  fail(file_, section_, "topology",
       "the topology is too large for the memory limit of " + std::string(have) +
           ": its first " + std::to_string(graph_.devices.size()) + " devices and " +
           std::to_string(graph_.links.size()) + " links alone need " + need +
           " once built (" + per + "), and it has more",
       "build a smaller system, or raise simulation.memory_limit on a machine that has the "
       "memory");
}

int Builder::add_device(const std::string& name, const std::string& type,
                        const YAML::Node& where, const std::string& path,
                        std::vector<int> coords) {
  spend(per_device_);
  static const std::regex kName("[A-Za-z_][A-Za-z0-9_]*");
  if (!std::regex_match(name, kName))
    fail(file_, where, path, "bad device name '" + name + "'",
         "use letters, digits and '_', starting with a letter");
  if (graph_.by_name.count(name))
    fail(file_, where, path, "device '" + name + "' is declared twice", "names must be unique");
  const DeviceType& dt = device_type(where, path, type);
  Device d;
  d.name = name;
  d.type = type;
  d.forwards = dt.kind->forwards;
  d.terminal = dt.kind->terminal;
  d.ports = dt.ports;
  d.where = where;
  d.coords = std::move(coords);
  if (dt.kind->circuits) d.circuit = dt.kind->circuits(dt, d.coords);
  return graph_.add_device(d);
}

void Builder::add_link(LinkEnd a, LinkEnd b, const std::string& type, const LinkSite& at) {
  spend(per_link_);
  auto sub = [&](const char* k) { return at.per_key ? join_key(at.path, k) : at.path; };
  const LinkParams& lt = link_type(at.type, sub("type"), type);
  if (a.device == b.device && a.port == b.port)
    fail(file_, at.b, sub("b"), "a link cannot join a port to itself", "link two different ports");
  // A loop back into the same device carries nothing a route could use (routes never
  // return to the device they left) and would count its traffic twice.
  if (a.device == b.device) {
    const std::string& d = graph_.devices[size_t(a.device)].name;
    fail(file_, at.b, sub("b"),
         "a link cannot join two ports of one device (" + d + ".port[" + std::to_string(a.port) +
             "] and " + d + ".port[" + std::to_string(b.port) + "])",
         "link the port to another device");
  }
  int which = 0;
  for (const LinkEnd& end : {a, b}) {
    const YAML::Node& node = which == 0 ? at.a : at.b;
    const std::string path = sub(which == 0 ? "a" : "b");
    ++which;
    const Device& d = graph_.devices[end.device];
    const std::string pname = d.name + ".port[" + std::to_string(end.port) + "]";
    if (end.port < 0 || end.port >= d.ports)
      fail(file_, node, path,
           "port " + pname + " does not exist (" + d.name + " has " + std::to_string(d.ports) +
               " ports, 0 to " + std::to_string(d.ports - 1) + ")",
           "use a port index below " + std::to_string(d.ports));
    auto it = bound_.find({end.device, end.port});
    if (it != bound_.end())
      fail(file_, node, path, "port " + pname + " is linked twice (first at " + it->second + ")",
           "each port takes exactly one link");
    const DeviceType& dt = device_types_.at(d.type);
    const PortGroup& group = dt.group_of(end.port);
    if (group.protocol != lt.protocol)
      fail(file_, at.type, sub("type"),
           "incompatible link: link type '" + type + "' carries " + lt.protocol + " but " +
               (&group != &dt.port_groups.front() ? pname + ", a " + group.role + " port of "
                                                  : "") +
               d.name + " (" + d.type + ") speaks " + group.protocol,
           "use a " + group.protocol + " link type for this port");
    bound_[{end.device, end.port}] = cfg::where(file_, node);
  }
  graph_.links.push_back(Link{a, b, type, at.per_key ? at.a : at.type});
}

void Builder::finish() {
  graph_.index_ports();
  // Every port of a terminal device must be linked; other devices may leave ports unused.
  for (const Device& d : graph_.devices) {
    if (!d.terminal) continue;
    for (int p = 0; p < d.ports; ++p)
      if (!bound_.count({graph_.by_name.at(d.name), p}))
        fail(file_, d.where, "topology",
             "port " + d.name + ".port[" + std::to_string(p) + "] is not linked; every "
             "endpoint port needs a link",
             "add a link for it, or lower device_types." + d.type + ".ports");
  }
  if (graph_.endpoints.empty())
    fail(file_, section_, "topology", "the topology has no endpoints", "add endpoint devices");
  if (ranks_.empty())
    for (size_t k = 0; k < graph_.endpoints.size(); ++k) ranks_.push_back(int(k));
}

}  // namespace fabricsim::topo
