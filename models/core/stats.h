// Statistics: plain counters owned by the components, registered under hierarchical
// names (the names the user wrote in YAML, e.g. "nvswitch0.port[3]") for output.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "models/core/types.h"

#include <nlohmann/json.hpp>

namespace fabricsim {

// Time-weighted queue depth: max and time-average of a level that changes at events.
class LevelStat {
 public:
  void set(uint64_t now_ps, uint64_t level) {
    integral_ += u128(level_) * (now_ps - last_ps_);
    last_ps_ = now_ps;
    level_ = level;
    if (level > max_) max_ = level;
  }
  uint64_t level() const { return level_; }
  uint64_t max() const { return max_; }
  double average(uint64_t now_ps) const {
    if (now_ps == 0) return 0.0;
    u128 total = integral_ + u128(level_) * (now_ps - last_ps_);
    return double(total) / double(now_ps);
  }

 private:
  u128 integral_ = 0;
  uint64_t last_ps_ = 0;
  uint64_t level_ = 0;
  uint64_t max_ = 0;
};

// Components register a dump function under their name; output is sorted by name, so it
// is deterministic.
class StatsRegistry {
 public:
  using DumpFn = std::function<nlohmann::json(uint64_t now_ps)>;
  void add(const std::string& name, DumpFn fn);
  nlohmann::json dump(uint64_t now_ps) const;

 private:
  std::map<std::string, DumpFn> entries_;
};

}  // namespace fabricsim
