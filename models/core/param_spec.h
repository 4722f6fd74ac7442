// Declared parameters: the language in which every configurable piece (a device kind, a
// switch feature, a link framing, a topology generator, a workload) states its YAML keys,
// each with kind, default, unit, range and meaning, and binds each key to the field of
// the piece's own typed params struct. The default is written here and nowhere else:
// params structs zero their fields, and whoever wants a default-filled struct without a
// config asks defaults<T>(block).
//
// Plain data: no YAML, no SystemC. Models declare; the config layer
// (fabrics/config/params.h) parses a YAML map against the specs, reports bad input at its
// file:line:col, and stores every value through the binding.
#pragma once
#include <algorithm>
#include <any>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "models/core/errors.h"

namespace fabricsim {

enum class ParamKind { kBandwidth, kTime, kBytes, kInt, kReal, kBool, kString, kEnum, kIntList };

// "bandwidth", "time", "bytes", "int", "real", "bool", "string", "enum", "int list".
const char* kind_name(ParamKind kind);

// One parsed value. Quantities are in base units: bits per second, picoseconds, bytes.
struct ParamValue {
  uint64_t quantity = 0;      // kBandwidth, kTime, kBytes
  int64_t integer = 0;        // kInt
  double real = 0;            // kReal
  bool boolean = false;       // kBool
  std::string str;            // kString, kEnum
  std::vector<int64_t> list;  // kIntList
  std::string text;           // the scalar as written or defaulted ("25GB/s")
};

struct ParamSpec {
  std::string key;
  ParamKind kind = ParamKind::kString;
  std::string default_value;  // as it would be written in YAML; "" means required
  std::string unit_doc;       // e.g. "Gb/s or GB/s", "ns", "bytes"
  std::string description;
  std::vector<std::string> choices = {};  // kEnum only
  // Inclusive bounds: for kInt, kReal and each kIntList element in their own terms; for
  // kBandwidth, kTime, kBytes in base units (bits per second, picoseconds, bytes).
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  // Stores a parsed value into the bound field of the declaring piece's params object
  // (passed as void*: the piece's ParamBlock knows its type). Empty: nothing is stored,
  // a hook reads the value by key (ParamReader).
  std::function<void(void* object, const ParamValue& value)> assign = {};
};

// A parameter declaration (unbound until bind()).
ParamSpec param(std::string key, ParamKind kind, std::string default_value, std::string unit,
                std::string description,
                double min = -std::numeric_limits<double>::infinity(),
                double max = std::numeric_limits<double>::infinity());
ParamSpec choice(std::string key, std::vector<std::string> choices, std::string default_value,
                 std::string description);

// Binds `spec` to `field` of T. The field's type must hold every value the kind can take:
// uint64_t/uint32_t/int for quantities and integers (a field narrower than 64 bits narrows
// the range to what it holds, an unsigned one raises the minimum to 0: no value wraps),
// double for reals, bool, std::string for strings and enums, std::vector<int64_t> for
// int lists.
template <class T, class F>
ParamSpec bind(ParamSpec spec, F T::*field) {
  constexpr bool is_count = std::is_integral_v<F> && !std::is_same_v<F, bool>;
  switch (spec.kind) {
    case ParamKind::kBandwidth:
    case ParamKind::kTime:
    case ParamKind::kBytes:
    case ParamKind::kInt:
      if constexpr (is_count) {
        if constexpr (sizeof(F) < sizeof(uint64_t)) {
          spec.max = std::min(spec.max, double(std::numeric_limits<F>::max()));
          spec.min = std::max(spec.min, double(std::numeric_limits<F>::min()));
        } else if constexpr (std::is_unsigned_v<F>) {
          spec.min = std::max(spec.min, 0.0);
        }
        const bool quantity = spec.kind != ParamKind::kInt;
        spec.assign = [field, quantity](void* o, const ParamValue& v) {
          static_cast<T*>(o)->*field = quantity ? F(v.quantity) : F(v.integer);
        };
        return spec;
      }
      break;
    case ParamKind::kReal:
      if constexpr (std::is_same_v<F, double>) {
        spec.assign = [field](void* o, const ParamValue& v) { static_cast<T*>(o)->*field = v.real; };
        return spec;
      }
      break;
    case ParamKind::kBool:
      if constexpr (std::is_same_v<F, bool>) {
        spec.assign = [field](void* o, const ParamValue& v) {
          static_cast<T*>(o)->*field = v.boolean;
        };
        return spec;
      }
      break;
    case ParamKind::kString:
    case ParamKind::kEnum:
      if constexpr (std::is_same_v<F, std::string>) {
        spec.assign = [field](void* o, const ParamValue& v) { static_cast<T*>(o)->*field = v.str; };
        return spec;
      }
      break;
    case ParamKind::kIntList:
      if constexpr (std::is_same_v<F, std::vector<int64_t>>) {
        spec.assign = [field](void* o, const ParamValue& v) { static_cast<T*>(o)->*field = v.list; };
        return spec;
      }
      break;
  }
  throw InternalError("parameter '" + spec.key + "' (" + kind_name(spec.kind) +
                      ") is bound to a field of the wrong type");
}

// Values by key for the hooks that derive fields or check several parameters together,
// and the one way to report a bad value: at its source, "file:line:col: path.key:
// problem; hint" (the config layer implements it).
class ParamReader {
 public:
  virtual ~ParamReader() = default;
  virtual uint64_t bandwidth_bps(const std::string& key) const = 0;
  virtual uint64_t time_ps(const std::string& key) const = 0;
  virtual uint64_t bytes(const std::string& key) const = 0;
  virtual int64_t integer(const std::string& key) const = 0;
  virtual double real(const std::string& key) const = 0;
  virtual bool boolean(const std::string& key) const = 0;
  virtual const std::string& str(const std::string& key) const = 0;  // kString and kEnum
  virtual const std::vector<int64_t>& int_list(const std::string& key) const = 0;
  // True if the key was given (in the file or by --set), false if defaulted.
  virtual bool was_set(const std::string& key) const = 0;
  virtual const std::string& path() const = 0;  // e.g. "device_types.h100"
  [[noreturn]] virtual void fail(const std::string& key, const std::string& problem,
                                 const std::string& hint) const = 0;
};

// A kString parameter that holds a bandwidth or "none": bytes per second, 0 for "none" (the
// units parser rejects a zero bandwidth); a bad value fails at its source.
uint64_t optional_bandwidth_Bps(const ParamReader& r, const std::string& key);

// A typed params object and the parameters bound to its fields, with an optional hook
// that runs after every bound field is stored: derived fields (a link's rate from lanes x
// lane_rate x encoding efficiency), values that need more than one key, cross-parameter
// checks (through ParamReader::fail).
struct ParamBlock {
  std::string name;  // what the block is ("switch_frame", "nvls"): DeviceType::find asks by it
  std::vector<ParamSpec> specs;
  std::function<std::any()> make;           // a fresh object, every field zeroed
  std::function<void*(std::any&)> address;  // the object inside, as ParamSpec::assign takes it
  std::function<void(std::any& object, const ParamReader& values)> resolve = {};
};

template <class T>
ParamBlock param_block(std::string name, std::vector<ParamSpec> specs,
                       std::function<void(T&, const ParamReader&)> resolve = {}) {
  ParamBlock b;
  b.name = std::move(name);
  b.specs = std::move(specs);
  b.make = [] { return std::any(T{}); };
  b.address = [](std::any& o) -> void* { return std::any_cast<T>(&o); };
  if (resolve)
    b.resolve = [resolve](std::any& o, const ParamReader& r) { resolve(std::any_cast<T&>(o), r); };
  return b;
}

// The value of a default as a parser of user input would give it (quantities with their
// units, "[1, 2]" for int lists); throws InternalError if the default does not parse.
ParamValue default_value(const ParamSpec& spec);

// Stores every default of `specs` through its binding into `object` (required
// parameters, which have no default, are left as they are).
void apply_defaults(const std::vector<ParamSpec>& specs, void* object);

// T with every bound parameter of `block` at its declared default: for benches and
// tests that build a model without a config.
template <class T>
T defaults(const ParamBlock& block) {
  std::any o = block.make();
  T* t = std::any_cast<T>(&o);
  if (!t) throw InternalError("defaults: the block's params type is not the one asked for");
  apply_defaults(block.specs, t);
  return *t;
}

}  // namespace fabricsim
