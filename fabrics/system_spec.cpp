#include "fabrics/system_spec.h"

#include <cmath>
#include <regex>
#include <set>

#include "fabrics/config.h"
#include "fabrics/params.h"
#include "fabrics/registry.h"
#include "models/core/errors.h"
#include "models/collectives/algorithms.h"
#include "models/core/units.h"

namespace fabricsim {

using cfg::Category;
using cfg::fail;
using cfg::join_key;
using cfg::Params;

namespace {

const std::vector<std::string> kTopKeys{"version",      "name",         "seed",     "simulation",
                                        "link_types",   "device_types", "topology", "workload"};

std::string list(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::vector<std::string> keys_of(const std::map<std::string, LinkParams>& m) {
  std::vector<std::string> v;
  for (const auto& kv : m) v.push_back(kv.first);
  return v;
}
std::vector<std::string> keys_of(const std::map<std::string, DeviceType>& m) {
  std::vector<std::string> v;
  for (const auto& kv : m) v.push_back(kv.first);
  return v;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& known) {
  const std::string near = cfg::nearest(word, known);
  std::string hint = near.empty() ? "" : "did you mean '" + near + "'? ";
  return hint + (known.empty() ? "none are defined" : "known: " + list(known));
}

class Loader {
 public:
  Loader(std::string file, YAML::Node root) : file_(std::move(file)), root_(std::move(root)) {}

  SystemSpec load(std::optional<uint64_t> seed) {
    s_.file = file_;
    for (const auto& kv : root_) {
      const std::string key = key_name(kv.first, "");
      if (std::find(kTopKeys.begin(), kTopKeys.end(), key) == kTopKeys.end())
        fail(file_, kv.first, key, "unknown top-level key '" + key + "'",
             did_you_mean(key, kTopKeys));
    }
    top();
    if (seed) s_.seed = *seed;
    simulation();
    link_types();
    device_types();
    topology();
    workload();
    cross_checks();
    s_.resolved["name"] = s_.name;
    s_.resolved["seed"] = s_.seed;
    return std::move(s_);
  }

 private:
  // A map key as a name; anything else is bad input, not a yaml-cpp conversion error.
  std::string key_name(const YAML::Node& key, const std::string& path) {
    if (!key.IsScalar())
      fail(file_, key, path, "expected a key name, found " + cfg::describe_node(key),
           "keys are plain names");
    return key.Scalar();
  }

  std::string scalar(const YAML::Node& n, const std::string& path, const std::string& what,
                     const std::string& hint) {
    if (!n.IsDefined() || n.IsNull() || !n.IsScalar())
      fail(file_, n, path, "expected " + what + ", found " + cfg::describe_node(n), hint);
    return n.Scalar();
  }

  YAML::Node section(const std::string& key, bool required) {
    YAML::Node n = root_[key];
    if (!n.IsDefined() || n.IsNull()) {
      if (required)
        fail(file_, root_, key, "missing required section '" + key + "'",
             "see configs/minimal.yaml for a complete example");
      return YAML::Node();
    }
    if (!n.IsMap()) fail(file_, n, key, "expected a map, found " + cfg::describe_node(n), "");
    return n;
  }

  // The `type:` of a map, checked against the registry.
  const cfg::TypeEntry& type_of(const YAML::Node& n, const std::string& path, Category c) {
    YAML::Node t = n["type"];
    if (!t.IsDefined() || t.IsNull())
      fail(file_, n, path, "missing 'type'", "known " + std::string(cfg::category_name(c)) +
                                                  "s: " + list(cfg::type_names(c)));
    const std::string name = scalar(t, join_key(path, "type"), "a type name",
                                    "known: " + list(cfg::type_names(c)));
    const cfg::TypeEntry* e = cfg::find_type(c, name);
    if (!e)
      fail(file_, t, join_key(path, "type"),
           "unknown " + std::string(cfg::category_name(c)) + " '" + name + "'",
           did_you_mean(name, cfg::type_names(c)));
    return *e;
  }

  void top() {
    cfg::TypeSpec spec{"config", "", {}};
    spec.params.push_back({"version", cfg::Kind::kInt, "1", "", "Config schema version.", {}, 1, 1});
    spec.params.push_back({"name", cfg::Kind::kString, "", "", "System name.", {}});
    spec.params.push_back({"seed", cfg::Kind::kInt, "1", "", "Global random seed.", {}, 0, 9.0e18});
    spec.params[1].default_value = "unnamed";
    std::vector<std::string> sections(kTopKeys.begin() + 3, kTopKeys.end());
    Params p = cfg::parse_params(spec, root_, file_, "", sections);
    s_.name = p.str("name");
    s_.seed = uint64_t(p.integer("seed"));
  }

  void simulation() {
    const cfg::TypeEntry* e = cfg::find_type(Category::kSection, "simulation");
    Params p = cfg::parse_params(e->spec, section("simulation", false), file_, "simulation");
    s_.aggregate_bytes = p.bytes("aggregate_bytes");
    if (s_.aggregate_bytes > (1ull << 30))
      p.fail("aggregate_bytes", "aggregate_bytes " + format_bytes(s_.aggregate_bytes) +
                                    " is larger than the 1GiB a transaction can carry",
             "use 64KiB or less");
    s_.aggregate_min_message = p.bytes("aggregate_min_message");
    s_.time_limit_ps = p.time_ps("time_limit");
    s_.functional = p.boolean("functional");
    sim_params_ = p;
    s_.resolved["simulation"] = p.to_json();
  }

  void link_types() {
    YAML::Node sec = section("link_types", true);
    const cfg::TypeEntry* e = cfg::find_type(Category::kLink, "link");
    for (const auto& kv : sec) {
      const std::string name = key_name(kv.first, "link_types");
      const std::string path = join_key("link_types", name);
      Params p = cfg::parse_params(e->spec, kv.second, file_, path);
      LinkParams l;
      l.type_name = name;
      l.protocol = p.str("protocol");
      const long double rate = (long double)p.integer("lanes") * p.bandwidth_bps("lane_rate") *
                               p.real("encoding_efficiency");
      l.rate_bps = uint64_t(std::llround(rate));
      if (p.str("framing") == "flit") {
        l.framing.kind = Framing::Kind::kFlit;
        l.framing.flit_bytes = uint32_t(p.bytes("flit_bytes"));
        l.framing.overhead_flits = uint32_t(p.integer("overhead_flits"));
        l.framing.request_flits = uint32_t(p.integer("request_flits"));
      } else {
        l.framing.kind = Framing::Kind::kFrame;
        l.framing.header_bytes = uint32_t(p.bytes("header_bytes"));
        l.framing.min_frame_bytes = uint32_t(p.bytes("min_frame_bytes"));
        l.framing.gap_bytes = uint32_t(p.bytes("gap_bytes"));
      }
      l.packet_payload = uint32_t(p.bytes("packet_payload"));
      l.latency_ps = p.time_ps("latency");
      l.vcs = uint32_t(p.integer("vcs"));
      l.rx_buffer_bytes = p.bytes("rx_buffer");
      const uint64_t pkt_wire = l.framing.packet_wire_bytes(l.packet_payload);
      if (l.rx_buffer_bytes < pkt_wire)
        p.fail("rx_buffer",
               "rx_buffer " + format_bytes(l.rx_buffer_bytes) + " is smaller than one packet (" +
                   format_bytes(l.packet_payload) + " payload = " + format_bytes(pkt_wire) +
                   " on the wire)",
               "raise rx_buffer to at least " + format_bytes(pkt_wire));
      s_.link_types[name] = l;
      link_params_[name] = p;
      s_.resolved["link_types"][name] = p.to_json();
      s_.resolved["link_types"][name]["rate_per_direction"] = format_bandwidth_bps(l.rate_bps);
    }
    if (s_.link_types.empty())
      fail(file_, sec, "link_types", "no link types defined", "define at least one");
  }

  void device_types() {
    YAML::Node sec = section("device_types", true);
    for (const auto& kv : sec) {
      const std::string name = key_name(kv.first, "device_types");
      const std::string path = join_key("device_types", name);
      if (!kv.second.IsMap())
        fail(file_, kv.second, path, "expected a map with a 'type'", "e.g. {type: endpoint, ...}");
      const cfg::TypeEntry& e = type_of(kv.second, path, Category::kDevice);
      Params p = cfg::parse_params(e.spec, kv.second, file_, path, {"type"});
      DeviceType d;
      d.name = name;
      d.is_switch = e.spec.type == "switch";
      d.protocol = p.str("protocol");
      d.ports = int(p.integer("ports"));
      if (d.is_switch) {
        d.sw.ports = d.ports;
        d.sw.pipeline_latency_ps = p.time_ps("pipeline_latency");
        d.sw.input_queues = p.str("input_queues");
        d.sw.arbiter = p.str("arbiter");
        d.sw.islip_iterations = int(p.integer("islip_iterations"));
        d.sw.speedup = p.real("speedup");
        d.sw.egress_buffer_bytes = p.bytes("egress_buffer");
        d.sw.route_select = p.str("route_select");
        d.sw.nvls = p.boolean("nvls");
        // "none" or a bandwidth (the units parser rejects zero bandwidths).
        auto optional_Bps = [&](const std::string& key) -> uint64_t {
          const std::string v = p.str(key);
          if (v == "none") return 0;
          try {
            return parse_bandwidth_bps(v) / 8;
          } catch (const UnitError& ex) {
            p.fail(key, ex.problem(), "a bandwidth such as 2000GB/s, or none");
          }
          return 0;
        };
        d.sw.nvls_reduce_Bps = optional_Bps("nvls_reduce_bandwidth");
        d.sw.nvls_multicast_Bps = optional_Bps("nvls_multicast_bandwidth");
        if (d.sw.nvls && d.sw.nvls_reduce_Bps == 0)
          p.fail("nvls", "nvls is true but nvls_reduce_bandwidth is not set",
                 "set the reduction engine's throughput, e.g. nvls_reduce_bandwidth: 2000GB/s");
        std::string list = p.str("nvls_datatypes");
        for (size_t pos = 0; pos <= list.size();) {
          size_t comma = list.find(',', pos);
          if (comma == std::string::npos) comma = list.size();
          std::string t = list.substr(pos, comma - pos);
          t.erase(0, t.find_first_not_of(' '));
          t.erase(t.find_last_not_of(' ') + 1);
          static const std::vector<std::string> known{"float", "half", "bfloat16",
                                                      "double", "int32", "int8"};
          if (std::find(known.begin(), known.end(), t) == known.end())
            p.fail("nvls_datatypes", "'" + t + "' is not a datatype",
                   "a comma-separated list; " + did_you_mean(t, known));
          d.nvls_datatypes.push_back(t);
          pos = comma + 1;
        }
      } else {
        d.endpoint.ports = d.ports;
        d.endpoint.memory_bandwidth_Bps = p.bandwidth_bps("memory_bandwidth") / 8;
        d.endpoint.aggregate_bytes = s_.aggregate_bytes;
        d.endpoint.seed = s_.seed;
        d.endpoint.aggregate_min_message = s_.aggregate_min_message;
      }
      s_.device_types[name] = d;
      device_params_[name] = p;
      s_.resolved["device_types"][name] = p.to_json();
      s_.resolved["device_types"][name]["type"] = e.spec.type;
    }
  }

  const DeviceType& device_type(const YAML::Node& at, const std::string& path,
                                const std::string& name) {
    auto it = s_.device_types.find(name);
    if (it == s_.device_types.end())
      fail(file_, at, path, "unknown device type '" + name + "'",
           did_you_mean(name, keys_of(s_.device_types)));
    return it->second;
  }

  const LinkParams& link_type(const YAML::Node& at, const std::string& path,
                              const std::string& name) {
    auto it = s_.link_types.find(name);
    if (it == s_.link_types.end())
      fail(file_, at, path, "unknown link type '" + name + "'",
           did_you_mean(name, keys_of(s_.link_types)));
    return it->second;
  }

  int add_device(const std::string& name, const std::string& type, const YAML::Node& where,
                 const std::string& path) {
    static const std::regex kName("[A-Za-z_][A-Za-z0-9_]*");
    if (!std::regex_match(name, kName))
      fail(file_, where, path, "bad device name '" + name + "'",
           "use letters, digits and '_', starting with a letter");
    if (s_.graph.by_name.count(name))
      fail(file_, where, path, "device '" + name + "' is declared twice", "names must be unique");
    const DeviceType& dt = device_type(where, path, type);
    topo::Device d;
    d.name = name;
    d.type = type;
    d.is_switch = dt.is_switch;
    d.ports = dt.ports;
    d.where = where;
    return s_.graph.add_device(d);
  }

  // Where a link's pieces were written: errors point at the offending one.
  struct LinkSite {
    YAML::Node a, b, type;
    std::string path;  // "topology.links[3]" or "topology"
    bool per_key;      // a/b/type are separate keys under path
  };

  // Adds a link after checking both ends; bound_ remembers where each port was linked.
  void add_link(topo::LinkEnd a, topo::LinkEnd b, const std::string& type, const LinkSite& at) {
    auto sub = [&](const char* k) { return at.per_key ? join_key(at.path, k) : at.path; };
    const LinkParams& lt = link_type(at.type, sub("type"), type);
    if (a.device == b.device && a.port == b.port)
      fail(file_, at.b, sub("b"), "a link cannot join a port to itself",
           "link two different ports");
    int which = 0;
    for (const topo::LinkEnd& end : {a, b}) {
      const YAML::Node& node = which == 0 ? at.a : at.b;
      const std::string path = sub(which == 0 ? "a" : "b");
      ++which;
      const topo::Device& d = s_.graph.devices[end.device];
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
      const DeviceType& dt = s_.device_types.at(d.type);
      if (dt.protocol != lt.protocol)
        fail(file_, at.type, sub("type"),
             "incompatible link: link type '" + type + "' carries " + lt.protocol + " but " +
                 d.name + " (" + d.type + ") speaks " + dt.protocol,
             "use a " + dt.protocol + " link type for this port");
      bound_[{end.device, end.port}] = cfg::where(file_, node);
    }
    s_.graph.links.push_back(topo::Link{a, b, type, at.per_key ? at.a : at.type});
  }

  topo::LinkEnd parse_end(const YAML::Node& n, const std::string& path) {
    static const std::regex kEnd(R"(([A-Za-z_][A-Za-z0-9_]*)\.port\[([0-9]+)\])");
    const std::string text = scalar(n, path, "a port like gpu0.port[3]",
                                    "write DEVICE.port[INDEX], e.g. gpu0.port[3]");
    std::smatch m;
    if (!std::regex_match(text, m, kEnd))
      fail(file_, n, path, "bad port reference '" + text + "'", "write DEVICE.port[INDEX], e.g. gpu0.port[3]");
    auto it = s_.graph.by_name.find(m[1].str());
    if (it == s_.graph.by_name.end()) {
      std::vector<std::string> names;
      for (const auto& kv : s_.graph.by_name) names.push_back(kv.first);
      fail(file_, n, path, "unknown device '" + m[1].str() + "'", did_you_mean(m[1].str(), names));
    }
    if (m[2].str().size() > 6)
      fail(file_, n, path, "port index " + m[2].str() + " is too large",
           "ports are numbered from 0 to the device's ports - 1");
    return topo::LinkEnd{it->second, std::stoi(m[2].str())};
  }

  void topology() {
    YAML::Node t = section("topology", true);
    const cfg::TypeEntry& e = type_of(t, "topology", Category::kTopology);
    topo_node_ = t;
    if (e.spec.type == "switched_node")
      switched_node(t, e.spec);
    else
      explicit_topology(t);
    s_.graph.index_ports();
    // Every endpoint port must be linked; switches may leave ports unused.
    for (const topo::Device& d : s_.graph.devices) {
      if (d.is_switch) continue;
      for (int p = 0; p < d.ports; ++p)
        if (!bound_.count({s_.graph.by_name.at(d.name), p}))
          fail(file_, d.where, "topology",
               "port " + d.name + ".port[" + std::to_string(p) + "] is not linked; every "
               "endpoint port needs a link",
               "add a link for it, or lower device_types." + d.type + ".ports");
    }
    if (s_.graph.endpoints.empty())
      fail(file_, t, "topology", "the topology has no endpoints", "add endpoint devices");
    if (s_.ranks.empty())
      for (size_t k = 0; k < s_.graph.endpoints.size(); ++k) s_.ranks.push_back(int(k));
  }

  void switched_node(const YAML::Node& t, const cfg::TypeSpec& spec) {
    Params p = cfg::parse_params(spec, t, file_, "topology", {"type"});
    s_.resolved["topology"] = p.to_json();
    s_.resolved["topology"]["type"] = "switched_node";
    const std::string et = p.str("endpoint_type"), st = p.str("switch_type");
    const DeviceType& edt = device_type(p.node("endpoint_type"), "topology.endpoint_type", et);
    const DeviceType& sdt = device_type(p.node("switch_type"), "topology.switch_type", st);
    if (edt.is_switch)
      p.fail("endpoint_type", "device type '" + et + "' is a switch", "name an endpoint type");
    if (!sdt.is_switch)
      p.fail("switch_type", "device type '" + st + "' is not a switch", "name a switch type");
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
    link_type(p.node("link_type"), "topology.link_type", lt);
    std::vector<int> eps, sws;
    for (int i = 0; i < ne; ++i)
      eps.push_back(add_device(p.str("endpoint_prefix") + std::to_string(i), et, t, "topology"));
    for (int i = 0; i < ns; ++i)
      sws.push_back(add_device(p.str("switch_prefix") + std::to_string(i), st, t, "topology"));
    for (int g = 0; g < ne; ++g) {
      int gport = 0;
      for (int sidx = 0; sidx < ns; ++sidx)
        for (int k = 0; k < lps[sidx]; ++k)
          add_link({eps[g], gport++}, {sws[sidx], int(g * lps[sidx] + k)}, lt,
                   LinkSite{t, t, t, "topology", false});
    }
  }

  void explicit_topology(const YAML::Node& t) {
    static const std::vector<std::string> keys{"type", "devices", "links", "ranks"};
    for (const auto& kv : t) {
      const std::string k = key_name(kv.first, "topology");
      if (std::find(keys.begin(), keys.end(), k) == keys.end())
        fail(file_, kv.first, join_key("topology", k), "unknown key '" + k + "'",
             did_you_mean(k, keys));
    }
    YAML::Node devs = t["devices"];
    if (!devs.IsDefined() || !devs.IsMap() || devs.size() == 0)
      fail(file_, devs.IsDefined() ? devs : t, "topology.devices",
           "expected a map of device name -> device type", "e.g. devices: {gpu0: h100, sw0: nvswitch3}");
    nlohmann::json rd = nlohmann::json::object();
    for (const auto& kv : devs) {
      const std::string name = key_name(kv.first, "topology.devices");
      const std::string path = join_key("topology.devices", name);
      const std::string type = scalar(kv.second, path, "a device type name",
                                      "known: " + list(keys_of(s_.device_types)));
      add_device(name, type, kv.second, path);
      rd[name] = type;
    }
    YAML::Node links = t["links"];
    if (!links.IsDefined() || !links.IsSequence())
      fail(file_, links.IsDefined() ? links : t, "topology.links", "expected a list of links",
           "e.g. links: [{a: \"gpu0.port[0]\", b: \"sw0.port[0]\", type: nvlink4}]");
    nlohmann::json rl = nlohmann::json::array();
    for (size_t i = 0; i < links.size(); ++i) {
      const YAML::Node l = links[i];
      const std::string path = "topology.links[" + std::to_string(i) + "]";
      if (!l.IsMap())
        fail(file_, l, path, "expected a map {a, b, type}",
             "e.g. - {a: \"gpu0.port[0]\", b: \"sw0.port[0]\", type: nvlink4}");
      static const std::vector<std::string> lkeys{"a", "b", "type"};
      for (const auto& kv : l) {
        const std::string k = key_name(kv.first, path);
        if (std::find(lkeys.begin(), lkeys.end(), k) == lkeys.end())
          fail(file_, kv.first, join_key(path, k), "unknown key '" + k + "'", did_you_mean(k, lkeys));
      }
      for (const char* k : {"a", "b", "type"})
        if (!l[k].IsDefined() || l[k].IsNull())
          fail(file_, l, path, std::string("missing required key '") + k + "'",
               "a link is {a: DEV.port[i], b: DEV.port[j], type: LINK_TYPE}");
      const topo::LinkEnd a = parse_end(l["a"], join_key(path, "a"));
      const topo::LinkEnd b = parse_end(l["b"], join_key(path, "b"));
      const std::string type = scalar(l["type"], join_key(path, "type"), "a link type name",
                                      "known: " + list(keys_of(s_.link_types)));
      add_link(a, b, type, LinkSite{l["a"], l["b"], l["type"], path, true});
      rl.push_back({{"a", l["a"].Scalar()}, {"b", l["b"].Scalar()}, {"type", type}});
    }
    YAML::Node ranks = t["ranks"];
    if (ranks.IsDefined() && !ranks.IsNull()) {
      if (!ranks.IsSequence())
        fail(file_, ranks, "topology.ranks", "expected a list of endpoint names",
             "e.g. ranks: [gpu0, gpu1]");
      std::set<int> seen;
      for (size_t i = 0; i < ranks.size(); ++i) {
        const std::string path = "topology.ranks[" + std::to_string(i) + "]";
        const std::string name = scalar(ranks[i], path, "an endpoint name", "e.g. gpu0");
        auto it = s_.graph.by_name.find(name);
        if (it == s_.graph.by_name.end() || s_.graph.devices[it->second].is_switch)
          fail(file_, ranks[i], path, "'" + name + "' is not an endpoint", "list endpoint device names");
        const int id = s_.graph.devices[it->second].endpoint_id;
        if (!seen.insert(id).second)
          fail(file_, ranks[i], path, "'" + name + "' is listed twice",
               "each endpoint takes one rank");
        s_.ranks.push_back(id);
      }
    }
    s_.resolved["topology"] = {{"type", "explicit"}, {"devices", rd}, {"links", rl}};
  }

  void workload() {
    YAML::Node w = section("workload", true);
    const cfg::TypeEntry& e = type_of(w, "workload", Category::kWorkload);
    Params p = cfg::parse_params(e.spec, w, file_, "workload", {"type"});
    WorkloadSpec& ws = s_.workload;
    ws.type = e.spec.type;
    if (ws.type == "collective_sweep") {
      ws.collective = p.str("collective");
      ws.root = int(p.integer("root"));
      workload_node_ = p.node("root");
      const std::vector<std::string> algos = coll::algorithms_for(ws.collective);
      ws.algorithm = p.str("algorithm") == "default" ? algos.front() : p.str("algorithm");
      if (std::find(algos.begin(), algos.end(), ws.algorithm) == algos.end())
        p.fail("algorithm", "'" + ws.algorithm + "' is not an algorithm of " + ws.collective,
               did_you_mean(ws.algorithm, algos));
    } else {
      ws.collective = "all_reduce";
      ws.algorithm = p.str("algorithm");
    }
    ws.min_bytes = p.bytes("min_bytes");
    ws.max_bytes = p.bytes("max_bytes");
    ws.step_factor = uint64_t(p.integer("step_factor"));
    ws.datatype = p.str("datatype");
    algorithm_node_ = p.node("algorithm");
    datatype_node_ = p.node("datatype");
    ws.elem_bytes = datatype_bytes(ws.datatype);
    ws.channels = int(p.integer("channels"));
    ws.chunk_bytes = p.bytes("chunk_bytes");
    ws.sync.fence_flag = p.str("sync") == "fence_flag";
    ws.sync.ack_bytes = p.bytes("ack_bytes");
    ws.sync.flag_bytes = p.bytes("flag_bytes");
    ws.sync.launch_latency_ps = p.time_ps("launch_latency");
    if (ws.min_bytes > ws.max_bytes)
      p.fail("min_bytes",
             "min_bytes " + format_bytes(ws.min_bytes) + " > max_bytes " + format_bytes(ws.max_bytes),
             "swap them");
    if (ws.min_bytes < ws.elem_bytes)
      p.fail("min_bytes",
             "min_bytes " + format_bytes(ws.min_bytes) + " is smaller than one " + ws.datatype +
                 " (" + std::to_string(ws.elem_bytes) + " B)",
             "use at least " + std::to_string(ws.elem_bytes) + "B");
    if (ws.chunk_bytes < ws.elem_bytes)
      p.fail("chunk_bytes",
             "chunk_bytes " + format_bytes(ws.chunk_bytes) + " is smaller than one " +
                 ws.datatype + " (" + std::to_string(ws.elem_bytes) + " B)",
             "use at least " + std::to_string(ws.elem_bytes) + "B");
    if (s_.functional && ws.max_bytes > (64ull << 20))
      p.fail("max_bytes",
             "functional mode carries real numbers and is limited to 64MiB, max_bytes is " +
                 format_bytes(ws.max_bytes),
             "lower max_bytes or set simulation.functional: false");
    s_.resolved["workload"] = p.to_json();
    s_.resolved["workload"]["type"] = ws.type;
    s_.resolved["workload"]["algorithm"] = ws.algorithm;
  }

  void cross_checks() {
    // One aggregated transaction must fit every receive buffer it crosses, or the sender
    // could never collect enough credits.
    for (const auto& [name, l] : s_.link_types) {
      const uint64_t whole = std::max<uint64_t>(1, s_.aggregate_bytes / l.packet_payload);
      const uint64_t wire = whole * l.framing.packet_wire_bytes(l.packet_payload);
      if (wire > l.rx_buffer_bytes)
        link_params_.at(name).fail(
            "rx_buffer",
            "rx_buffer " + format_bytes(l.rx_buffer_bytes) + " cannot hold one transaction of " +
                format_bytes(whole * l.packet_payload) + " payload (" + format_bytes(wire) +
                " on the wire) set by simulation.aggregate_bytes " +
                format_bytes(s_.aggregate_bytes),
            "raise rx_buffer to at least " + format_bytes(wire) +
                " or lower simulation.aggregate_bytes");
    }
    // Every endpoint's links must agree on the packet payload its DMA cuts.
    for (const topo::Device& d : s_.graph.devices) {
      if (d.is_switch) continue;
      uint32_t pp = 0;
      for (const topo::Link& l : s_.graph.links) {
        const int di = s_.graph.by_name.at(d.name);
        if (l.a.device != di && l.b.device != di) continue;
        const uint32_t x = s_.link_types.at(l.type).packet_payload;
        if (pp && x != pp)
          fail(file_, l.where, "topology",
               d.name + " has links with different packet_payload (" + std::to_string(pp) + " B and " +
                   std::to_string(x) + " B)",
               "an endpoint's DMA cuts one packet size: use link types that agree");
        pp = x;
      }
    }
    const size_t n = s_.ranks.size();
    if (s_.workload.root >= int(n))
      fail(file_, workload_node_, "workload.root",
           "root " + std::to_string(s_.workload.root) + " is not a rank (there are " +
               std::to_string(n) + ")",
           "use a rank from 0 to " + std::to_string(n - 1));
    if (s_.workload.algorithm == "nvls") nvls_checks();
    // Every pair of ranks the workload's schedule talks over must be connected: build the
    // schedule for a small size and check each sender reaches each receiver.
    const topo::Routes routes = topo::compute_routes(s_.graph);
    coll::CollParams cp;
    cp.ranks = int(n);
    cp.count = 4 * n * uint64_t(s_.workload.channels);
    cp.elem_bytes = s_.workload.elem_bytes;
    cp.channels = s_.workload.channels;
    cp.chunk_bytes = s_.workload.chunk_bytes;
    cp.root = s_.workload.root;
    const coll::Schedule probe =
        coll::make_schedule(s_.workload.collective, s_.workload.algorithm, cp);
    for (size_t r = 0; r < n; ++r) {
      const int src = s_.graph.endpoints[s_.ranks[r]];
      for (const coll::Op& op : probe.programs[r].ops) {
        if (op.kind != coll::OpKind::kSend) continue;
        const int dst_id = s_.ranks[op.peer];
        if (!routes[src][dst_id].empty()) continue;
        fail(file_, topo_node_, "topology",
             "unreachable endpoint: " + s_.graph.devices[src].name + " (rank " +
                 std::to_string(r) + ") has no path to " +
                 s_.graph.devices[s_.graph.endpoints[dst_id]].name + " (rank " +
                 std::to_string(op.peer) + "), which the " + s_.workload.algorithm + " " +
                 s_.workload.collective + " needs",
             "link them through a switch, or reorder topology.ranks");
      }
    }
  }

  // The nvls algorithms need every rank's links to end on NVLS switches, and every such
  // switch to be linked to exactly the ranks (its multicast group), reducing the
  // workload's datatype.
  void nvls_checks() {
    const std::string why = "the nvls " + s_.workload.collective + " reduces in the switches";
    std::set<int> rank_devices;
    for (int id : s_.ranks) rank_devices.insert(s_.graph.endpoints[id]);
    std::map<int, std::set<int>> members;  // nvls switch -> endpoints linked to it
    for (const topo::Link& l : s_.graph.links) {
      for (int side = 0; side < 2; ++side) {
        const int a = side ? l.b.device : l.a.device, b = side ? l.a.device : l.b.device;
        const topo::Device& da = s_.graph.devices[a];
        const topo::Device& db = s_.graph.devices[b];
        if (!da.is_switch) continue;
        const DeviceType& t = s_.device_types.at(da.type);
        if (!t.sw.nvls) {
          if (rank_devices.count(b))
            fail(file_, algorithm_node_, "workload.algorithm",
                 db.name + " (a rank) is linked to " + da.name + ", whose type '" + da.type +
                     "' has nvls: false; " + why,
                 "set nvls: true (and nvls_reduce_bandwidth) on device type '" + da.type +
                     "', or use another algorithm");
          continue;
        }
        if (db.is_switch)
          fail(file_, algorithm_node_, "workload.algorithm",
               da.name + " has nvls: true and is linked to another switch (" + db.name +
                   "); " + why + " of one tier (every rank linked to every NVLS switch)",
               "use a single tier of NVLS switches, or another algorithm");
        if (!rank_devices.count(b))
          fail(file_, algorithm_node_, "workload.algorithm",
               da.name + " (nvls) is linked to " + db.name +
                   ", which is not a rank: its multicast group must be exactly the ranks",
               "list it in topology.ranks, or unlink it");
        members[a].insert(b);
        const auto& dts = t.nvls_datatypes;
        if (std::find(dts.begin(), dts.end(), s_.workload.datatype) == dts.end())
          fail(file_, datatype_node_, "workload.datatype",
               "the reduction engine of '" + da.type + "' (" + da.name + ") does not reduce " +
                   s_.workload.datatype + " (nvls_datatypes: " + list(dts) + ")",
               "use one of " + list(dts) + ", or another algorithm");
      }
    }
    for (const auto& [sw, eps] : members)
      if (eps.size() != rank_devices.size())
        fail(file_, algorithm_node_, "workload.algorithm",
             s_.graph.devices[sw].name + " (nvls) is linked to " + std::to_string(eps.size()) +
                 " of the " + std::to_string(rank_devices.size()) + " ranks; " + why +
                 ", so every NVLS switch must reach every rank",
             "link every rank to every NVLS switch, or use another algorithm");
    for (int d : rank_devices) {
      bool any = false;
      for (const auto& [sw, eps] : members) any = any || eps.count(d);
      if (!any)
        fail(file_, algorithm_node_, "workload.algorithm",
             s_.graph.devices[d].name + " (a rank) is not linked to any NVLS switch; " + why,
             "link it to the NVLS switches, or use another algorithm");
    }
  }

  std::string file_;
  YAML::Node root_;
  YAML::Node topo_node_;
  YAML::Node workload_node_;  // where workload.root was given (for the rank check)
  YAML::Node algorithm_node_, datatype_node_;
  SystemSpec s_;
  Params sim_params_;
  std::map<std::string, Params> link_params_, device_params_;
  std::map<std::pair<int, int>, std::string> bound_;
};

}  // namespace

uint32_t datatype_bytes(const std::string& t) {
  if (t == "double") return 8;
  if (t == "float" || t == "int32") return 4;
  if (t == "half" || t == "bfloat16") return 2;
  if (t == "int8") return 1;
  throw InternalError("unknown datatype " + t);
}

std::vector<uint64_t> WorkloadSpec::sizes() const {
  std::vector<uint64_t> out;
  for (uint64_t s = min_bytes; s <= max_bytes;) {
    out.push_back(s / elem_bytes * elem_bytes);
    if (s > max_bytes / step_factor) break;
    s *= step_factor;
  }
  return out;
}

SystemSpec load_system(const std::string& file, const std::vector<std::string>& overrides,
                       std::optional<uint64_t> seed) {
  YAML::Node root = cfg::load_yaml_file(file);
  for (const std::string& o : overrides) cfg::apply_override(root, o);
  return Loader(file, root).load(seed);
}

}  // namespace fabricsim
