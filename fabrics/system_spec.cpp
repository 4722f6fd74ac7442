#include "fabrics/system_spec.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <regex>
#include <sstream>
#include <set>

#include "fabrics/config.h"
#include "fabrics/params.h"
#include "fabrics/registry.h"
#include "models/core/errors.h"
#include "models/collectives/algorithms.h"
#include "models/core/units.h"
#include "models/link/frame_framing.h"
#include "models/nvlink/flit_framing.h"
#include "models/ualink/ualink_framing.h"

namespace fabricsim {

using cfg::Category;
using cfg::fail;
using cfg::join_key;
using cfg::Params;

namespace {

// algorithm: auto on more ranks than this is a config error (Loader::cross_checks).
constexpr size_t kAutoMaxRanks = 256;

std::string real_text(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}


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
        FlitFramingParams f;
        f.flit_bytes = uint32_t(p.bytes("flit_bytes"));
        f.overhead_flits = uint32_t(p.integer("overhead_flits"));
        f.request_flits = uint32_t(p.integer("request_flits"));
        l.framing = std::make_shared<const FlitFraming>(f);
      } else if (p.str("framing") == "frame") {
        FrameFramingParams f;
        f.header_bytes = uint32_t(p.bytes("header_bytes"));
        f.min_frame_bytes = uint32_t(p.bytes("min_frame_bytes"));
        f.gap_bytes = uint32_t(p.bytes("gap_bytes"));
        l.framing = std::make_shared<const FrameFraming>(f);
      } else {
        UALinkFramingParams f;
        f.tl_flit_bytes = uint32_t(p.bytes("tl_flit_bytes"));
        f.tl_request_bytes = uint32_t(p.bytes("tl_request_bytes"));
        f.tl_response_bytes = uint32_t(p.bytes("tl_response_bytes"));
        f.dl_flit_bytes = uint32_t(p.bytes("dl_flit_bytes"));
        f.dl_overhead_bytes = uint32_t(p.bytes("dl_overhead_bytes"));
        f.fec_codeword_bytes = uint32_t(p.bytes("fec_codeword_bytes"));
        ualink_checks(p, f);
        l.framing = std::make_shared<const UALinkFraming>(f);
      }
      l.packet_payload = uint32_t(p.bytes("packet_payload"));
      if (p.str("framing") == "ualink" && l.packet_payload > 256)
        p.fail("packet_payload",
               "packet_payload " + format_bytes(l.packet_payload) +
                   " is larger than the 256B a UALink request carries",
               "use 64B, 128B, 192B or 256B");
      l.latency_ps = p.time_ps("latency");
      l.vcs = uint32_t(p.integer("vcs"));
      l.rx_buffer_bytes = p.bytes("rx_buffer");
      l.ber = p.real("ber");
      l.replay_buffer_bytes = p.bytes("replay_buffer");
      l.ack_delay_ps = p.time_ps("ack_delay");
      l.retry_latency_ps = p.time_ps("retry_latency");
      const uint64_t pkt_wire = l.framing->packet_wire_bytes(l.packet_payload);
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

  // UALink 1.0 links: x1/x2/x4 ports, and a framing whose pieces fit together. The FEC
  // parity is in the codeword bytes, so no line-code factor may be applied on top.
  void ualink_checks(Params& p, const UALinkFramingParams& f) {
    const int64_t lanes = p.integer("lanes");
    if (lanes != 1 && lanes != 2 && lanes != 4)
      p.fail("lanes", "x" + std::to_string(lanes) + " is not a UALink port width",
             "UALink 1.0 ports are x1, x2 or x4");
    if (p.real("encoding_efficiency") != 1.0)
      p.fail("encoding_efficiency",
             "encoding_efficiency " + real_text(p.real("encoding_efficiency")) +
                 " with framing: ualink counts the FEC twice (the " +
                 std::to_string(f.fec_codeword_bytes) +
                 " B codeword per DL flit already carries it)",
             "set encoding_efficiency: 1.0 and lane_rate to the signalling rate (212.5Gb/s)");
    // The most likely slip: the data rate given as lane_rate, which charges the codeword's
    // parity a second time. lane_rate x dl_flit / codeword = lane_rate means no FEC.
    if (p.bandwidth_bps("lane_rate") == 200'000'000'000ull &&
        f.fec_codeword_bytes > f.dl_flit_bytes)
      p.fail("lane_rate",
             "lane_rate 200Gb/s is UALink's data rate; framing: ualink charges the " +
                 std::to_string(f.fec_codeword_bytes) + " B codeword per " +
                 std::to_string(f.dl_flit_bytes) + " B DL flit, so the FEC would count twice",
             "give the signalling rate: lane_rate: 212.5Gb/s (= 200Gb/s x " +
                 std::to_string(f.fec_codeword_bytes) + " / " +
                 std::to_string(f.dl_flit_bytes) + ")");
    if (f.dl_overhead_bytes >= f.dl_flit_bytes)
      p.fail("dl_overhead_bytes",
             "dl_overhead_bytes " + std::to_string(f.dl_overhead_bytes) +
                 " B leaves no room for the TL stream in a " + std::to_string(f.dl_flit_bytes) +
                 " B DL flit",
             "use fewer overhead bytes than dl_flit_bytes (UALink: 12B of 640B)");
    if (f.fec_codeword_bytes < f.dl_flit_bytes)
      p.fail("fec_codeword_bytes",
             "fec_codeword_bytes " + std::to_string(f.fec_codeword_bytes) +
                 " B cannot carry a " + std::to_string(f.dl_flit_bytes) + " B DL flit",
             "use at least dl_flit_bytes (UALink: 680B per 640B flit)");
    if (f.tl_flit_bytes % 2 != 0)
      p.fail("tl_flit_bytes",
             "tl_flit_bytes " + std::to_string(f.tl_flit_bytes) +
                 " B cannot be split into two half-flits",
             "use an even size (UALink: 64B)");
    for (const char* key : {"tl_request_bytes", "tl_response_bytes"}) {
      const uint64_t b = p.bytes(key);
      if (b > f.tl_flit_bytes / 2)
        p.fail(key,
               std::string(key) + " " + std::to_string(b) + " B does not fit a " +
                   std::to_string(f.tl_flit_bytes / 2) + " B half-flit of a " +
                   std::to_string(f.tl_flit_bytes) + " B TL flit",
               "UALink: 16B request and 8B response fields in 64B TL flits");
    }
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
      d.is_switch = e.spec.type == "switch" || e.spec.type == "root_complex";
      d.protocol = p.str("protocol");
      d.ports = int(p.integer("ports"));
      if (d.is_switch) {
        d.sw.ports = d.ports;
        if (e.spec.type == "root_complex") {
          d.sw.host.enabled = true;
          d.sw.host.p2p = p.boolean("p2p");
          d.sw.host.rc_bps = p.bandwidth_bps("root_complex_bandwidth");
          d.sw.host.memory_bps = p.bandwidth_bps("host_memory_bandwidth");
          d.sw.host.memory_latency_ps = p.time_ps("memory_latency");
        }
        d.sw.pipeline_latency_ps = p.time_ps("pipeline_latency");
        d.sw.input_queues = p.str("input_queues");
        d.sw.arbiter = p.str("arbiter");
        d.sw.islip_iterations = int(p.integer("islip_iterations"));
        d.sw.speedup = p.real("speedup");
        d.sw.egress_buffer_bytes = p.bytes("egress_buffer");
        d.sw.route_select = p.str("route_select");
        d.ualink_class = p.str("ualink_class");
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
        d.nic_ports = int(p.integer("nic_ports"));
        d.nic_protocol = p.str("nic_protocol");
        d.ports += d.nic_ports;
        d.endpoint.ports = d.ports;
        d.endpoint.memory_bandwidth_Bps = p.bandwidth_bps("memory_bandwidth") / 8;
        d.endpoint.aggregate_bytes = s_.aggregate_bytes;
        d.endpoint.seed = s_.seed;
        d.endpoint.aggregate_min_message = s_.aggregate_min_message;
        d.endpoint.read_turnaround_ps = p.time_ps("read_turnaround");
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

  // The device type a topology parameter names, which must be a switch (or an endpoint).
  const DeviceType& topo_type(const Params& p, const char* key, bool want_switch) {
    const std::string name = p.str(key);
    const DeviceType& dt = device_type(p.node(key), std::string("topology.") + key, name);
    if (dt.is_switch != want_switch)
      p.fail(key, "device type '" + name + (want_switch ? "' is not a switch" : "' is a switch"),
             want_switch ? "name a switch type" : "name an endpoint type");
    return dt;
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
      const std::string& proto = dt.port_protocol(end.port);
      if (proto != lt.protocol)
        fail(file_, at.type, sub("type"),
             "incompatible link: link type '" + type + "' carries " + lt.protocol + " but " +
                 (end.port >= dt.ports - dt.nic_ports ? pname + ", a NIC port of " : "") +
                 d.name + " (" + d.type + ") speaks " + proto,
             "use a " + proto + " link type for this port");
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
    else if (e.spec.type == "multi_node")
      multi_node(t, e.spec);
    else if (e.spec.type == "two_tier")
      two_tier(t, e.spec);
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
    const DeviceType& edt = topo_type(p, "endpoint_type", false);
    const DeviceType& sdt = topo_type(p, "switch_type", true);
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

  void multi_node(const YAML::Node& t, const cfg::TypeSpec& spec) {
    Params p = cfg::parse_params(spec, t, file_, "topology", {"type"});
    s_.resolved["topology"] = p.to_json();
    s_.resolved["topology"]["type"] = "multi_node";
    const std::string et = p.str("endpoint_type"), st = p.str("switch_type");
    const std::string rt = p.str("rail_switch_type");
    const DeviceType& edt = topo_type(p, "endpoint_type", false);
    const DeviceType& sdt = topo_type(p, "switch_type", true);
    const DeviceType& rdt = topo_type(p, "rail_switch_type", true);
    if (edt.nic_ports < 1)
      p.fail("endpoint_type", "device type '" + et + "' has no NIC ports (nic_ports: 0)",
             "set device_types." + et + ".nic_ports: 1 (one NIC per GPU)");
    const int nodes = int(p.integer("nodes")), per = int(p.integer("endpoints_per_node"));
    const int ns = int(p.integer("switches_per_node"));
    const int nic = edt.nic_ports, fabric_ports = edt.ports - edt.nic_ports;
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
             "a rail switch needs " + std::to_string(nodes) + " NIC ports + " +
                 std::to_string(up) + " uplinks = " + std::to_string(nodes + up) +
                 " ports but switch type '" + rt + "' has " + std::to_string(rdt.ports),
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
      const DeviceType& pdt = topo_type(p, "spine_switch_type", true);
      if (per_spine > pdt.ports)
        p.fail("spines",
               "every spine needs " + std::to_string(per_spine) + " ports (" +
                   std::to_string(rails) + " rails x " + std::to_string(up / spines) +
                   " links) but switch type '" + spt + "' has " + std::to_string(pdt.ports),
               "use more spines or a larger spine switch");
    }
    const std::string lt = p.str("link_type"), nlt = p.str("nic_link_type");
    link_type(p.node("link_type"), "topology.link_type", lt);
    link_type(p.node("nic_link_type"), "topology.nic_link_type", nlt);
    std::string slt = p.str("spine_link_type");
    if (slt == "none") slt = nlt;
    else link_type(p.node("spine_link_type"), "topology.spine_link_type", slt);
    const LinkSite site{t, t, t, "topology", false};
    std::vector<int> rail_dev;
    for (int k = 0; k < nodes; ++k) {
      const std::string node = "node" + std::to_string(k) + "_";
      std::vector<int> eps, sws;
      for (int i = 0; i < per; ++i)
        eps.push_back(add_device(node + p.str("endpoint_prefix") + std::to_string(i), et, t, "topology"));
      for (int i = 0; i < ns; ++i)
        sws.push_back(add_device(node + p.str("switch_prefix") + std::to_string(i), st, t, "topology"));
      for (int g = 0; g < per; ++g) {
        int gport = 0;
        for (int sidx = 0; sidx < ns; ++sidx)
          for (int q = 0; q < lps[sidx]; ++q)
            add_link({eps[g], gport++}, {sws[sidx], int(g * lps[sidx] + q)}, lt, site);
      }
      if (k == 0)
        for (int i = 0; i < rails; ++i) rail_dev.push_back(add_device("rail" + std::to_string(i), rt, t, "topology"));
      for (int g = 0; g < per; ++g)
        for (int j = 0; j < nic; ++j)
          add_link({eps[g], fabric_ports + j}, {rail_dev[g * nic + j], k}, nlt, site);
    }
    for (int sp = 0; sp < spines; ++sp) {
      const int dev = add_device("spine" + std::to_string(sp), spt, t, "topology");
      for (int i = 0; i < rails; ++i)
        for (int u = sp; u < up; u += spines)
          add_link({rail_dev[i], nodes + u}, {dev, i * (up / spines) + u / spines}, slt, site);
    }
    s_.domain_size = per;
  }

  // A two-tier scale-up domain, plane by plane: endpoint port p is plane p; in every plane
  // each rack has endpoints_per_rack / leaf_down leaf chips (leaf_down endpoints each), and
  // the plane's spines join all its leaves, every leaf's uplinks dealt round-robin over them.
  void two_tier(const YAML::Node& t, const cfg::TypeSpec& spec) {
    Params p = cfg::parse_params(spec, t, file_, "topology", {"type"});
    s_.resolved["topology"] = p.to_json();
    s_.resolved["topology"]["type"] = "two_tier";
    const std::string et = p.str("endpoint_type"), lt = p.str("leaf_switch_type");
    const std::string st = p.str("spine_switch_type");
    const DeviceType& edt = topo_type(p, "endpoint_type", false);
    const DeviceType& ldt = topo_type(p, "leaf_switch_type", true);
    const DeviceType& sdt = topo_type(p, "spine_switch_type", true);
    if (edt.nic_ports > 0)
      p.fail("endpoint_type",
             "device type '" + et + "' has " + std::to_string(edt.nic_ports) +
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
    link_type(p.node("link_type"), "topology.link_type", link);
    link_type(p.node("uplink_type"), "topology.uplink_type", uplink);
    const LinkSite site{t, t, t, "topology", false};
    std::vector<int> eps;
    for (int g = 0; g < ne; ++g)
      eps.push_back(add_device(p.str("endpoint_prefix") + std::to_string(g), et, t, "topology"));
    const std::string lp = p.str("leaf_prefix"), sp = p.str("spine_prefix");
    for (int pl = 0; pl < planes; ++pl) {
      const std::string plane = "_p" + std::to_string(pl) + "_";
      std::vector<int> leaf, spine;
      for (int r = 0; r < racks; ++r)
        for (int k = 0; k < leaves_per_rack; ++k)
          leaf.push_back(add_device(lp + "_r" + std::to_string(r) + plane + std::to_string(k),
                                    lt, t, "topology"));
      for (int s = 0; s < spines; ++s)
        spine.push_back(add_device(sp + plane + std::to_string(s), st, t, "topology"));
      for (int g = 0; g < ne; ++g)  // rack g / per_rack, leaf (g % per_rack) / down
        add_link({eps[g], pl}, {leaf[g / down], g % down}, link, site);
      for (int l = 0; l < leaves; ++l)
        for (int u = 0; u < up; ++u)
          add_link({leaf[l], down + u}, {spine[u % spines], l * per_pair + u / spines}, uplink,
                   site);
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
    if (is_training_workload(ws.type)) return training_workload(p);
    if (ws.type == "collective_sweep") {
      ws.collective = p.str("collective");
      ws.root = int(p.integer("root"));
      workload_node_ = p.node("root");
      const std::vector<std::string> algos = coll::algorithms_for(ws.collective);
      ws.algorithm = p.str("algorithm") == "default" ? algos.front() : p.str("algorithm");
      if (ws.algorithm != "auto" &&
          std::find(algos.begin(), algos.end(), ws.algorithm) == algos.end())
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
    ws.slices = int(p.integer("slices"));
    ws.sync.fence_flag = p.str("sync") == "fence_flag";
    ws.sync.ack_bytes = p.bytes("ack_bytes");
    ws.sync.flag_bytes = p.bytes("flag_bytes");
    ws.sync.launch_latency_ps = p.time_ps("launch_latency");
    if (ws.slices > 1 && ws.algorithm == "auto")
      p.fail("slices",
             "slices " + std::to_string(ws.slices) + " with algorithm auto: auto chooses the "
                 "slices itself (1, 2, 4 or 8 for hierarchical, from its cost model)",
             "remove slices, or name the algorithm (e.g. algorithm: hierarchical)");
    if (ws.slices > 1 && !(ws.collective == "all_reduce" &&
                           (ws.algorithm == "hierarchical" || ws.algorithm == "hierarchical_nvls")))
      p.fail("slices",
             "slices " + std::to_string(ws.slices) + " pipelines the levels of the hierarchical "
                 "all-reduce; " + ws.collective + " " + ws.algorithm + " has no levels to overlap",
             "remove slices (or set it to 1), or use all_reduce with algorithm: hierarchical");
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

  // ddp_step, fsdp_step, moe_layer, tp_layer (registry.cpp; fabrics/training.cpp).
  void training_workload(const Params& p) {
    WorkloadSpec& ws = s_.workload;
    TrainingSpec& t = ws.training;
    ws.collective = "all_reduce";
    ws.algorithm = p.str("algorithm");
    ws.datatype = p.str("datatype");
    ws.elem_bytes = datatype_bytes(ws.datatype);
    ws.channels = int(p.integer("channels"));
    ws.chunk_bytes = p.bytes("chunk_bytes");
    ws.sync.fence_flag = p.str("sync") == "fence_flag";
    ws.sync.ack_bytes = p.bytes("ack_bytes");
    ws.sync.flag_bytes = p.bytes("flag_bytes");
    t.launch_ps = p.time_ps("launch_latency");  // per collective, not per job
    t.device_tflops = p.real("device_tflops");
    if (ws.chunk_bytes < ws.elem_bytes)
      p.fail("chunk_bytes", "chunk_bytes " + format_bytes(ws.chunk_bytes) +
                                " is smaller than one " + ws.datatype,
             "use at least " + std::to_string(ws.elem_bytes) + "B");
    if (s_.functional)
      sim_params_.fail("functional",
                       "training workloads run timing only; functional mode checks the "
                       "size sweeps",
                       "set simulation.functional: false (e.g. --set "
                       "simulation.functional=false)");
    const int64_t want = p.integer("ranks");
    if (want > int64_t(s_.ranks.size()))
      p.fail("ranks", "ranks " + std::to_string(want) + " is more than the config's " +
                          std::to_string(s_.ranks.size()) + " ranks",
             "use 0 (all) or at most " + std::to_string(s_.ranks.size()));
    if (want > 0) s_.ranks.resize(size_t(want));
    const int n = int(s_.ranks.size());
    if (ws.type != "moe_layer") {
      const int64_t layers = p.integer("layers");
      const std::vector<int64_t>& lp = p.int_list("layer_params");
      if (lp.size() != 1 && int64_t(lp.size()) != layers)
        p.fail("layer_params",
               "layer_params has " + std::to_string(lp.size()) + " values for " +
                   std::to_string(layers) + " layers",
               "give one value (every layer) or one per layer");
      for (int64_t l = 0; l < layers; ++l)
        t.layer_params.push_back(uint64_t(lp.size() == 1 ? lp[0] : lp[size_t(l)]));
      t.tokens = uint64_t(p.integer("tokens"));
      t.forward_ps = p.time_ps("forward_time");
      t.backward_ps = p.time_ps("backward_time");
    }
    if (ws.type == "ddp_step") {
      t.bucket_bytes = p.bytes("bucket_bytes");
      t.first_bucket_bytes = p.bytes("first_bucket_bytes");
      for (int64_t kib : p.int_list("bucket_sweep_kib")) t.bucket_sweep_bytes.push_back(uint64_t(kib) << 10);
    } else if (ws.type == "fsdp_step") {
      for (int64_t d : p.int_list("prefetch_depths")) t.prefetch_depths.push_back(int(d));
      if (t.prefetch_depths.empty())
        p.fail("prefetch_depths", "no prefetch depth given", "e.g. prefetch_depths: [0, 1, 2]");
    } else if (ws.type == "moe_layer") {
      t.tokens = uint64_t(p.integer("tokens"));
      t.hidden = uint64_t(p.integer("hidden"));
      t.ffn_hidden = uint64_t(p.integer("ffn_hidden"));
      t.experts_per_rank = int(p.integer("experts_per_rank"));
      t.top_k = int(p.integer("top_k"));
      t.skew = p.real("skew");
      t.expert_ps_per_token = p.time_ps("expert_time_per_token");
      t.ep = int(p.integer("ep"));
      t.placement = p.str("placement");
      if (t.ep > 0 && n % t.ep != 0)
        p.fail("ep", "ep " + std::to_string(t.ep) + " does not divide the " +
                         std::to_string(n) + " ranks",
               "use a divisor of the rank count, or 0 (all ranks)");
      const int group = t.ep > 0 ? t.ep : n;
      if (int64_t(t.top_k) > int64_t(group) * t.experts_per_rank)
        p.fail("top_k", "top_k " + std::to_string(t.top_k) + " is more than the " +
                            std::to_string(group * t.experts_per_rank) + " experts of a group",
               "lower top_k or raise experts_per_rank");
    } else {  // tp_layer
      t.tp = int(p.integer("tp"));
      t.placement = p.str("placement");
      t.hidden = uint64_t(p.integer("hidden"));
      if (std::adjacent_find(t.layer_params.begin(), t.layer_params.end(),
                             std::not_equal_to<uint64_t>()) != t.layer_params.end())
        p.fail("layer_params", "tp_layer takes one layer size for every layer",
               "give a single value, e.g. layer_params: [" + std::to_string(t.layer_params[0]) +
                   "]");
      if (n % t.tp != 0)
        p.fail("tp", "tp " + std::to_string(t.tp) + " does not divide the " +
                         std::to_string(n) + " ranks",
               "use a divisor of the rank count");
    }
    s_.resolved["workload"] = p.to_json();
    s_.resolved["workload"]["type"] = ws.type;
  }

  void cross_checks() {
    // One aggregated transaction must fit every receive buffer it crosses, or the sender
    // could never collect enough credits.
    for (const auto& [name, l] : s_.link_types) {
      const uint64_t whole = std::max<uint64_t>(1, s_.aggregate_bytes / l.packet_payload);
      const uint64_t wire = whole * l.framing->packet_wire_bytes(l.packet_payload);
      if (wire > l.rx_buffer_bytes)
        link_params_.at(name).fail(
            "rx_buffer",
            "rx_buffer " + format_bytes(l.rx_buffer_bytes) + " cannot hold one transaction of " +
                format_bytes(whole * l.packet_payload) + " payload (" + format_bytes(wire) +
                " on the wire) set by simulation.aggregate_bytes " +
                format_bytes(s_.aggregate_bytes),
            "raise rx_buffer to at least " + format_bytes(wire) +
                " or lower simulation.aggregate_bytes");
      // Link-level retry: the replay buffer keeps a transaction until its ack is back, so
      // it must hold one transaction plus what the line carries in an ack round trip, or
      // the replay buffer, not the line, would set the throughput even without errors.
      // On framing: ualink a packet's tail is the end of its codeword, up to a codeword
      // after its last byte, so the round trip includes one codeword.
      if (l.ber > 0) {
        const bool ualink = l.framing->replay_slack_bytes() > 0;
        const uint64_t cw_ps = transfer_ps(l.framing->replay_slack_bytes(), l.rate_bps);
        const uint64_t rtt_ps = cw_ps + 2 * l.latency_ps + l.ack_delay_ps;
        const uint64_t rtt_bytes = uint64_t((u128(l.rate_bps) * rtt_ps + 8'000'000'000'000ull - 1) /
                                            8'000'000'000'000ull);
        if (l.replay_buffer_bytes < wire + rtt_bytes)
          link_params_.at(name).fail(
              "replay_buffer",
              "replay_buffer " + format_bytes(l.replay_buffer_bytes) + " (" +
                  std::to_string(l.replay_buffer_bytes) + " B) is smaller than one transaction (" +
                  std::to_string(wire) + " B on the wire) + an ack round trip (" +
                  (ualink ? "codeword " + format_time_ps(cw_ps) + " + " : std::string()) +
                  "2 x latency " + format_time_ps(l.latency_ps) + " + ack_delay " +
                  format_time_ps(l.ack_delay_ps) +
                  " at " + format_bandwidth_bps(l.rate_bps) + " = " + std::to_string(rtt_bytes) +
                  " B) with ber " + [&] {
                    char b[32];
                    std::snprintf(b, sizeof b, "%g", l.ber);
                    return std::string(b);
                  }(),
              "raise replay_buffer to at least " + std::to_string(wire + rtt_bytes) +
                  "B, or lower latency, ack_delay or simulation.aggregate_bytes");
      }
    }
    // UALink switch classes: the unloaded port-to-port latency must meet the class limit.
    for (const topo::Link& l : s_.graph.links) {
      for (const topo::LinkEnd& end : {l.a, l.b}) {
        const topo::Device& d = s_.graph.devices[end.device];
        if (!d.is_switch) continue;
        const DeviceType& dt = s_.device_types.at(d.type);
        if (dt.ualink_class == "none") continue;
        const LinkParams& lp = s_.link_types.at(l.type);
        const PortToPort b = port_to_port(dt.sw, lp);
        const uint64_t limit = ualink_class_limit_ps(dt.ualink_class);
        const bool inclusive = dt.ualink_class == "25.6T";  // "<= 150 ns"; the others are "<"
        if (b.total_ps > limit || (!inclusive && b.total_ps == limit)) {
          const uint64_t room = limit - (inclusive ? 0 : 1) - b.codeword_ps - b.crossbar_ps;
          device_params_.at(d.type).fail(
              "pipeline_latency",
              "port-to-port latency " + format_time_ps(b.total_ps) + " on link type " + l.type +
                  " (codeword " + format_time_ps(b.codeword_ps) + " + pipeline_latency " +
                  format_time_ps(dt.sw.pipeline_latency_ps) + " + crossbar " +
                  format_time_ps(b.crossbar_ps) + ") exceeds the UALink " + dt.ualink_class +
                  " class limit of " + (inclusive ? "<= " : "< ") + format_time_ps(limit),
              b.codeword_ps + b.crossbar_ps < limit
                  ? "lower pipeline_latency to at most " + format_time_ps(room)
                  : "the link's codeword alone is too slow for this class");
        }
      }
    }
    // Every endpoint's links of one protocol (its fabric ports, its NIC ports) must agree
    // on the packet payload its DMA cuts for them.
    for (const topo::Device& d : s_.graph.devices) {
      if (d.is_switch) continue;
      const DeviceType& dt = s_.device_types.at(d.type);
      std::map<std::string, uint32_t> pp;
      const int di = s_.graph.by_name.at(d.name);
      for (const topo::Link& l : s_.graph.links) {
        if (l.a.device != di && l.b.device != di) continue;
        const std::string& proto = dt.port_protocol(l.a.device == di ? l.a.port : l.b.port);
        const uint32_t x = s_.link_types.at(l.type).packet_payload;
        auto it = pp.find(proto);
        if (it != pp.end() && it->second != x)
          fail(file_, l.where, "topology",
               d.name + " has links with different packet_payload (" +
                   std::to_string(it->second) + " B and " + std::to_string(x) + " B) on its " +
                   proto + " ports",
               "an endpoint's DMA cuts one packet size per protocol: use link types that agree");
        pp[proto] = x;
      }
    }
    const size_t n = s_.ranks.size();
    if (s_.workload.root >= int(n))
      fail(file_, workload_node_, "workload.root",
           "root " + std::to_string(s_.workload.root) + " is not a rank (there are " +
               std::to_string(n) + ")",
           "use a rank from 0 to " + std::to_string(n - 1));
    if (coll::uses_nvls_switches(s_.workload.algorithm)) nvls_checks(s_.workload.algorithm);
    // auto costs every candidate's whole schedule per size (direct's n^2 messages, each
    // with its derived dependencies): 256 ranks take ~3 minutes and ~3 GB, 576 more than
    // 14 GB. Refuse instead of exhausting memory.
    const bool training = is_training_workload(s_.workload.type);
    if (s_.workload.algorithm == "auto" && !training && n > kAutoMaxRanks)
      fail(file_, algorithm_node_, "workload.algorithm",
           "auto is limited to " + std::to_string(kAutoMaxRanks) + " ranks and this system has " +
               std::to_string(n) + ": its cost model builds every candidate's schedule (direct "
               "all-reduce alone has n^2 messages), which takes more memory than a machine has",
           "name an algorithm (e.g. ring, tree or halving_doubling)");
    // auto: an in-switch algorithm is a candidate exactly where naming it would pass its
    // checks (the same code; its complaint just removes the candidate). On one domain
    // hierarchical_nvls has nvls's reductions and stores (no level to cross): left to nvls.
    if (s_.workload.algorithm == "auto" && !training)
      for (const std::string& a : coll::algorithms_for(s_.workload.collective)) {
        if (!coll::uses_nvls_switches(a)) continue;
        if (a == "hierarchical_nvls" && (s_.domain_size <= 0 || s_.domain_size >= int(n)))
          continue;
        try {
          nvls_checks(a);
        } catch (const InputError&) {
          continue;
        }
        s_.auto_in_switch.push_back(a);
      }
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
    cp.slices = s_.workload.slices;
    // Training workloads talk over arbitrary rank pairs: probe every pair. auto may
    // choose any algorithm of the collective: every candidate must be routable.
    std::vector<std::string> algos{s_.workload.algorithm};
    if (s_.workload.algorithm == "auto" && !training) {
      algos = coll::algorithms_for(s_.workload.collective);
      algos.erase(std::remove_if(algos.begin(), algos.end(),
                                 [&](const std::string& a) {
                                   return coll::uses_nvls_switches(a) &&
                                          std::find(s_.auto_in_switch.begin(),
                                                    s_.auto_in_switch.end(),
                                                    a) == s_.auto_in_switch.end();
                                 }),
                  algos.end());
    }
    if (training) algos = {"direct"};
    for (const std::string& algo : algos) {
    const coll::Schedule probe =
        training ? coll::make_schedule("alltoall", "direct", cp)
                 : coll::make_schedule(s_.workload.collective, algo, cp, s_.domain_size);
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
                 std::to_string(op.peer) + "), which the " +
                 (training ? s_.workload.type + " workload"
                           : algo + " " + s_.workload.collective) +
                 " needs",
             s_.workload.algorithm == "auto" && !training
                 ? "auto considers every algorithm of the collective: link them (e.g. a spine "
                   "tier above the rails) or name an algorithm"
                 : "link them through a switch, or reorder topology.ranks");
      }
    }
    }
  }

  // The nvls algorithms need every rank's links to end on NVLS switches, and every such
  // switch to be linked to exactly the ranks (its multicast group), reducing the
  // workload's datatype. hierarchical_nvls: the group is a node (s_.domain_size ranks in
  // rank order); every NVLS switch is linked to exactly the ranks of one node, every rank
  // to at least one NVLS switch, and switches without NVLS (the NICs' rails) are allowed.
  // Throws InputError (located at workload.algorithm or workload.datatype) on the first
  // problem; `algorithm` is nvls or hierarchical_nvls.
  void nvls_checks(const std::string& algorithm) {
    const bool per_node = algorithm == "hierarchical_nvls";
    const std::string why = "the " + algorithm + " " + s_.workload.collective +
                            " reduces in the switches";
    std::set<int> rank_devices;
    for (int id : s_.ranks) rank_devices.insert(s_.graph.endpoints[id]);
    // node_of[device]: the rank's node (rank / domain_size), for per_node groups.
    const int L = s_.domain_size > 0 ? s_.domain_size : int(s_.ranks.size());
    std::map<int, int> node_of;
    for (size_t r = 0; r < s_.ranks.size(); ++r)
      node_of[s_.graph.endpoints[s_.ranks[r]]] = int(r) / L;
    std::map<int, std::set<int>> members;  // nvls switch -> endpoints linked to it
    for (const topo::Link& l : s_.graph.links) {
      for (int side = 0; side < 2; ++side) {
        const int a = side ? l.b.device : l.a.device, b = side ? l.a.device : l.b.device;
        const topo::Device& da = s_.graph.devices[a];
        const topo::Device& db = s_.graph.devices[b];
        if (!da.is_switch) continue;
        const DeviceType& t = s_.device_types.at(da.type);
        if (!t.sw.nvls) {
          if (rank_devices.count(b) && !per_node)
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
    for (const auto& [sw, eps] : members) {
      if (!per_node) continue;
      const int node = node_of.at(*eps.begin());
      for (int d : eps)
        if (node_of.at(d) != node)
          fail(file_, algorithm_node_, "workload.algorithm",
               s_.graph.devices[sw].name + " (nvls) is linked to " +
                   s_.graph.devices[*eps.begin()].name + " (node " + std::to_string(node) +
                   ") and " + s_.graph.devices[d].name + " (node " +
                   std::to_string(node_of.at(d)) + "); " + why +
                   " of one node, so an NVLS switch's group must be one node's ranks",
               "link each node's ranks to their own NVLS switches, or use hierarchical");
      if (int(eps.size()) != L)
        fail(file_, algorithm_node_, "workload.algorithm",
             s_.graph.devices[sw].name + " (nvls) is linked to " + std::to_string(eps.size()) +
                 " of the " + std::to_string(L) + " ranks of node " + std::to_string(node) +
                 "; " + why + ", so every NVLS switch of a node must reach all of its ranks",
             "link every rank of the node to every NVLS switch of the node, or use "
             "hierarchical");
    }
    for (const auto& [sw, eps] : members)
      if (!per_node && eps.size() != rank_devices.size())
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

PortToPort port_to_port(const SwitchParams& sw, const LinkParams& link) {
  // Stream framing: one codeword; other framings: one packet of the link's payload.
  const uint64_t bytes = link.framing->receive_unit_bytes(link.packet_payload);
  PortToPort b;
  b.codeword_ps = transfer_ps(bytes, link.rate_bps);
  b.crossbar_ps = transfer_ps(bytes, uint64_t(double(link.rate_bps) * sw.speedup));
  b.total_ps = b.codeword_ps + sw.pipeline_latency_ps + b.crossbar_ps;
  return b;
}

uint64_t ualink_class_limit_ps(const std::string& cls) {
  if (cls == "25.6T") return 150'000;
  if (cls == "51.2T") return 200'000;
  if (cls == "102.4T") return 250'000;
  return UINT64_MAX;
}

bool is_training_workload(const std::string& type) {
  return type == "ddp_step" || type == "fsdp_step" || type == "moe_layer" || type == "tp_layer";
}

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
