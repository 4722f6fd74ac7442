#include "models/core/datatype.h"

#include "models/core/errors.h"

namespace fabricsim {

const std::vector<Datatype>& datatypes() {
  static const std::vector<Datatype> all{{"float", 4},  {"half", 2},  {"bfloat16", 2},
                                         {"double", 8}, {"int32", 4}, {"int8", 1}};
  return all;
}

std::vector<std::string> datatype_names() {
  std::vector<std::string> out;
  for (const Datatype& d : datatypes()) out.push_back(d.name);
  return out;
}

uint32_t datatype_bytes(const std::string& name) {
  for (const Datatype& d : datatypes())
    if (name == d.name) return d.bytes;
  throw InternalError("unknown datatype " + name);
}

}  // namespace fabricsim
