// The Ethernet switch as a device kind: the one switch frame (models/switch/switch.h),
// output-queued, with traffic classes at egress, ECMP (hash of source, destination and the
// packet's entropy, salted per switch) or adaptive load balancing, and the ethernet
// feature (models/ethernet/mmu.h): shared buffer, ECN, PFC, trimming.
#include "models/core/text.h"
#include "models/link/link_type.h"
#include "models/switch/switch_kind.h"
#include "models/switch/switch_params.h"

namespace fabricsim {

namespace {

// The frame keys an Ethernet switch offers; the rest of SwitchParams is fixed here.
const ParamBlock& ethernet_frame_params() {
  using K = ParamKind;
  using S = SwitchParams;
  static const ParamBlock block = param_block<S>(
      "switch_frame",
      {bind(choice("protocol", link_protocols(), "ethernet", "Protocol of its ports."),
            &S::protocol),
       bind(param("ports", K::kInt, "", "ports", "Switch ports; unlinked ones stay unused.", 2,
                  4096),
            &S::ports),
       bind(param("pipeline_latency", K::kTime, "", "ns",
                  "Ingress pipeline: arrival of a packet's head to its egress queue "
                  "(cut-through per packet is not modelled: store and forward).",
                  0),
            &S::pipeline_latency_ps),
       bind(choice("route_select", {"hash", "adaptive"}, "hash",
                   "hash: ECMP, a hash of the packet's source, destination and entropy, salted "
                   "per switch (a spraying NIC changes the entropy per packet); adaptive: the "
                   "equal-cost output with the fewest queued bytes."),
            &S::route_select),
       bind(param("traffic_classes", K::kInt, "8", "classes",
                  "Egress queues per port for data (a packet's traffic class, clamped), plus "
                  "one strict-priority control queue (acks, NACKs, CNPs, pause frames, "
                  "trimmed headers).",
                  1, 8),
            &S::traffic_classes),
       bind(choice("egress_scheduler", {"strict", "dwrr"}, "dwrr",
                   "How the data classes share a port: strict priority (higher class first) "
                   "or deficit-weighted round robin (class_weights)."),
            &S::egress_scheduler),
       bind(param("class_weights", K::kIntList, "[1]", "",
                  "DWRR weight per class, class 0 first; classes without an entry weigh 1.",
                  1, 1000),
            &S::class_weights),
       bind(param("dwrr_quantum", K::kBytes, "9KiB", "bytes",
                  "DWRR quantum of weight 1 (at least one jumbo frame's payload).", 1),
            &S::dwrr_quantum_bytes)},
      [](S& s, const ParamReader& r) {
        if (int64_t(s.class_weights.size()) > s.traffic_classes)
          r.fail("class_weights",
                 std::to_string(s.class_weights.size()) + " weights for " +
                     std::to_string(s.traffic_classes) + " traffic classes",
                 "give at most one weight per class");
        s.input_queues = "output";
        s.speedup = 1.0;
        s.salted_hash = true;
      });
  return block;
}

}  // namespace

DeviceKind ethernet_switch_kind() {
  return switch_frame_kind(
      "ethernet_switch",
      "An Ethernet switch: output-queued frame with traffic classes (strict or DWRR), ECMP or "
      "adaptive load balancing, shared buffer with dynamic thresholds, ECN/WRED, PFC and "
      "trimming (in `device_types:`).",
      {"ethernet", "dragonfly"}, ethernet_frame_params());
}

}  // namespace fabricsim
