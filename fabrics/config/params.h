// The strict parser of declared parameters (models/core/param_spec.h): a YAML map against
// a type's specs -> typed values, every bad input reported at its file:line:col; and the
// step that stores those values into the params objects the specs are bound to.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "fabrics/config/document.h"
#include "models/core/param_spec.h"

namespace fabricsim::cfg {

// The unit `fabricsim describe TYPE` documents: a config type's name, one line, and its
// parameters in order.
struct TypeSpec {
  std::string type;
  std::string summary;
  std::vector<ParamSpec> params;
};

namespace detail {
// One parsed parameter; only Params and the parser use it.
struct ParsedValue {
  ParamSpec spec;
  bool set = false;
  NodeRef node;      // the value node if set
  ParamValue value;
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
class Params : public ParamReader {
 public:
  Params() = default;

  uint64_t bandwidth_bps(const std::string& key) const override;
  uint64_t time_ps(const std::string& key) const override;
  uint64_t bytes(const std::string& key) const override;
  int64_t integer(const std::string& key) const override;
  double real(const std::string& key) const override;
  bool boolean(const std::string& key) const override;
  const std::string& str(const std::string& key) const override;  // kString and kEnum
  const std::vector<int64_t>& int_list(const std::string& key) const override;

  // True if the key was given in the YAML (or by --set), false if defaulted.
  bool was_set(const std::string& key) const override;
  // The value node if given, else the parameter map: where to point an error about it.
  YAML::Node node(const std::string& key) const;
  const std::string& file() const { return file_; }
  const std::string& path() const override { return path_; }  // e.g. "device_types.h100"

  // Throws InputError("file:line:col: path.key: problem; hint") located at node(key).
  [[noreturn]] void fail(const std::string& key, const std::string& problem,
                         const std::string& hint) const override;

  // A params object of `block` with every parameter of the block stored through its
  // binding and the block's resolve hook run (which may fail() at a key). Every spec of
  // the block must be among the parsed ones.
  std::any store(const ParamBlock& block) const;

  // {key: value} for every parameter: bandwidths, times and sizes as the text written or
  // defaulted ("25GB/s"), ints/reals/bools as JSON numbers/booleans, strings and enums as
  // strings, int lists as arrays.
  nlohmann::json to_json() const;

 private:
  const detail::ParsedValue& get(const std::string& key, std::initializer_list<ParamKind> kinds,
                                const char* accessor) const;

  std::string file_;
  std::string path_;
  NodeRef map_;
  std::map<std::string, detail::ParsedValue> values_;

  friend Params parse_params(const TypeSpec& spec, const YAML::Node& map, const std::string& file,
                             const std::string& path, const std::vector<std::string>& ignore_keys);
};

// A human-readable table of the type's parameters: key, kind, default, unit,
// description, plus choices and allowed range where they apply.
std::string describe_type(const TypeSpec& spec);

}  // namespace fabricsim::cfg
