#include "models/ualink/switch_class.h"

#include "models/core/types.h"
#include "models/core/units.h"
#include "models/switch/switch_kind.h"

namespace fabricsim {

PortToPort port_to_port(const SwitchParams& sw, const LinkParams& link) {
  // What a receiver takes in before it can use a packet (stream framing: one codeword).
  const uint64_t bytes = link.framing->receive_unit_bytes(link.packet_payload);
  PortToPort b;
  b.codeword_ps = transfer_ps(bytes, link.rate_bps);
  b.crossbar_ps = transfer_ps(bytes, uint64_t(double(link.rate_bps) * sw.speedup));
  b.total_ps = b.codeword_ps + sw.pipeline_latency_ps + b.crossbar_ps;
  return b;
}

uint64_t ualink_class_limit_ps(const std::string& cls) {
  if (cls == "25.6T") return 150'000;
  if (cls == "51.2T") return 200'000;
  if (cls == "102.4T") return 250'000;
  return UINT64_MAX;
}

namespace {

// The unloaded port-to-port latency on every attached link must meet the class limit.
void check_class(const DeviceCheck& c, const std::any& params) {
  const std::string& cls = std::any_cast<const UALinkClassParams&>(params).cls;
  if (cls == "none") return;
  const SwitchParams& sw = c.type().get<SwitchParams>();
  for (const DeviceCheck::Attached& a : c.links()) {
    const PortToPort b = port_to_port(sw, a.link);
    const uint64_t limit = ualink_class_limit_ps(cls);
    const bool inclusive = cls == "25.6T";  // "<= 150 ns"; the others are "<"
    if (b.total_ps > limit || (!inclusive && b.total_ps == limit)) {
      const uint64_t room = limit - (inclusive ? 0 : 1) - b.codeword_ps - b.crossbar_ps;
      c.fail_param("pipeline_latency",
                   "port-to-port latency " + format_time_ps(b.total_ps) + " on link type " +
                       a.link_type + " (codeword " + format_time_ps(b.codeword_ps) +
                       " + pipeline_latency " + format_time_ps(sw.pipeline_latency_ps) +
                       " + crossbar " + format_time_ps(b.crossbar_ps) +
                       ") exceeds the UALink " + cls + " class limit of " +
                       (inclusive ? "<= " : "< ") + format_time_ps(limit),
                   b.codeword_ps + b.crossbar_ps < limit
                       ? "lower pipeline_latency to at most " + format_time_ps(room)
                       : "the link's codeword alone is too slow for this class");
    }
  }
}

}  // namespace

SwitchFeatureKind ualink_class_feature() {
  SwitchFeatureKind f;
  f.name = "ualink_class";
  f.params = param_block<UALinkClassParams>(
      "ualink_class",
      {bind(choice("ualink_class", {"none", "25.6T", "51.2T", "102.4T"}, "none",
                   "UALink switch class: its published port-to-port latency limit (<=150ns, "
                   "<200ns, <250ns) is checked against codeword + pipeline_latency + crossbar "
                   "time on every attached link (docs/models.md \"UALink 1.0\")."),
            &UALinkClassParams::cls)});
  f.check = check_class;
  return f;
}

}  // namespace fabricsim
