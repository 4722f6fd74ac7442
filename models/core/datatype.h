// Element types of collectives and in-switch reductions: the one list of names and sizes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim {

struct Datatype {
  const char* name;  // nccl-tests name
  uint32_t bytes;
};

// float, half, bfloat16, double, int32, int8 (in this order: choice lists show it).
const std::vector<Datatype>& datatypes();
std::vector<std::string> datatype_names();
// Bytes of one element; throws InternalError for an unknown name.
uint32_t datatype_bytes(const std::string& name);

}  // namespace fabricsim
