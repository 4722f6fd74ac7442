#include "models/pcie/host_path.h"

#include <algorithm>

#include "models/core/errors.h"

namespace fabricsim {

HostPath::HostPath(const HostPathParams& p)
    : p_(p),
      up_(p.rc_bps ? p.rc_bps : 1),
      down_(p.rc_bps ? p.rc_bps : 1),
      mem_(p.memory_bps ? p.memory_bps : 1) {
  FABRICSIM_ASSERT(!p.enabled || p.rc_bps > 0, "host path: root complex bandwidth is zero");
  FABRICSIM_ASSERT(!p.enabled || p.p2p || p.memory_bps > 0, "host path: memory bandwidth is zero");
}

uint64_t HostPath::forward(uint64_t t, uint64_t bytes) {
  uint64_t s = std::max(t, up_free_);
  uint64_t d = up_.take_ps(bytes);
  up_free_ = s + d;
  up_busy_ += d;
  uint64_t ready = up_free_;
  if (!p_.p2p) {
    // Written to memory once the data is up; read back right after the write.
    s = std::max(ready, mem_free_);
    const uint64_t w = mem_.take_ps(bytes);
    const uint64_t r = mem_.take_ps(bytes);
    mem_free_ = s + w + r;
    mem_busy_ += w + r;
    written_ += bytes;
    read_ += bytes;
    ready = mem_free_ + p_.memory_latency_ps;
  }
  s = std::max(ready, down_free_);
  d = down_.take_ps(bytes);
  down_free_ = s + d;
  down_busy_ += d;
  forwarded_ += bytes;
  return down_free_;
}

void HostPath::reset() {
  up_ = Serializer(up_.rate_bps());
  down_ = Serializer(down_.rate_bps());
  mem_ = Serializer(mem_.rate_bps());
  up_free_ = down_free_ = mem_free_ = 0;
}

nlohmann::json HostPath::stats_json(uint64_t now_ps) const {
  auto util = [&](uint64_t busy) { return now_ps ? double(busy) / double(now_ps) : 0.0; };
  nlohmann::json j;
  j["p2p"] = p_.p2p;
  j["bytes_forwarded"] = forwarded_;
  j["up_busy_ps"] = up_busy_;
  j["up_utilisation"] = util(up_busy_);
  j["down_busy_ps"] = down_busy_;
  j["down_utilisation"] = util(down_busy_);
  j["memory_bytes_written"] = written_;
  j["memory_bytes_read"] = read_;
  j["memory_busy_ps"] = mem_busy_;
  j["memory_utilisation"] = util(mem_busy_);
  return j;
}

}  // namespace fabricsim
