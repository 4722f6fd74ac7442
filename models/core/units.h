// The one parser and formatter for quantities with units in configs and output.
// Values are exact integers in base units: bits per second, picoseconds, bytes.
// No SystemC here.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>

namespace fabricsim {

// A malformed or out-of-range quantity. what() is "problem; hint" with no location:
// the caller knows where the text came from and prefixes "file:line:col: key.path: ".
class UnitError : public std::runtime_error {
 public:
  UnitError(const std::string& problem, const std::string& hint);
  const std::string& problem() const { return problem_; }
  const std::string& hint() const { return hint_; }

 private:
  std::string problem_;
  std::string hint_;
};

// "400Gb/s", "100Gbps", "25GB/s", "1.5Tb/s", "50GiB/s" -> bits per second.
// 'b' is bits, 'B' is bytes; prefixes k/M/G/T are SI (any case, 'm' is mega),
// Ki/Mi/Gi/Ti are binary. Must be a positive whole number of bits per second.
uint64_t parse_bandwidth_bps(const std::string& s);

// "150ns", "0.5us", "2ms", "1s" (also "µs") -> picoseconds. Zero is allowed; the
// value must be a whole number of picoseconds.
uint64_t parse_time_ps(const std::string& s);

// "4KiB", "1.5KiB", "64B", "2MB" -> bytes. KB/kB, MB, GB, TB are SI; KiB..TiB are
// binary. The value must be a whole number of bytes.
uint64_t parse_bytes(const std::string& s);

// Formatters pick the largest unit that shows the value exactly with at most three
// decimals, so that parse_x(format_x(v)) == v for every v.
std::string format_bytes(uint64_t bytes);        // "8GiB", "1.5KiB", "1000B"
std::string format_time_ps(uint64_t ps);         // "150ns", "1.25us", "0ns"
std::string format_bandwidth_bps(uint64_t bps);  // "400Gb/s", "26.8Tb/s", "50GiB/s"
// In SI bytes per second when whole bytes show exactly ("1GB/s", "1000TB/s"), else as
// format_bandwidth_bps: for quantities documented in GB/s (memories, engines).
std::string format_bandwidth_Bps(uint64_t bps);

}  // namespace fabricsim
