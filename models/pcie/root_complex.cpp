#include "models/pcie/root_complex.h"

#include "models/core/errors.h"
#include "models/core/limits.h"
#include "models/switch/switch_kind.h"

namespace fabricsim {

uint64_t RootComplex::ready_ps(int, int, const Packet& p, uint64_t t_ps) {
  return host_.forward(t_ps, p.payload_bytes);
}

void RootComplex::reset_dynamic_state() {
  // Nothing is on the host path once the switch is idle: every transaction it forwarded
  // has come down and left (the sweep resets only when no packet is in flight).
  FABRICSIM_ASSERT(host_.idle_at() <= SwitchFrame::now(),
                   frame().display_name() + ": host path reset while it is busy");
  host_.reset();
}

void RootComplex::add_stats(nlohmann::json& j, uint64_t now_ps) const {
  j["host_path"] = host_.stats_json(now_ps);
}

// ---------------------------------------------------------------------------------------
// The host path as a switch feature, and the root complex: the switch frame with it (every
// forwarded transaction goes up to the host and, without peer-to-peer, through host memory).


SwitchFeatureKind host_path_feature() {
  using K = ParamKind;
  using H = HostPathParams;
  SwitchFeatureKind f;
  f.name = "host_path";
  f.params = param_block<H>(
      "host_path",
      {bind(param("p2p", K::kBool, "false", "",
                  "true: peer traffic is forwarded port to port through the root complex (up "
                  "and down its data path once). false: it bounces through host memory (up, "
                  "written to memory, read back, down), as when GPUs cannot write to each "
                  "other."),
            &H::p2p),
       bind(param("root_complex_bandwidth", K::kBandwidth, "", "GB/s (per direction)",
                  "Data path between the root ports and the host, per direction (ports -> "
                  "host, host -> ports); every forwarded byte crosses it once each way.",
                  limits::kMinDeviceBandwidthBps, limits::kMaxDeviceBandwidthBps),
            &H::rc_bps),
       bind(param("host_memory_bandwidth", K::kBandwidth, "", "GB/s (reads + writes)",
                  "Host memory (DRAM) bandwidth shared by reads and writes, e.g. 12 DDR5-4800 "
                  "channels x 38.4 GB/s = 460.8GB/s; a bounced byte is written once and read "
                  "once (p2p: false).",
                  limits::kMinDeviceBandwidthBps, limits::kMaxDeviceBandwidthBps),
            &H::memory_bps),
       bind(param("memory_latency", K::kTime, "100ns", "ns",
                  "Host memory read latency added to every bounced transaction (p2p: false).",
                  0, limits::kMaxLatencyPs),
            &H::memory_latency_ps)},
      [](H& h, const ParamReader&) { h.enabled = true; });
  f.create = [](const std::any& p) -> std::unique_ptr<SwitchFeature> {
    return std::make_unique<RootComplex>(std::any_cast<const H&>(p));
  };
  return f;
}

DeviceKind root_complex_kind() {
  return switch_frame_kind(
      "root_complex",
      "A PCIe root complex (in `device_types:`): the switch frame whose every transfer also "
      "crosses the host data path and, with p2p: false, host memory (write + read).",
      {"ualink_class", "nvls", "host_path"});
}

}  // namespace fabricsim
