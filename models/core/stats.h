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

// Optional observer of a level (fabrics/sim/observe.h: time series and histograms): a
// switch port's egress level (models/switch/switch.h, Switch::set_level).
class LevelProbe {
 public:
  virtual ~LevelProbe() = default;
  // The level was `level` (bytes) over [from_ps, to_ps).
  virtual void held(uint64_t from_ps, uint64_t to_ps, uint64_t level) = 0;
};

// Time-weighted queue depth: max and time-average of a level that changes at events.
// Windows (e.g. one row of a sweep) read the integral at their ends and take the window's
// maximum; the whole-run maximum folds every window's in.
class LevelStat {
 public:
  void set(uint64_t now_ps, uint64_t level) {
    integral_ += u128(level_) * (now_ps - last_ps_);
    last_ps_ = now_ps;
    level_ = level;
    if (level > window_max_) window_max_ = level;
  }
  uint64_t level() const { return level_; }
  uint64_t max() const { return window_max_ > max_ ? window_max_ : max_; }
  double average(uint64_t now_ps) const {
    if (now_ps == 0) return 0.0;
    return double(integral(now_ps)) / double(now_ps);
  }
  // Integral of the level over [0, now_ps), in byte x ps.
  u128 integral(uint64_t now_ps) const { return integral_ + u128(level_) * (now_ps - last_ps_); }
  // The maximum since the previous call (or the start); starts a new window at the
  // current level.
  uint64_t take_window_max() {
    const uint64_t m = window_max_;
    if (m > max_) max_ = m;
    window_max_ = level_;
    return m;
  }
  uint64_t last_change_ps() const { return last_ps_; }

 private:
  u128 integral_ = 0;
  uint64_t last_ps_ = 0;
  uint64_t level_ = 0;
  uint64_t max_ = 0;         // over closed windows
  uint64_t window_max_ = 0;  // over the current window
};

// Sets `l` to `level` at `now_ps`, first telling `probe` (if any) of the level it held
// since its last change: how an observed level changes (a switch port's egress level).
inline void set_observed(LevelStat& l, LevelProbe* probe, uint64_t now_ps, uint64_t level) {
  if (probe) probe->held(l.last_change_ps(), now_ps, l.level());
  l.set(now_ps, level);
}

// Components register a dump function under their name; output is sorted by name, so it
// is deterministic.
class StatsRegistry {
 public:
  using DumpFn = std::function<nlohmann::json(uint64_t now_ps)>;
  void add(const std::string& name, DumpFn fn);
  nlohmann::json dump(uint64_t now_ps) const;
  // The dump function registered under `name`, or nullptr: for writers that put out one
  // entry at a time instead of the whole dump (results.json on a large fabric).
  const DumpFn* find(const std::string& name) const {
    const auto it = entries_.find(name);
    return it == entries_.end() ? nullptr : &it->second;
  }

 private:
  std::map<std::string, DumpFn> entries_;
};

}  // namespace fabricsim
