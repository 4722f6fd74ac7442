#include "models/core/stats.h"

#include "models/core/errors.h"

namespace fabricsim {

void StatsRegistry::add(const std::string& name, DumpFn fn) {
  FABRICSIM_ASSERT(!entries_.count(name), "statistics name registered twice: " + name);
  entries_.emplace(name, std::move(fn));
}

nlohmann::json StatsRegistry::dump(uint64_t now_ps) const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, fn] : entries_) out[name] = fn(now_ps);
  return out;
}

}  // namespace fabricsim
