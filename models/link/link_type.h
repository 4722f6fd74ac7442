// Link types for configs: the parameters of a `link_types:` entry, bound to LinkParams, and
// the seam through which link framings plug in. A framing (NVLink flits, frames with a
// header and gap, the UALink stream) declares its own parameters, turns them into the
// link's framing and checks what only it can judge. Plain C++.
#pragma once
#include <any>
#include <functional>
#include <string>
#include <vector>

#include "models/core/param_spec.h"
#include "models/core/registry.h"
#include "models/link/link_params.h"

namespace fabricsim {

// Protocol names a link carries and a port speaks.
const std::vector<std::string>& link_protocols();

struct FramingKind {
  std::string name;  // a link type's `framing:` value
  ParamBlock params;  // its keys, written in the link type
  // Sets link.framing from the params object.
  std::function<void(LinkParams& link, const std::any& params)> apply;
  // Checks of the link type that only this framing can judge (optional); `params` is its
  // params object.
  std::function<void(const LinkParams& link, const std::any& params, const ParamReader& values)>
      check = {};
};

Registry<FramingKind>& framings();

// The link type's own parameters (everything but the framing's), bound to LinkParams; its
// hook derives rate_bps = lanes x lane_rate x encoding_efficiency.
const ParamBlock& link_params();
// Every key of a link type in the order `describe link` lists them: the link's head
// (protocol .. framing), every registered framing's keys, then the rest of the link's.
std::vector<ParamSpec> link_type_specs();
// Checks of a link type whose framing is set: the receive buffer holds one packet.
void check_link(const LinkParams& link, const ParamReader& values);

// A link without link-level flow control (Ethernet: PFC, not credits, stops a sender)
// still runs on the port's credits: its receive buffer must cover the credit round trip
// (2 x latency + the receiver's pipeline, at the link rate) plus one packet, so that the
// credits never stop the sender. The least rx_buffer that does.
uint64_t credit_free_rx_buffer(const LinkParams& link, uint64_t receiver_pipeline_ps);

}  // namespace fabricsim
