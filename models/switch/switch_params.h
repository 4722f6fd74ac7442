// The switch frame's own parameters (declared in models/switch/switch_kind.cpp, defaults
// there); features (models/switch/feature.h) have their own.
#pragma once
#include <cstdint>
#include <string>


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
};

}  // namespace fabricsim
