#include "models/core/device_kind.h"

namespace fabricsim {

const PortGroup& DeviceType::group_of(int port) const {
  int first = 0;
  for (const PortGroup& g : port_groups) {
    if (port < first + g.count) return g;
    first += g.count;
  }
  throw InternalError("device type '" + name + "' has no port " + std::to_string(port));
}

int DeviceType::ports_with_role(const std::string& role) const {
  int n = 0;
  for (const PortGroup& g : port_groups)
    if (g.role == role) n += g.count;
  return n;
}

int DeviceType::block_index(const std::string& block_name) const {
  for (size_t i = 0; i < kind->params.size(); ++i)
    if (kind->params[i].name == block_name) return int(i);
  return -1;
}

Registry<DeviceKind>& device_kinds() {
  static Registry<DeviceKind> r("device kind");
  return r;
}

}  // namespace fabricsim
