// UALink switch classes: the published port-to-port latency limit of each class, and the
// unloaded port-to-port latency of a switch on a link, checked against it at load time
// (the `ualink_class` switch feature, models/ualink/switch_class.cpp).
#pragma once
#include <cstdint>
#include <string>

#include "models/link/link_params.h"
#include "models/switch/switch_params.h"

namespace fabricsim {

// Unloaded port-to-port latency of a switch on a stream-framed (UALink) link, from the
// first bit of a packet's codeword at the ingress pin to the first bit of its codeword at
// the egress pin: the whole codeword is received and CRC-checked (store and forward of
// one DL flit), the ingress pipeline, and the crossbar moving at most one codeword's
// bytes at link rate x speedup. An upper bound for any packet that fits one codeword.
// On other framings the unit is one packet of the link's payload.
struct PortToPort {
  uint64_t codeword_ps = 0, crossbar_ps = 0, total_ps = 0;
};
PortToPort port_to_port(const SwitchParams& sw, const LinkParams& link);

// Published UALink switch port-to-port limits: 25.6T <= 150 ns, 51.2T < 200 ns,
// 102.4T < 250 ns (UALink Consortium webinar Q&A, 2025); UINT64_MAX for "none".
uint64_t ualink_class_limit_ps(const std::string& cls);

struct UALinkClassParams {
  std::string cls;  // "none", "25.6T", "51.2T", "102.4T"
};

}  // namespace fabricsim
