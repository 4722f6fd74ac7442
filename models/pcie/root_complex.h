// A PCIe root complex as a switch feature (models/switch/feature.h): the switch frame
// plus the host path (host_path.h). After the crossbar, every transaction goes up to the
// host (and, p2p off, through host memory) and comes back down before its egress port
// may send it, whole (store-and-forward per transaction).
#pragma once
#include "models/pcie/host_path.h"
#include "models/switch/feature.h"

namespace fabricsim {

class RootComplex : public SwitchFeature {
 public:
  explicit RootComplex(const HostPathParams& p) : host_(p) {}

  const char* name() const override { return "root complex"; }
  unsigned hooks() const override { return kAfterCrossbar; }
  uint64_t ready_ps(int in, int out, const Packet& p, uint64_t t_ps) override;
  void add_stats(nlohmann::json& j, uint64_t now_ps) const override;
  // Independent measurements: the host path's remainders and busy-until times as when
  // built (HostPath::reset); its statistics are kept.
  void reset_dynamic_state() override;
  const HostPath& host_path() const { return host_; }

 private:
  HostPath host_;
};

}  // namespace fabricsim
