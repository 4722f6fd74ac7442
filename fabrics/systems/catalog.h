// Every config type a file may name, gathered from the plug-in registries: the sections,
// link types (with every framing's keys), device kinds (with their features' keys),
// topology generators and workloads. `fabricsim describe` prints it, and docs/config.md is
// generated from it.
#pragma once
#include <string>
#include <vector>

#include "fabrics/config/params.h"

namespace fabricsim {

enum class Category { kSection, kLink, kDevice, kTopology, kWorkload, kFault };

struct CatalogEntry {
  Category category;
  cfg::TypeSpec spec;
};

// In the order `describe` lists them: sections, link, device kinds, topologies, workloads
// (each in registration order), then the faults section and its event types.
std::vector<CatalogEntry> catalog();
// The spec of `type` in `category`; nullptr if none.
const cfg::TypeSpec* find_type(const std::vector<CatalogEntry>& entries, Category category,
                               const std::string& type);
std::vector<std::string> type_names(Category category);
const char* category_name(Category category);

// The spec of the top level of a config file (version, name, seed).
cfg::TypeSpec config_top_spec();

// `fabricsim describe` output: all types, or one type's parameter table. An unknown type
// throws InputError naming the nearest match.
std::string describe_all();
std::string describe_one(const std::string& type);

}  // namespace fabricsim
