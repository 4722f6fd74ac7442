#include "models/core/units.h"

#include "models/core/errors.h"

#include <cctype>
#include <cstddef>
#include <limits>
#include <optional>
#include <vector>

namespace fabricsim {

UnitError::UnitError(const std::string& problem, const std::string& hint)
    : std::runtime_error(hint.empty() ? problem : problem + "; " + hint),
      problem_(problem),
      hint_(hint) {}

namespace {

__extension__ typedef unsigned __int128 u128;

// Limits that keep mantissa * unit factor inside 128 bits: 10^24 * 2^43 < 2^123.
constexpr int kMaxSignificantDigits = 24;
constexpr int kMaxDecimals = 30;
constexpr uint64_t kMaxFactor = uint64_t{1} << 43;

constexpr uint64_t kKilo = 1000ULL;
constexpr uint64_t kMega = 1000ULL * kKilo;
constexpr uint64_t kGiga = 1000ULL * kMega;
constexpr uint64_t kTera = 1000ULL * kGiga;
constexpr uint64_t kKibi = 1ULL << 10;
constexpr uint64_t kMebi = 1ULL << 20;
constexpr uint64_t kGibi = 1ULL << 30;
constexpr uint64_t kTebi = 1ULL << 40;

// What kind of quantity is being parsed, for messages.
struct Dimension {
  const char* name;          // "bandwidth"
  const char* base_unit;     // "bits per second"
  const char* example;       // "400Gb/s"
  const char* default_unit;  // appended to a bare number in the "needs a unit" hint
  const char* units_hint;    // which units are accepted
  const char* maximum;       // the largest value, in words
  bool zero_allowed;
};

const Dimension kBandwidth{"bandwidth", "bits per second", "400Gb/s", "Gb/s",
                           "use b/s or B/s (also bps/Bps) with an optional k, M, G, T, Ki, "
                           "Mi, Gi or Ti prefix, e.g. 400Gb/s or 50GB/s",
                           "about 18.4Eb/s (2^64-1 b/s)", false};
const Dimension kTime{"time", "picoseconds", "150ns", "ns", "use ps, ns, us, ms or s, e.g. 150ns",
                      "about 213 days (2^64-1 ps)", true};
const Dimension kSize{"size", "bytes", "4KiB", "B",
                      "use B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers "
                      "of 1024), e.g. 4KiB",
                      "about 16EiB (2^64-1 bytes)", true};

std::string quoted(const std::string& s) { return "'" + s + "'"; }

std::string trim(const std::string& s) {
  size_t b = 0;
  size_t e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A decimal number split off the front of a quantity: value = mantissa / 10^decimals.
struct Number {
  u128 mantissa = 0;
  int decimals = 0;
  std::string text;  // the digits as written
  std::string unit;  // the rest, surrounding whitespace removed
};

Number split_number(const std::string& original, const Dimension& dim) {
  const std::string s = trim(original);
  if (s.empty()) {
    throw UnitError(std::string("empty ") + dim.name, std::string("e.g. ") + dim.example);
  }
  const std::string unsigned_low = lower(s[0] == '-' || s[0] == '+' ? s.substr(1) : s);
  if (unsigned_low.rfind("inf", 0) == 0 || unsigned_low.rfind("nan", 0) == 0) {
    throw UnitError(quoted(original) + " is not a finite " + dim.name,
                    std::string("e.g. ") + dim.example);
  }
  size_t i = 0;
  const bool negative = s[0] == '-';
  if (negative) ++i;
  const size_t int_begin = i;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  const std::string int_digits = s.substr(int_begin, i - int_begin);
  std::string frac_digits;
  if (int_digits.empty()) {
    throw UnitError(quoted(original) + " is not a " + dim.name,
                    std::string("expected a number followed by a unit, e.g. ") + dim.example);
  }
  if (i < s.size() && s[i] == '.') {
    const size_t frac_begin = ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    frac_digits = s.substr(frac_begin, i - frac_begin);
    if (frac_digits.empty()) {
      throw UnitError("malformed number in " + quoted(original),
                      std::string("write digits after the decimal point, e.g. ") + dim.example);
    }
  }
  if (i < s.size() && (s[i] == '.' || s[i] == ',')) {
    throw UnitError("malformed number in " + quoted(original),
                    std::string("use one '.' as decimal point and no digit separators, e.g. ") +
                        dim.example);
  }
  if (negative) {
    throw UnitError(std::string("a ") + dim.name +
                        (dim.zero_allowed ? " must not be negative" : " must be positive") +
                        ", got " + quoted(original),
                    std::string("e.g. ") + dim.example);
  }

  Number n;
  n.text = s.substr(0, i);
  n.unit = trim(s.substr(i));
  while (!frac_digits.empty() && frac_digits.back() == '0') frac_digits.pop_back();
  const std::string digits = int_digits + frac_digits;
  const size_t first_nonzero = digits.find_first_not_of('0');
  const size_t significant = first_nonzero == std::string::npos ? 0 : digits.size() - first_nonzero;
  if (significant > static_cast<size_t>(kMaxSignificantDigits) ||
      frac_digits.size() > static_cast<size_t>(kMaxDecimals)) {
    throw UnitError(quoted(original) + " has too many digits",
                    "use at most " + std::to_string(kMaxSignificantDigits) +
                        " significant digits and " + std::to_string(kMaxDecimals) + " decimals");
  }
  for (char c : digits) n.mantissa = n.mantissa * 10 + static_cast<unsigned>(c - '0');
  n.decimals = static_cast<int>(frac_digits.size());
  return n;
}

// number * factor as an exact whole count of base units, or a UnitError.
uint64_t scale_exact(const Number& n, uint64_t factor, const std::string& original,
                     const Dimension& dim, std::string (*format)(uint64_t)) {
  FABRICSIM_ASSERT(factor != 0 && factor <= kMaxFactor, "unit factor out of range");
  u128 divisor = 1;
  for (int k = 0; k < n.decimals; ++k) divisor *= 10;
  const u128 product = n.mantissa * factor;
  const u128 whole = product / divisor;
  const u128 max = std::numeric_limits<uint64_t>::max();
  if (whole > max || (whole == max && product % divisor != 0)) {
    throw UnitError(quoted(original) + " is too large",
                    std::string("the largest ") + dim.name + " is " + dim.maximum);
  }
  if (product % divisor != 0) {
    const auto below = static_cast<uint64_t>(whole);
    const std::string above = format(below + 1);
    throw UnitError(quoted(original) + " is not a whole number of " + dim.base_unit,
                    "round it, e.g. " +
                        (below == 0 && !dim.zero_allowed ? above : format(below) + " or " + above));
  }
  const auto value = static_cast<uint64_t>(whole);
  if (value == 0 && !dim.zero_allowed) {
    throw UnitError(std::string("a ") + dim.name + " must be positive, got " + quoted(original),
                    std::string("e.g. ") + dim.example);
  }
  return value;
}

[[noreturn]] void throw_missing_unit(const Number& n, const std::string& original,
                                     const Dimension& dim) {
  throw UnitError(std::string("a ") + dim.name + " needs a unit, got " + quoted(original),
                  "e.g. " + n.text + dim.default_unit);
}

[[noreturn]] void throw_unknown_unit(const Number& n, const std::string& original,
                                     const Dimension& dim) {
  throw UnitError(std::string("unknown ") + dim.name + " unit " + quoted(n.unit) + " in " +
                      quoted(original),
                  dim.units_hint);
}

// "", "k", "M", "Gi", ... -> multiplier. The prefix letter is case-insensitive and 'm'
// means mega: configs never need milli-bits or milli-bytes.
std::optional<uint64_t> prefix_factor(const std::string& prefix) {
  if (prefix.empty()) return 1;
  if (prefix.size() > 2 || (prefix.size() == 2 && prefix[1] != 'i')) return std::nullopt;
  const bool binary = prefix.size() == 2;
  switch (std::tolower(static_cast<unsigned char>(prefix[0]))) {
    case 'k': return binary ? kKibi : kKilo;
    case 'm': return binary ? kMebi : kMega;
    case 'g': return binary ? kGibi : kGiga;
    case 't': return binary ? kTebi : kTera;
    default: return std::nullopt;
  }
}

// "GB" -> bytes per unit; "Gb" (bits) -> nullopt with *in_bits set.
std::optional<uint64_t> amount_factor(const std::string& unit, bool& in_bits) {
  in_bits = false;
  if (unit.empty()) return std::nullopt;
  const char last = unit.back();
  if (last != 'b' && last != 'B') return std::nullopt;
  const std::optional<uint64_t> prefix = prefix_factor(unit.substr(0, unit.size() - 1));
  if (!prefix) return std::nullopt;
  in_bits = last == 'b';
  return *prefix;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Shows value / unit exactly with at most three decimals, if value >= unit and that is
// possible: (12345, 1000, "ns") -> "12.345ns".
std::optional<std::string> exact_in(uint64_t value, uint64_t unit, const char* suffix) {
  if (value < unit) return std::nullopt;
  const uint64_t rest = value % unit;
  if (rest * 1000 % unit != 0) return std::nullopt;
  std::string out = std::to_string(value / unit);
  if (rest != 0) {
    std::string frac = std::to_string(rest * 1000 / unit);
    frac.insert(0, 3 - frac.size(), '0');
    while (frac.back() == '0') frac.pop_back();
    out += "." + frac;
  }
  return out + suffix;
}

struct NamedUnit {
  uint64_t factor;
  const char* suffix;
};

std::string format_largest(uint64_t value, const std::vector<NamedUnit>& units) {
  for (const NamedUnit& u : units) {
    if (std::optional<std::string> s = exact_in(value, u.factor, u.suffix)) return *s;
  }
  return {};
}

}  // namespace

uint64_t parse_bandwidth_bps(const std::string& s) {
  const Number n = split_number(s, kBandwidth);
  if (n.unit.empty()) throw_missing_unit(n, s, kBandwidth);
  bool in_bits = false;
  if (!ends_with(n.unit, "/s") && !ends_with(n.unit, "ps")) {
    if (amount_factor(n.unit, in_bits)) {
      throw UnitError(quoted(s) + " is an amount of data, not a bandwidth",
                      "add /s, e.g. " + n.text + n.unit + "/s");
    }
    throw_unknown_unit(n, s, kBandwidth);
  }
  const std::optional<uint64_t> factor =
      amount_factor(n.unit.substr(0, n.unit.size() - 2), in_bits);
  if (!factor) throw_unknown_unit(n, s, kBandwidth);
  return scale_exact(n, *factor * (in_bits ? 1 : 8), s, kBandwidth, format_bandwidth_bps);
}

uint64_t parse_time_ps(const std::string& s) {
  static const std::vector<std::pair<std::string, uint64_t>> kUnits = {
      {"ps", 1},
      {"ns", kKilo},
      {"us", kMega},
      {"\xC2\xB5s", kMega},  // U+00B5 MICRO SIGN
      {"\xCE\xBCs", kMega},  // U+03BC GREEK SMALL LETTER MU
      {"ms", kGiga},
      {"s", kTera},
  };
  const Number n = split_number(s, kTime);
  if (n.unit.empty()) throw_missing_unit(n, s, kTime);
  for (const auto& [name, factor] : kUnits) {
    if (n.unit == name) return scale_exact(n, factor, s, kTime, format_time_ps);
  }
  throw_unknown_unit(n, s, kTime);
}

uint64_t parse_bytes(const std::string& s) {
  const Number n = split_number(s, kSize);
  if (n.unit.empty()) throw_missing_unit(n, s, kSize);
  bool in_bits = false;
  const std::optional<uint64_t> factor = amount_factor(n.unit, in_bits);
  if (!factor) throw_unknown_unit(n, s, kSize);
  if (in_bits) {
    std::string as_bytes = n.unit;
    as_bytes.back() = 'B';
    throw UnitError(quoted(s) + " is in bits (b); a size is in bytes (B)",
                    "e.g. " + n.text + as_bytes);
  }
  return scale_exact(n, *factor, s, kSize, format_bytes);
}

std::string format_bytes(uint64_t bytes) {
  if (bytes == 0) return "0B";
  const std::string s =
      format_largest(bytes, {{kTebi, "TiB"}, {kGibi, "GiB"}, {kMebi, "MiB"}, {kKibi, "KiB"}});
  return s.empty() ? std::to_string(bytes) + "B" : s;
}

std::string format_time_ps(uint64_t ps) {
  if (ps == 0) return "0ns";
  return format_largest(ps, {{kTera, "s"}, {kGiga, "ms"}, {kMega, "us"}, {kKilo, "ns"}, {1, "ps"}});
}

std::string format_bandwidth_bps(uint64_t bps) {
  if (bps == 0) return "0b/s";
  // SI bits unless whole bytes in a binary unit read shorter: 50GiB/s, not 429496729.6kb/s.
  const std::string bits = format_largest(
      bps, {{kTera, "Tb/s"}, {kGiga, "Gb/s"}, {kMega, "Mb/s"}, {kKilo, "kb/s"}, {1, "b/s"}});
  if (bps % 8 != 0) return bits;
  const std::string bytes = format_largest(
      bps / 8, {{kTebi, "TiB/s"}, {kGibi, "GiB/s"}, {kMebi, "MiB/s"}, {kKibi, "KiB/s"}});
  return !bytes.empty() && bytes.size() < bits.size() ? bytes : bits;
}

std::string format_bandwidth_Bps(uint64_t bps) {
  if (bps == 0 || bps % 8 != 0) return format_bandwidth_bps(bps);
  const std::string s = format_largest(
      bps / 8, {{kTera, "TB/s"}, {kGiga, "GB/s"}, {kMega, "MB/s"}, {kKilo, "kB/s"}, {1, "B/s"}});
  return s.empty() ? format_bandwidth_bps(bps) : s;
}

}  // namespace fabricsim
