// The switch frame's parameters (declared in models/switch/switch_kind.cpp; defaults there).
#pragma once
#include <cstdint>
#include <string>

#include "models/switch/host_path.h"

namespace fabricsim {

struct SwitchParams {
  std::string protocol;               // of every port
  int ports = 0;
  uint64_t pipeline_latency_ps = 0;   // ingress: arrival to eligible for the crossbar
  std::string input_queues;           // "voq" | "fifo"
  std::string arbiter;                // see arbiter_names()
  int islip_iterations = 0;
  double speedup = 0;                 // crossbar rate / output link rate
  uint64_t egress_buffer_bytes = 0;   // per output; the crossbar fills it while below this
  std::string route_select;           // "adaptive" (least queued) | "hash" (entropy)
  HostPathParams host;                // root complex: every transfer also crosses the host
  bool nvls = false;                    // in-switch reduction and multicast
  uint64_t nvls_reduce_Bps = 0;         // reduction engine: input bytes per second
  uint64_t nvls_multicast_Bps = 0;      // multicast engine: input bytes per second (0: no limit)
};

}  // namespace fabricsim
