#include "fabrics/systems/catalog.h"

#include <sstream>

#include "fabrics/systems/faults.h"
#include "fabrics/systems/system_spec.h"
#include "fabrics/topologies/builder.h"
#include "fabrics/workloads/workload.h"
#include "models/link/link_type.h"

namespace fabricsim {

namespace {

std::vector<ParamSpec> all_specs(const std::vector<ParamBlock>& blocks) {
  std::vector<ParamSpec> out;
  for (const ParamBlock& b : blocks) out.insert(out.end(), b.specs.begin(), b.specs.end());
  return out;
}

}  // namespace

std::vector<CatalogEntry> catalog() {
  std::vector<CatalogEntry> c;
  c.push_back({Category::kSection,
               {"simulation", "Run-wide simulation settings (the `simulation:` section).",
                simulation_params().specs}});
  c.push_back({Category::kLink,
               {"link",
                "A link type (the `link_types:` section): both directions alike, rate per "
                "direction.",
                link_type_specs()}});
  for (const DeviceKind& k : device_kinds().entries())
    c.push_back({Category::kDevice, {k.name, k.summary, all_specs(k.params)}});
  for (const topo::TopologyKind& k : topo::topologies().entries())
    c.push_back({Category::kTopology, {k.name, k.summary, k.params}});
  for (const WorkloadKind& k : workloads().entries())
    c.push_back({Category::kWorkload, {k.name, k.summary, k.params}});
  const std::vector<cfg::TypeSpec> faults = fault_specs();
  c.push_back({Category::kSection, faults.front()});
  for (size_t i = 1; i < faults.size(); ++i) c.push_back({Category::kFault, faults[i]});
  return c;
}

const cfg::TypeSpec* find_type(const std::vector<CatalogEntry>& entries, Category category,
                               const std::string& type) {
  for (const CatalogEntry& e : entries)
    if (e.category == category && e.spec.type == type) return &e.spec;
  return nullptr;
}

std::vector<std::string> type_names(Category category) {
  std::vector<std::string> out;
  for (const CatalogEntry& e : catalog())
    if (e.category == category) out.push_back(e.spec.type);
  return out;
}

const char* category_name(Category category) {
  switch (category) {
    case Category::kLink: return "link type";
    case Category::kDevice: return "device type";
    case Category::kTopology: return "topology";
    case Category::kWorkload: return "workload";
    case Category::kSection: return "section";
    case Category::kFault: return "fault event";
  }
  return "";
}

cfg::TypeSpec config_top_spec() {
  cfg::TypeSpec spec{"config", "", {}};
  spec.params.push_back(param("version", ParamKind::kInt, "1", "", "Config schema version.", 1, 1));
  spec.params.push_back(param("name", ParamKind::kString, "unnamed", "", "System name."));
  spec.params.push_back(param("seed", ParamKind::kInt, "1", "", "Global random seed.", 0, 9.0e18));
  return spec;
}

std::string describe_all() {
  std::ostringstream os;
  os << "fabricsim component types (fabricsim describe TYPE for parameters):\n";
  for (const CatalogEntry& e : catalog())
    os << "  " << e.spec.type
       << std::string(e.spec.type.size() < 18 ? 18 - e.spec.type.size() : 1, ' ') << "["
       << category_name(e.category) << "] " << e.spec.summary << "\n";
  return os.str();
}

std::string describe_one(const std::string& type) {
  std::vector<std::string> names;
  for (const CatalogEntry& e : catalog()) {
    if (e.spec.type == type) return cfg::describe_type(e.spec);
    names.push_back(e.spec.type);
  }
  std::string hint = "known types: " + join_list(names);
  const std::string near = nearest(type, names);
  if (!near.empty()) hint = "did you mean '" + near + "'? " + hint;
  throw InputError("describe: unknown type '" + type + "'; " + hint);
}

}  // namespace fabricsim
