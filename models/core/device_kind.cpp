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

const ParamBlock& power_params() {
  using K = ParamKind;
  static const ParamBlock block = param_block<PowerParams>(
      "power",
      {bind(param("static_power", K::kReal, "0", "W",
                  "Power drawn while the system runs, whatever the traffic (ASIC leakage, "
                  "clocks, fans' share); 0: not modelled.",
                  0.0, 100000.0),
            &PowerParams::static_power_w),
       bind(param("energy_per_bit", K::kReal, "0", "pJ/bit",
                  "Energy per wire bit the device sends out of its ports (forwarding: "
                  "buffers, crossbar, lookup), on top of the links' own.",
                  0.0, 1000.0),
            &PowerParams::energy_pj_per_bit)});
  return block;
}

DevicePower power_from_block(const DeviceType& t) {
  const PowerParams* p = t.find<PowerParams>("power");
  return p ? DevicePower{p->static_power_w, p->energy_pj_per_bit} : DevicePower{};
}

Registry<DeviceKind>& device_kinds() {
  static Registry<DeviceKind> r("device kind");
  return r;
}

}  // namespace fabricsim
