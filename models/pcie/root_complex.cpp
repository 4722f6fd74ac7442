#include "models/pcie/root_complex.h"

namespace fabricsim {

uint64_t RootComplex::ready_ps(int, int, const Packet& p, uint64_t t_ps) {
  return host_.forward(t_ps, p.payload_bytes);
}

void RootComplex::add_stats(nlohmann::json& j, uint64_t now_ps) const {
  j["host_path"] = host_.stats_json(now_ps);
}

}  // namespace fabricsim
