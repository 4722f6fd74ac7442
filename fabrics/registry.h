// The component registry: every YAML `type` with its declared parameters (the one source
// of truth for keys, defaults, units and descriptions), used both to validate configs and
// by `fabricsim describe`.
#pragma once
#include <string>
#include <vector>

#include "fabrics/params.h"

namespace fabricsim::cfg {

enum class Category { kLink, kDevice, kTopology, kWorkload, kSection };

struct TypeEntry {
  Category category;
  TypeSpec spec;
};

const std::vector<TypeEntry>& registry();
// The entry for `type` in `category`; nullptr if none.
const TypeEntry* find_type(Category category, const std::string& type);
// Names of the types in a category, for "unknown type" messages.
std::vector<std::string> type_names(Category category);
const char* category_name(Category category);

// `fabricsim describe` output: all types, or one type's parameter table.
std::string describe_all();
// Throws InputError (with the nearest match) for an unknown type.
std::string describe_one(const std::string& type);

}  // namespace fabricsim::cfg
