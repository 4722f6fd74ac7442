// Declared parameters: the one source of truth for a component type's keys, defaults,
// units and descriptions, and the strict parser that turns a YAML map into typed values.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "fabrics/config.h"

namespace fabricsim::cfg {

enum class Kind { kBandwidth, kTime, kBytes, kInt, kReal, kBool, kString, kEnum, kIntList };

// "bandwidth", "time", "bytes", "int", "real", "bool", "string", "enum", "int list".
const char* kind_name(Kind kind);

struct ParamSpec {
  std::string key;
  Kind kind = Kind::kString;
  std::string default_value;  // as it would be written in YAML; "" means required
  std::string unit_doc;       // e.g. "Gb/s or GB/s", "ns", "bytes"
  std::string description;
  // kEnum only. "= {}" lets brace-initialised specs stop before it without
  // -Wmissing-field-initializers.
  std::vector<std::string> choices = {};
  // Inclusive bounds: for kInt, kReal and each kIntList element in their own terms; for
  // kBandwidth, kTime, kBytes in base units (bits per second, picoseconds, bytes).
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
};

struct TypeSpec {
  std::string type;
  std::string summary;
  std::vector<ParamSpec> params;
};

namespace detail {
// One parsed parameter; only Params and the parser use it.
struct ParamValue {
  ParamSpec spec;
  bool set = false;
  NodeRef node;               // the value node if set
  std::string text;           // the scalar as written or defaulted
  uint64_t quantity = 0;      // kBandwidth, kTime, kBytes in base units
  int64_t integer = 0;        // kInt
  double real = 0;            // kReal
  bool boolean = false;       // kBool
  std::string str;            // kString, kEnum
  std::vector<int64_t> list;  // kIntList
};
}  // namespace detail

class Params;

// Parses map (at key path `path` in `file`) against spec. Keys in ignore_keys are left
// for the caller (e.g. "type"). An absent or empty map means "all defaults". Every bad
// input throws InputError in the fail() format; a spec whose defaults do not parse
// throws InternalError.
Params parse_params(const TypeSpec& spec, const YAML::Node& map, const std::string& file,
                    const std::string& path, const std::vector<std::string>& ignore_keys = {});

// Parsed, typed values of one map. Asking for a key the spec does not declare, or with
// the accessor of another kind, throws InternalError.
class Params {
 public:
  Params() = default;

  uint64_t bandwidth_bps(const std::string& key) const;
  uint64_t time_ps(const std::string& key) const;
  uint64_t bytes(const std::string& key) const;
  int64_t integer(const std::string& key) const;
  double real(const std::string& key) const;
  bool boolean(const std::string& key) const;
  const std::string& str(const std::string& key) const;  // kString and kEnum
  const std::vector<int64_t>& int_list(const std::string& key) const;

  // True if the key was given in the YAML (or by --set), false if defaulted.
  bool was_set(const std::string& key) const;
  // The value node if given, else the parameter map: where to point an error about it.
  YAML::Node node(const std::string& key) const;
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }  // e.g. "device_types.h100"

  // Throws InputError("file:line:col: path.key: problem; hint") located at node(key).
  [[noreturn]] void fail(const std::string& key, const std::string& problem,
                         const std::string& hint) const;

  // {key: value} for every parameter: bandwidths, times and sizes as the text written or
  // defaulted ("25GB/s"), ints/reals/bools as JSON numbers/booleans, strings and enums as
  // strings, int lists as arrays.
  nlohmann::json to_json() const;

 private:
  const detail::ParamValue& get(const std::string& key, std::initializer_list<Kind> kinds,
                                const char* accessor) const;

  std::string file_;
  std::string path_;
  NodeRef map_;
  std::map<std::string, detail::ParamValue> values_;

  friend Params parse_params(const TypeSpec& spec, const YAML::Node& map, const std::string& file,
                             const std::string& path, const std::vector<std::string>& ignore_keys);
};

// A human-readable table of the type's parameters: key, kind, default, unit,
// description, plus choices and allowed range where they apply.
std::string describe_type(const TypeSpec& spec);

}  // namespace fabricsim::cfg
