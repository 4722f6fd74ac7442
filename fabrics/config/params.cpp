#include "fabrics/config/params.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>

#include "fabrics/config/document.h"
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

bool is_quantity(ParamKind k) { return k == ParamKind::kBandwidth || k == ParamKind::kTime || k == ParamKind::kBytes; }

// A bound of spec in the units a user writes: "4KiB", "1us", "64".
std::string format_bound(const ParamSpec& spec, double bound) {
  if (is_quantity(spec.kind) && bound >= 0 && bound < 18446744073709551615.0 &&
      bound == std::floor(bound)) {
    const auto v = static_cast<uint64_t>(bound);
    switch (spec.kind) {
      case ParamKind::kBandwidth:
        return spec.unit_doc.find("GB/s") != std::string::npos ? format_bandwidth_Bps(v)
                                                                : format_bandwidth_bps(v);
      case ParamKind::kTime: return format_time_ps(v);
      default: return format_bytes(v);
    }
  }
  if (spec.kind == ParamKind::kInt && bound == std::floor(bound) && std::fabs(bound) < 9.3e18)
    return std::to_string(int64_t(bound));  // 9000000000000000000, not 9e+18
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
    case ParamKind::kBandwidth: return "a bandwidth like 400Gb/s";
    case ParamKind::kTime: return "a time like 150ns";
    case ParamKind::kBytes: return "a size like 4KiB";
    case ParamKind::kInt: return "an integer";
    case ParamKind::kReal: return "a number";
    case ParamKind::kBool: return "true or false";
    case ParamKind::kString: return "a string";
    case ParamKind::kEnum: return "one of: " + join(spec.choices);
    case ParamKind::kIntList: return "a list of integers like [1, 2]";
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

// Parses n (a value given in the config) into v according to spec.
void parse_value(const ParamSpec& spec, ParamValue& v, const YAML::Node& n, const Site& site) {
  if (!n.IsDefined() || n.IsNull()) {
    fail_at(site, "no value given",
            spec.default_value.empty()
                ? "expected " + expectation(spec)
                : "give " + expectation(spec) + " or remove the key to use the default " +
                      spec.default_value);
  }
  switch (spec.kind) {
    case ParamKind::kBandwidth:
    case ParamKind::kTime:
    case ParamKind::kBytes: {
      const std::string& s = scalar_of(spec, n, site);
      try {
        v.quantity = spec.kind == ParamKind::kBandwidth ? parse_bandwidth_bps(s)
                     : spec.kind == ParamKind::kTime    ? parse_time_ps(s)
                                                   : parse_bytes(s);
      } catch (const UnitError& e) {
        fail_at(site, e.problem(), e.hint());
      }
      check_range(spec, v.quantity, s, site);
      v.text = s;
      return;
    }
    case ParamKind::kInt:
      v.integer = parse_int(spec, n, site);
      v.text = n.Scalar();
      return;
    case ParamKind::kReal: {
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
    case ParamKind::kBool: {
      const std::string& s = scalar_of(spec, n, site);
      if (s != "true" && s != "false") {
        fail_at(site, "expected true or false, found '" + s + "'", "write true or false");
      }
      v.boolean = s == "true";
      v.text = s;
      return;
    }
    case ParamKind::kString:
      v.str = scalar_of(spec, n, site);
      v.text = v.str;
      return;
    case ParamKind::kEnum: {
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
    case ParamKind::kIntList: {
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

// A default is parsed by the one default parser (models/core/param_spec.h) and must lie in
// the spec's own range: a bad default is a bug in the declaration, not bad input.
detail::ParsedValue parse_default(const ParamSpec& spec) {
  detail::ParsedValue v;
  v.spec = spec;
  v.value = default_value(spec);
  const auto out_of_range = [&](long double x) {
    return x < static_cast<long double>(spec.min) || x > static_cast<long double>(spec.max);
  };
  bool bad = false;
  switch (spec.kind) {
    case ParamKind::kBandwidth:
    case ParamKind::kTime:
    case ParamKind::kBytes: bad = out_of_range(v.value.quantity); break;
    case ParamKind::kInt: bad = out_of_range(v.value.integer); break;
    case ParamKind::kReal: bad = out_of_range(v.value.real); break;
    case ParamKind::kIntList:
      for (int64_t x : v.value.list) bad = bad || out_of_range(x);
      break;
    case ParamKind::kEnum:
      bad = std::find(spec.choices.begin(), spec.choices.end(), v.value.str) == spec.choices.end();
      break;
    default: break;
  }
  if (bad)
    throw InternalError("bad default for parameter '" + spec.key + "': '" + spec.default_value +
                        "' is outside its own range or choices");
  return v;
}

void check_spec(const TypeSpec& spec) {
  std::set<std::string> keys;
  for (const ParamSpec& p : spec.params) {
    if (!keys.insert(p.key).second) {
      throw InternalError("type '" + spec.type + "' declares parameter '" + p.key + "' twice");
    }
    if (p.kind == ParamKind::kEnum && p.choices.empty()) {
      throw InternalError("type '" + spec.type + "': enum parameter '" + p.key + "' has no choices");
    }
  }
}

}  // namespace

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
    if (!p.default_value.empty()) out.values_[p.key] = parse_default(p);
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
      detail::ParsedValue v;
      v.spec = *spec_it;
      v.set = true;
      v.node = kv.second;
      // An empty value written in the file has the position of the next token: point at
      // its key instead. One given by --set has no position: point at it ("<--set>").
      const bool empty = !kv.second.IsDefined() || kv.second.IsNull();
      const bool from_set = kv.second.IsDefined() && kv.second.Mark().is_null();
      parse_value(v.spec, v.value, kv.second,
                  Site{file, join_key(path, key), empty && !from_set ? kv.first : kv.second});
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

const detail::ParsedValue& Params::get(const std::string& key, std::initializer_list<ParamKind> kinds,
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
  return get(key, {ParamKind::kBandwidth}, "bandwidth_bps").value.quantity;
}
uint64_t Params::time_ps(const std::string& key) const {
  return get(key, {ParamKind::kTime}, "time_ps").value.quantity;
}
uint64_t Params::bytes(const std::string& key) const {
  return get(key, {ParamKind::kBytes}, "bytes").value.quantity;
}
int64_t Params::integer(const std::string& key) const {
  return get(key, {ParamKind::kInt}, "integer").value.integer;
}
double Params::real(const std::string& key) const { return get(key, {ParamKind::kReal}, "real").value.real; }
bool Params::boolean(const std::string& key) const {
  return get(key, {ParamKind::kBool}, "boolean").value.boolean;
}
const std::string& Params::str(const std::string& key) const {
  return get(key, {ParamKind::kString, ParamKind::kEnum}, "str").value.str;
}
const std::vector<int64_t>& Params::int_list(const std::string& key) const {
  return get(key, {ParamKind::kIntList}, "int_list").value.list;
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
  for (const auto& [key, pv] : values_) {
    const ParamValue& v = pv.value;
    switch (pv.spec.kind) {
      case ParamKind::kInt: out[key] = v.integer; break;
      case ParamKind::kReal: out[key] = v.real; break;
      case ParamKind::kBool: out[key] = v.boolean; break;
      case ParamKind::kIntList: out[key] = v.list; break;
      case ParamKind::kString:
      case ParamKind::kEnum: out[key] = v.str; break;
      case ParamKind::kBandwidth:
      case ParamKind::kTime:
      case ParamKind::kBytes: out[key] = v.text; break;
    }
  }
  return out;
}

std::any Params::store(const ParamBlock& block) const {
  std::any object = block.make();
  void* raw = nullptr;
  for (const ParamSpec& s : block.specs) {
    if (!s.assign) continue;
    const auto it = values_.find(s.key);
    if (it == values_.end())
      throw InternalError("'" + path_ + "' was parsed without parameter '" + s.key + "'");
    if (!raw) raw = block.address(object);
    s.assign(raw, it->second.value);
  }
  if (block.resolve) block.resolve(object, *this);
  return object;
}

std::string describe_type(const TypeSpec& spec) {
  std::vector<std::vector<std::string>> rows = {{"KEY", "KIND", "DEFAULT", "UNIT", "DESCRIPTION"}};
  for (const ParamSpec& p : spec.params) {
    std::string description = p.description;
    if (p.kind == ParamKind::kEnum) description += " (choices: " + join(p.choices) + ")";
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
