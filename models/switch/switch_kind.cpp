#include "models/switch/switch_kind.h"

#include "models/core/device_model.h"
#include "models/core/limits.h"
#include "models/link/link_type.h"
#include "models/switch/arbiter.h"
#include "models/switch/output_queued.h"
#include "models/switch/switch.h"

namespace fabricsim {

Registry<SwitchFeatureKind>& switch_features() {
  static Registry<SwitchFeatureKind> r("switch feature");
  return r;
}

const ParamBlock& switch_frame_params() {
  using K = ParamKind;
  using S = SwitchParams;
  static const ParamBlock block = param_block<S>(
      "switch_frame",
      {bind(choice("protocol", link_protocols(), "", "Protocol of its ports."), &S::protocol),
       bind(param("ports", K::kInt, "", "ports",
                  "Switch ports; unlinked ones stay unused. Above a few hundred, only for the "
                  "flow level (a rail of 10,000+ nodes as one non-blocking switch): the packet "
                  "level's input queues grow as ports^2.",
                  2, 16384),
            &S::ports),
       bind(param("pipeline_latency", K::kTime, "", "ns",
                  "Ingress pipeline: arrival of a packet's head to eligible for the crossbar.", 0,
                  limits::kMaxLatencyPs),
            &S::pipeline_latency_ps),
       bind(choice("input_queues", {"voq", "fifo"}, "voq",
                   "voq: one virtual output queue per output at every input; fifo: one queue "
                   "per input (head-of-line blocking)."),
            &S::input_queues),
       bind(choice("arbiter", arbiter_names(), "islip", "Crossbar allocator."), &S::arbiter),
       bind(param("islip_iterations", K::kInt, "1", "", "iSLIP request-grant-accept iterations.",
                  1, 16),
            &S::islip_iterations),
       bind(param("speedup", K::kReal, "1.0", "ratio", "Crossbar rate / output link rate.", 1.0,
                  8.0),
            &S::speedup),
       bind(param("egress_buffer", K::kBytes, "", "bytes (payload, per output)",
                  "Egress queue; the crossbar starts a transfer into it while it holds less "
                  "than this, so it may overshoot by one transaction.",
                  1, limits::kMaxBufferBytes),
            &S::egress_buffer_bytes),
       bind(choice("route_select", {"adaptive", "hash"}, "adaptive",
                   "Choice among equal-cost outputs: least queued bytes, or a hash of the "
                   "packet's source, destination and entropy."),
            &S::route_select)});
  return block;
}

namespace {

// The switch kind's view of one built switch, for one feature's check: the same device.
void check_features(const std::vector<std::string>& features, const DeviceCheck& c) {
  for (const std::string& f : features) {
    const SwitchFeatureKind& fk = switch_features().at(f);
    if (fk.check) fk.check(c, c.type().params.at(size_t(c.type().block_index(f))));
  }
}

}  // namespace

DeviceKind switch_frame_kind(std::string name, std::string summary,
                             std::vector<std::string> features, const ParamBlock& frame) {
  DeviceKind k;
  k.name = std::move(name);
  k.summary = std::move(summary);
  k.forwards = true;
  k.can_fail = true;
  k.params.push_back(frame);
  for (const std::string& f : features) k.params.push_back(switch_features().at(f).params);
  k.params.push_back(power_params());
  k.power = power_from_block;
  k.ports = [](const DeviceType& t) {
    const SwitchParams& sp = t.get<SwitchParams>();
    return std::vector<PortGroup>{{"fabric", sp.ports, sp.protocol}};
  };
  k.check = [features](const DeviceCheck& c) { check_features(features, c); };
  // Every input keeps a queue per output (voq) or one queue (fifo), ~48 B each before any
  // traffic, and the crossbar a request bit per (input, output), twice.
  k.model_bytes = [](const DeviceType& t) {
    const SwitchParams& sp = t.get<SwitchParams>();
    const double n = sp.ports;
    return (sp.input_queues == "voq" ? n * n : n) * 48.0 + 2 * n * (n / 8 + 32) + n * 256;
  };
  k.create = [features](const DeviceBuild& b) -> std::unique_ptr<DeviceModel> {
    Switch::Features parts;
    for (const std::string& f : features) {
      const SwitchFeatureKind& fk = switch_features().at(f);
      if (!fk.create) continue;
      if (auto part = fk.create(b.type.params.at(size_t(b.type.block_index(f)))))
        parts.push_back(std::move(part));
    }
    SwitchParams sp = b.type.get<SwitchParams>();
    sp.seed = b.run.seed;
    sp.coords = b.coords;
    if (sp.input_queues == "output")
      return std::make_unique<OutputQueuedSwitch>(b.name.c_str(), b.name, sp, b.used_ports,
                                                  std::move(parts));
    return std::make_unique<Switch>(b.name.c_str(), b.name, sp, b.used_ports, std::move(parts));
  };
  return k;
}

}  // namespace fabricsim

namespace fabricsim {

DeviceKind switch_kind() {
  return switch_frame_kind("switch",
                           "The switch frame: ingress pipeline, routing, input queues, crossbar "
                           "arbiter, egress queues (in `device_types:`).",
                           {"ualink_class", "nvls", "torus_routing"});
}

}  // namespace fabricsim
