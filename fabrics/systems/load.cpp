// Assembly of a SystemSpec from a config file, section by section: each section's types
// come from the plug-in registries (device kinds, link framings, topology generators,
// workloads), each value is parsed against its declared parameters, and the cross-checks
// (checks.h) run on the assembled system.
#include <algorithm>

#include "fabrics/config/document.h"
#include "fabrics/config/params.h"
#include "fabrics/systems/auto_channels.h"
#include "fabrics/systems/catalog.h"
#include "fabrics/systems/checks.h"
#include "fabrics/systems/estimate.h"
#include "fabrics/systems/faults.h"
#include "fabrics/systems/system_spec.h"
#include "fabrics/topologies/builder.h"
#include "models/core/text.h"
#include "models/core/units.h"
#include "models/link/link_type.h"

namespace fabricsim {

using cfg::fail;
using cfg::join_key;
using cfg::Params;

namespace {

const std::vector<std::string> kTopKeys{"version",    "name",         "seed",     "simulation",
                                        "link_types", "device_types", "topology", "workload",
                                        "published",  "assumptions",  "faults"};

class Loader {
 public:
  Loader(std::string file, YAML::Node root) : file_(std::move(file)), root_(std::move(root)) {
    src_.file = file_;
  }

  SystemSpec load(std::optional<uint64_t> seed) {
    s_.file = file_;
    for (const auto& kv : root_) {
      const std::string key = cfg::key_name(file_, kv.first, "");
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
    check_system(s_, src_);
    load_faults(s_, src_, root_["faults"]);
    s_.resolved["name"] = s_.name;
    s_.resolved["seed"] = s_.seed;
    s_.published = parse_published(file_, root_["published"]);
    s_.assumptions = parse_assumptions(file_, root_["assumptions"], s_.resolved);
    return std::move(s_);
  }

 private:
  YAML::Node section(const std::string& key, bool required) {
    YAML::Node n = root_[key];
    if (!n.IsDefined() || n.IsNull()) {
      if (required)
        fail(file_, root_, key, "missing required section '" + key + "'",
             "see configs/minimal.yaml for a complete example");
      return YAML::Node(YAML::NodeType::Undefined);  // where() names just the file
    }
    if (!n.IsMap()) fail(file_, n, key, "expected a map, found " + cfg::describe_node(n), "");
    return n;
  }

  // The `type:` of a map, checked against the registry of its category.
  std::string type_of(const YAML::Node& n, const std::string& path, Category c) {
    const std::vector<std::string> known = type_names(c);
    YAML::Node t = n["type"];
    if (!t.IsDefined() || t.IsNull())
      fail(file_, n, path, "missing 'type'",
           "known " + std::string(category_name(c)) + "s: " + join_list(known));
    const std::string name =
        cfg::scalar(file_, t, join_key(path, "type"), "a type name", "known: " + join_list(known));
    if (std::find(known.begin(), known.end(), name) == known.end())
      fail(file_, t, join_key(path, "type"),
           "unknown " + std::string(category_name(c)) + " '" + name + "'",
           did_you_mean(name, known));
    return name;
  }

  void top() {
    std::vector<std::string> sections(kTopKeys.begin() + 3, kTopKeys.end());
    Params p = cfg::parse_params(config_top_spec(), root_, file_, "", sections);
    s_.name = p.str("name");
    s_.seed = uint64_t(p.integer("seed"));
  }

  void simulation() {
    const ParamBlock& block = simulation_params();
    Params p = cfg::parse_params({"simulation", "", block.specs}, section("simulation", false),
                                 file_, "simulation");
    s_.simulation = std::any_cast<SimulationParams>(p.store(block));
    s_.resolved["simulation"] = p.to_json();
    // The resource limits decide whether a run may go on, never what it computes: they are
    // reported with the run cost, not in the resolved config two runs are compared by.
    s_.resolved["simulation"].erase("wall_limit");
    s_.resolved["simulation"].erase("memory_limit");
    for (const ParamSpec& spec : block.specs)
      s_.where["simulation." + spec.key] = cfg::where(file_, p.node(spec.key));
    // The level in effect (unset: derived from aggregate_bytes; packet zeroes aggregation).
    s_.resolved["simulation"]["fidelity"] = s_.simulation.fidelity;
    src_.simulation = p;
  }

  void link_types() {
    YAML::Node sec = section("link_types", true);
    const cfg::TypeSpec spec{"link", "", link_type_specs()};
    for (const auto& kv : sec) {
      const std::string name = cfg::key_name(file_, kv.first, "link_types");
      const std::string path = join_key("link_types", name);
      Params p = cfg::parse_params(spec, kv.second, file_, path);
      LinkParams l = std::any_cast<LinkParams>(p.store(link_params()));
      l.type_name = name;
      const FramingKind& f = framings().at(p.str("framing"));
      const std::any framing = p.store(f.params);
      f.apply(l, framing);
      if (f.check) f.check(l, framing, p);
      check_link(l, p);
      s_.link_types[name] = l;
      s_.resolved["link_types"][name] = p.to_json();
      s_.resolved["link_types"][name]["rate_per_direction"] = format_bandwidth_bps(l.rate_bps);
      src_.link_types[name] = p;
    }
    if (s_.link_types.empty())
      fail(file_, sec, "link_types", "no link types defined", "define at least one");
  }

  void device_types() {
    YAML::Node sec = section("device_types", true);
    for (const auto& kv : sec) {
      const std::string name = cfg::key_name(file_, kv.first, "device_types");
      const std::string path = join_key("device_types", name);
      if (!kv.second.IsMap())
        fail(file_, kv.second, path, "expected a map with a 'type'", "e.g. {type: endpoint, ...}");
      const DeviceKind& kind = device_kinds().at(type_of(kv.second, path, Category::kDevice));
      cfg::TypeSpec spec{kind.name, "", {}};
      for (const ParamBlock& b : kind.params)
        spec.params.insert(spec.params.end(), b.specs.begin(), b.specs.end());
      Params p = cfg::parse_params(spec, kv.second, file_, path, {"type"});
      DeviceType d;
      d.name = name;
      d.kind = &kind;
      for (const ParamBlock& b : kind.params) d.params.push_back(p.store(b));
      d.port_groups = kind.ports(d);
      for (const PortGroup& g : d.port_groups) d.ports += g.count;
      s_.device_types[name] = std::move(d);
      s_.resolved["device_types"][name] = p.to_json();
      s_.resolved["device_types"][name]["type"] = kind.name;
      src_.device_types[name] = p;
    }
  }

  void topology() {
    YAML::Node t = section("topology", true);
    const topo::TopologyKind& kind = topo::topologies().at(type_of(t, "topology", Category::kTopology));
    src_.topology = t;
    Params p;
    if (!kind.reads_section) p = cfg::parse_params({kind.name, "", kind.params}, t, file_, "topology", {"type"});
    topo::Builder b(file_, t, s_.device_types, s_.link_types);
    // The flow level builds no device or port models (fabrics/sim/flow_system.h).
    if (s_.simulation.flow())
      b.set_memory_budget(double(memory_limit(s_)) - cost::kBaseBytes, 256,
                          cost::kFlowLinkBytes + cost::kGraphLinkBytes);
    else
      b.set_memory_budget(double(memory_limit(s_)) - cost::kBaseBytes, cost::kDeviceBytes,
                          2 * cost::kPortBytes + cost::kGraphLinkBytes);
    if (!kind.reads_section) {
      nlohmann::json r = p.to_json();
      r["type"] = kind.name;
      b.set_resolved(r);
    }
    kind.build(p, b);
    b.finish();
    s_.graph = std::move(b.graph());
    s_.ranks = std::move(b.ranks());
    s_.domain_size = b.domain_size();
    torus_ = b.torus();
    torus_twisted_ = b.torus_twisted();
    s_.resolved["topology"] = std::move(b.resolved());
  }

  void workload() {
    YAML::Node w = section("workload", true);
    const WorkloadKind& kind = workloads().at(type_of(w, "workload", Category::kWorkload));
    Params p = cfg::parse_params({kind.name, "", kind.params}, w, file_, "workload", {"type"});
    s_.workload.type = kind.name;
    s_.workload.is_training = kind.training;
    s_.workload.is_traffic = kind.traffic;
    kind.parse(p, src_.simulation, s_);
    // A twisted torus declares no torus to the workload: its rings per dimension are not
    // rings of neighbours (a short dimension's wraparound moves along the long one), so the
    // torus algorithms would not talk to neighbours only. Named, they are refused; auto
    // leaves them out.
    const bool names_algorithm =
        std::any_of(kind.params.begin(), kind.params.end(),
                    [](const ParamSpec& ps) { return ps.key == "algorithm"; });
    if (torus_twisted_ && !kind.training && !kind.traffic && names_algorithm &&
        !s_.workload.collective.empty() && s_.workload.algorithm != "auto" &&
        coll::algo_info(s_.workload.collective, s_.workload.algorithm).torus)
      p.fail("algorithm",
             "'" + s_.workload.algorithm +
                 "' runs rings per torus dimension, but the topology is a twisted torus: "
                 "a short dimension's wraparound lands half way along the long one, so those "
                 "rings are not rings of neighbours",
             "use twisted: false for the torus algorithms, or a flat algorithm (ring, "
             "direct, ...) on the twisted slice");
    s_.workload.torus = torus_twisted_ ? std::vector<int>{} : torus_;
    s_.resolved["workload"] = p.to_json();
    s_.resolved["workload"]["type"] = kind.name;
    // The sweeps' channels is a number or auto (a string parameter): echoed as the number
    // it is, and the generation only where auto reads it.
    nlohmann::json& rw = s_.resolved["workload"];
    if (rw.contains("channels") && rw["channels"].is_string() && !s_.workload.channels_auto)
      rw["channels"] = s_.workload.channels;
    if (!s_.workload.channels_auto) rw.erase("nccl_compute_capability");
    resolve_auto_channels(s_, p);
    if (!kind.training && !kind.traffic) s_.resolved["workload"]["algorithm"] = s_.workload.algorithm;
    src_.workload = p;
  }

  std::string file_;
  YAML::Node root_;
  SystemSpec s_;
  SpecSources src_;
  std::vector<int> torus_;  // the topology's torus (Builder::set_torus), for the workload
  bool torus_twisted_ = false;
};

}  // namespace

SystemSpec load_system(const std::string& file, const std::vector<std::string>& overrides,
                       std::optional<uint64_t> seed) {
  YAML::Node root = cfg::load_yaml_file(file);
  for (const std::string& o : overrides) cfg::apply_override(root, o);
  return Loader(file, root).load(seed);
}

}  // namespace fabricsim
