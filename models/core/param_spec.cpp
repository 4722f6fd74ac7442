#include "models/core/param_spec.h"

#include <charconv>
#include <cmath>

#include "models/core/limits.h"
#include "models/core/units.h"

namespace fabricsim {

const char* kind_name(ParamKind kind) {
  switch (kind) {
    case ParamKind::kBandwidth: return "bandwidth";
    case ParamKind::kTime: return "time";
    case ParamKind::kBytes: return "bytes";
    case ParamKind::kInt: return "int";
    case ParamKind::kReal: return "real";
    case ParamKind::kBool: return "bool";
    case ParamKind::kString: return "string";
    case ParamKind::kEnum: return "enum";
    case ParamKind::kIntList: return "int list";
  }
  return "?";
}

ParamSpec param(std::string key, ParamKind kind, std::string default_value, std::string unit,
                std::string description, double min, double max) {
  ParamSpec s;
  s.key = std::move(key);
  s.kind = kind;
  s.default_value = std::move(default_value);
  s.unit_doc = std::move(unit);
  s.description = std::move(description);
  s.min = min;
  s.max = max;
  return s;
}

ParamSpec choice(std::string key, std::vector<std::string> choices, std::string default_value,
                 std::string description) {
  ParamSpec s = param(std::move(key), ParamKind::kEnum, std::move(default_value), "",
                      std::move(description));
  s.choices = std::move(choices);
  return s;
}

namespace {

[[noreturn]] void bad_default(const ParamSpec& spec, const std::string& why) {
  throw InternalError("parameter '" + spec.key + "': default '" + spec.default_value + "' " + why);
}

int64_t parse_int_text(const ParamSpec& spec, const std::string& s) {
  int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) bad_default(spec, "is not an integer");
  return v;
}

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(' ');
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(' ') - b + 1);
}

}  // namespace

ParamValue default_value(const ParamSpec& spec) {
  if (spec.default_value.empty()) bad_default(spec, "is empty: the parameter is required");
  ParamValue v;
  const std::string& s = spec.default_value;
  v.text = s;
  try {
    switch (spec.kind) {
      case ParamKind::kBandwidth: v.quantity = parse_bandwidth_bps(s); break;
      case ParamKind::kTime: v.quantity = parse_time_ps(s); break;
      case ParamKind::kBytes: v.quantity = parse_bytes(s); break;
      case ParamKind::kInt: v.integer = parse_int_text(spec, s); break;
      case ParamKind::kReal: {
        const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v.real);
        if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v.real))
          bad_default(spec, "is not a finite number");
        break;
      }
      case ParamKind::kBool:
        if (s != "true" && s != "false") bad_default(spec, "is not true or false");
        v.boolean = s == "true";
        break;
      case ParamKind::kString:
      case ParamKind::kEnum: v.str = s; break;
      case ParamKind::kIntList: {
        if (s.size() < 2 || s.front() != '[' || s.back() != ']')
          bad_default(spec, "is not a list like [1, 2]");
        const std::string body = trim(s.substr(1, s.size() - 2));
        for (size_t pos = 0; !body.empty() && pos <= body.size();) {
          size_t comma = body.find(',', pos);
          if (comma == std::string::npos) comma = body.size();
          v.list.push_back(parse_int_text(spec, trim(body.substr(pos, comma - pos))));
          pos = comma + 1;
        }
        break;
      }
    }
  } catch (const UnitError& e) {
    bad_default(spec, std::string("does not parse: ") + e.what());
  }
  return v;
}

void apply_defaults(const std::vector<ParamSpec>& specs, void* object) {
  for (const ParamSpec& s : specs)
    if (s.assign && !s.default_value.empty()) s.assign(object, default_value(s));
}

// "none" -> 0, or a bandwidth in bytes per second within the device bandwidths of limits.h.
uint64_t optional_bandwidth_Bps(const ParamReader& r, const std::string& key) {
  const std::string& v = r.str(key);
  if (v == "none") return 0;
  uint64_t bps = 0;
  try {
    bps = parse_bandwidth_bps(v);
  } catch (const UnitError& ex) {
    r.fail(key, ex.problem(), "a bandwidth such as 2000GB/s, or none");
  }
  if (bps < limits::kMinDeviceBandwidthBps || bps > limits::kMaxDeviceBandwidthBps)
    r.fail(key, "value " + v + " is outside the range of an engine's throughput",
           "allowed range: " + format_bandwidth_Bps(uint64_t(limits::kMinDeviceBandwidthBps)) +
               " to " + format_bandwidth_Bps(uint64_t(limits::kMaxDeviceBandwidthBps)) +
               ", or none");
  return bps / 8;
}

}  // namespace fabricsim
