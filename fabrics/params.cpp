#include "fabrics/params.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>

#include "fabrics/config.h"
#include "models/core/errors.h"
#include "models/core/units.h"

namespace fabricsim::cfg {

namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string format_real(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

bool is_quantity(Kind k) { return k == Kind::kBandwidth || k == Kind::kTime || k == Kind::kBytes; }

// A bound of spec in the units a user writes: "4KiB", "1us", "64".
std::string format_bound(const ParamSpec& spec, double bound) {
  if (is_quantity(spec.kind) && bound >= 0 && bound < 18446744073709551615.0 &&
      bound == std::floor(bound)) {
    const auto v = static_cast<uint64_t>(bound);
    switch (spec.kind) {
      case Kind::kBandwidth: return format_bandwidth_bps(v);
      case Kind::kTime: return format_time_ps(v);
      default: return format_bytes(v);
    }
  }
  return format_real(bound);
}

// "" if unbounded, else "allowed range: 1 to 64" and the like.
std::string range_text(const ParamSpec& spec) {
  const bool has_min = std::isfinite(spec.min);
  const bool has_max = std::isfinite(spec.max);
  if (has_min && has_max) {
    return "allowed range: " + format_bound(spec, spec.min) + " to " + format_bound(spec, spec.max);
  }
  if (has_min) return "allowed: at least " + format_bound(spec, spec.min);
  if (has_max) return "allowed: at most " + format_bound(spec, spec.max);
  return "";
}

// What a value of this parameter looks like, for "expected X, found Y".
std::string expectation(const ParamSpec& spec) {
  switch (spec.kind) {
    case Kind::kBandwidth: return "a bandwidth like 400Gb/s";
    case Kind::kTime: return "a time like 150ns";
    case Kind::kBytes: return "a size like 4KiB";
    case Kind::kInt: return "an integer";
    case Kind::kReal: return "a number";
    case Kind::kBool: return "true or false";
    case Kind::kString: return "a string";
    case Kind::kEnum: return "one of: " + join(spec.choices);
    case Kind::kIntList: return "a list of integers like [1, 2]";
  }
  return "";
}

// Where a value is parsed from, for error messages.
struct Site {
  const std::string& file;
  std::string key_path;
  YAML::Node at;  // the value, or the key if the value is empty (its mark is the next token)
};

[[noreturn]] void fail_at(const Site& site, const std::string& problem, const std::string& hint) {
  fail(site.file, site.at, site.key_path, problem, hint);
}

void check_range(const ParamSpec& spec, long double value, const std::string& shown,
                 const Site& site) {
  if (value < static_cast<long double>(spec.min)) {
    fail_at(site, "value " + shown + " is below the minimum " + format_bound(spec, spec.min),
            range_text(spec));
  }
  if (value > static_cast<long double>(spec.max)) {
    fail_at(site, "value " + shown + " is above the maximum " + format_bound(spec, spec.max),
            range_text(spec));
  }
}

const std::string& scalar_of(const ParamSpec& spec, const YAML::Node& n, const Site& site) {
  if (!n.IsScalar()) {
    fail_at(site, "expected " + expectation(spec) + ", found " + describe_node(n), "");
  }
  return n.Scalar();
}

int64_t parse_int(const ParamSpec& spec, const YAML::Node& n, const Site& site) {
  const std::string& s = scalar_of(spec, n, site);
  int64_t v = 0;
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, v);
  const bool digits_only = !s.empty() && s.find_first_not_of("-0123456789") == std::string::npos;
  if (ec == std::errc::result_out_of_range && digits_only) {
    fail_at(site, "integer '" + s + "' is out of the 64-bit range", range_text(spec));
  }
  if (ec != std::errc() || ptr != end) {
    double as_real = 0;
    const auto real = std::from_chars(s.data(), end, as_real);
    const bool numeric = real.ec == std::errc() && real.ptr == end;
    fail_at(site, "expected an integer, found '" + s + "'",
            numeric ? "this parameter takes whole numbers only" : "");
  }
  check_range(spec, v, std::to_string(v), site);
  return v;
}

// Parses n (the value given, or the default) into v according to v.spec.
void parse_value(detail::ParamValue& v, const YAML::Node& n, const Site& site) {
  const ParamSpec& spec = v.spec;
  if (!n.IsDefined() || n.IsNull()) {
    fail_at(site, "no value given",
            spec.default_value.empty()
                ? "expected " + expectation(spec)
                : "give " + expectation(spec) + " or remove the key to use the default " +
                      spec.default_value);
  }
  switch (spec.kind) {
    case Kind::kBandwidth:
    case Kind::kTime:
    case Kind::kBytes: {
      const std::string& s = scalar_of(spec, n, site);
      try {
        v.quantity = spec.kind == Kind::kBandwidth ? parse_bandwidth_bps(s)
                     : spec.kind == Kind::kTime    ? parse_time_ps(s)
                                                   : parse_bytes(s);
      } catch (const UnitError& e) {
        fail_at(site, e.problem(), e.hint());
      }
      check_range(spec, v.quantity, s, site);
      v.text = s;
      return;
    }
    case Kind::kInt:
      v.integer = parse_int(spec, n, site);
      v.text = n.Scalar();
      return;
    case Kind::kReal: {
      const std::string& s = scalar_of(spec, n, site);
      double d = 0;
      const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
      if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(d)) {
        fail_at(site, "expected a finite number, found '" + s + "'", "e.g. 0.5 or 1e-3");
      }
      check_range(spec, d, s, site);
      v.real = d;
      v.text = s;
      return;
    }
    case Kind::kBool: {
      const std::string& s = scalar_of(spec, n, site);
      if (s != "true" && s != "false") {
        fail_at(site, "expected true or false, found '" + s + "'", "write true or false");
      }
      v.boolean = s == "true";
      v.text = s;
      return;
    }
    case Kind::kString:
      v.str = scalar_of(spec, n, site);
      v.text = v.str;
      return;
    case Kind::kEnum: {
      const std::string& s = scalar_of(spec, n, site);
      if (std::find(spec.choices.begin(), spec.choices.end(), s) == spec.choices.end()) {
        const std::string near = nearest(s, spec.choices);
        fail_at(site, "unknown value '" + s + "'",
                (near.empty() ? "" : "did you mean '" + near + "'? ") + "choices: " +
                    join(spec.choices));
      }
      v.str = s;
      v.text = s;
      return;
    }
    case Kind::kIntList: {
      if (!n.IsSequence()) {
        fail_at(site, "expected " + expectation(spec) + ", found " + describe_node(n), "");
      }
      v.list.clear();
      for (size_t i = 0; i < n.size(); ++i) {
        const YAML::Node e = n[i];
        const Site element{site.file, site.key_path + "[" + std::to_string(i) + "]", e};
        if (!e.IsScalar()) {
          fail_at(element, "expected an integer, found " + describe_node(e), "");
        }
        v.list.push_back(parse_int(spec, e, element));
      }
      return;
    }
  }
  throw InternalError("parse_params: unhandled kind for '" + spec.key + "'");
}

// The default of spec as the node a user would have written.
YAML::Node default_node(const ParamSpec& spec) {
  if (spec.kind != Kind::kIntList) return YAML::Node(spec.default_value);
  try {
    return YAML::Load(spec.default_value);
  } catch (const YAML::Exception& e) {
    throw InternalError("parameter '" + spec.key + "': default '" + spec.default_value +
                        "' is not YAML: " + e.msg);
  }
}

detail::ParamValue parse_default(const ParamSpec& spec, const std::string& file, const std::string& path) {
  detail::ParamValue v;
  v.spec = spec;
  const YAML::Node n = default_node(spec);
  try {
    parse_value(v, n, Site{file, join_key(path, spec.key), n});
  } catch (const InputError& e) {
    throw InternalError("bad default for parameter '" + spec.key + "': " + e.what());
  }
  return v;
}

void check_spec(const TypeSpec& spec) {
  std::set<std::string> keys;
  for (const ParamSpec& p : spec.params) {
    if (!keys.insert(p.key).second) {
      throw InternalError("type '" + spec.type + "' declares parameter '" + p.key + "' twice");
    }
    if (p.kind == Kind::kEnum && p.choices.empty()) {
      throw InternalError("type '" + spec.type + "': enum parameter '" + p.key + "' has no choices");
    }
  }
}

}  // namespace

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::kBandwidth: return "bandwidth";
    case Kind::kTime: return "time";
    case Kind::kBytes: return "bytes";
    case Kind::kInt: return "int";
    case Kind::kReal: return "real";
    case Kind::kBool: return "bool";
    case Kind::kString: return "string";
    case Kind::kEnum: return "enum";
    case Kind::kIntList: return "int list";
  }
  return "?";
}

Params parse_params(const TypeSpec& spec, const YAML::Node& map, const std::string& file,
                    const std::string& path, const std::vector<std::string>& ignore_keys) {
  check_spec(spec);
  Params out;
  out.file_ = file;
  out.path_ = path;
  out.map_ = map;

  // Defaults are parsed for every parameter, given or not, so a bad spec fails on the
  // first parse instead of only when someone relies on the default.
  for (const ParamSpec& p : spec.params) {
    if (!p.default_value.empty()) out.values_[p.key] = parse_default(p, file, path);
  }

  std::vector<std::string> known;
  for (const ParamSpec& p : spec.params) known.push_back(p.key);
  known.insert(known.end(), ignore_keys.begin(), ignore_keys.end());

  const bool present = map.IsDefined() && !map.IsNull();
  if (present && !map.IsMap()) {
    fail(file, map, path, "expected a map of parameters, found " + describe_node(map),
         known.empty() ? "" : "write 'key: value' lines; known keys: " + join(known));
  }
  std::set<std::string> given;
  if (present) {
    check_unique_keys(file, map, path);
    for (const auto& kv : map) {
      if (!kv.first.IsScalar()) {
        fail(file, kv.first, path, "expected a key name, found " + describe_node(kv.first),
             "keys are plain names");
      }
      const std::string& key = kv.first.Scalar();
      if (std::find(ignore_keys.begin(), ignore_keys.end(), key) != ignore_keys.end()) continue;
      const auto spec_it = std::find_if(spec.params.begin(), spec.params.end(),
                                        [&](const ParamSpec& p) { return p.key == key; });
      if (spec_it == spec.params.end()) {
        const std::string near = nearest(key, known);
        fail(file, kv.first, join_key(path, key), "unknown key '" + key + "'",
             known.empty() ? "this takes no parameters"
                           : (near.empty() ? "" : "did you mean '" + near + "'? ") +
                                 "known keys: " + join(known));
      }
      detail::ParamValue v;
      v.spec = *spec_it;
      v.set = true;
      v.node = kv.second;
      const bool empty = !kv.second.IsDefined() || kv.second.IsNull();
      parse_value(v, kv.second, Site{file, join_key(path, key), empty ? kv.first : kv.second});
      out.values_[key] = std::move(v);
      given.insert(key);
    }
  }

  for (const ParamSpec& p : spec.params) {
    if (p.default_value.empty() && given.count(p.key) == 0) {
      std::string hint = "add '" + p.key + ": <" + kind_name(p.kind) +
                         (p.unit_doc.empty() ? "" : " in " + p.unit_doc) + ">'";
      if (!p.description.empty()) hint += " (" + p.description + ")";
      fail(file, map, path, "missing required key '" + p.key + "'", hint);
    }
  }
  return out;
}

const detail::ParamValue& Params::get(const std::string& key, std::initializer_list<Kind> kinds,
                                 const char* accessor) const {
  const auto it = values_.find(key);
  if (it == values_.end()) {
    throw InternalError(std::string("Params::") + accessor + "('" + key + "'): '" + path_ +
                        "' declares no such parameter");
  }
  if (std::find(kinds.begin(), kinds.end(), it->second.spec.kind) == kinds.end()) {
    throw InternalError(std::string("Params::") + accessor + "('" + key + "'): the parameter is a " +
                        kind_name(it->second.spec.kind));
  }
  return it->second;
}

uint64_t Params::bandwidth_bps(const std::string& key) const {
  return get(key, {Kind::kBandwidth}, "bandwidth_bps").quantity;
}
uint64_t Params::time_ps(const std::string& key) const {
  return get(key, {Kind::kTime}, "time_ps").quantity;
}
uint64_t Params::bytes(const std::string& key) const {
  return get(key, {Kind::kBytes}, "bytes").quantity;
}
int64_t Params::integer(const std::string& key) const {
  return get(key, {Kind::kInt}, "integer").integer;
}
double Params::real(const std::string& key) const { return get(key, {Kind::kReal}, "real").real; }
bool Params::boolean(const std::string& key) const {
  return get(key, {Kind::kBool}, "boolean").boolean;
}
const std::string& Params::str(const std::string& key) const {
  return get(key, {Kind::kString, Kind::kEnum}, "str").str;
}
const std::vector<int64_t>& Params::int_list(const std::string& key) const {
  return get(key, {Kind::kIntList}, "int_list").list;
}

bool Params::was_set(const std::string& key) const {
  const auto it = values_.find(key);
  if (it == values_.end()) {
    throw InternalError("Params::was_set('" + key + "'): '" + path_ + "' declares no such parameter");
  }
  return it->second.set;
}

YAML::Node Params::node(const std::string& key) const {
  return was_set(key) ? values_.at(key).node.get() : map_.get();
}

void Params::fail(const std::string& key, const std::string& problem, const std::string& hint) const {
  cfg::fail(file_, node(key), join_key(path_, key), problem, hint);
}

nlohmann::json Params::to_json() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, v] : values_) {
    switch (v.spec.kind) {
      case Kind::kInt: out[key] = v.integer; break;
      case Kind::kReal: out[key] = v.real; break;
      case Kind::kBool: out[key] = v.boolean; break;
      case Kind::kIntList: out[key] = v.list; break;
      case Kind::kString:
      case Kind::kEnum: out[key] = v.str; break;
      case Kind::kBandwidth:
      case Kind::kTime:
      case Kind::kBytes: out[key] = v.text; break;
    }
  }
  return out;
}

std::string describe_type(const TypeSpec& spec) {
  std::vector<std::vector<std::string>> rows = {{"KEY", "KIND", "DEFAULT", "UNIT", "DESCRIPTION"}};
  for (const ParamSpec& p : spec.params) {
    std::string description = p.description;
    if (p.kind == Kind::kEnum) description += " (choices: " + join(p.choices) + ")";
    const std::string range = range_text(p);
    if (!range.empty()) description += " (" + range + ")";
    rows.push_back({p.key, kind_name(p.kind), p.default_value.empty() ? "(required)" : p.default_value,
                    p.unit_doc.empty() ? "-" : p.unit_doc, description});
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out = spec.type + (spec.summary.empty() ? "" : ": " + spec.summary) + "\n";
  for (const auto& row : rows) {
    std::string line = " ";
    for (size_t c = 0; c < row.size(); ++c) {
      line += " " + row[c];
      if (c + 1 < row.size()) line += std::string(width[c] - row[c].size() + 1, ' ');
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace fabricsim::cfg
