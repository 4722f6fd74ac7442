// The switch frame's own parameters (declared in models/switch/switch_kind.cpp, defaults
// there); features (models/switch/feature.h) have their own.
#pragma once
#include <cstdint>
#include <string>
#include <vector>


namespace fabricsim {

struct SwitchParams {
  std::string protocol;               // of every port
  int ports = 0;
  uint64_t pipeline_latency_ps = 0;   // ingress: arrival to eligible for the crossbar
  std::string input_queues;           // "voq" | "fifo" | "output" (output-queued: no
                                      // input queues, no crossbar; every arrival enters
                                      // its egress queue after the ingress pipeline)
  std::string arbiter;                // see arbiter_names()
  int islip_iterations = 0;
  double speedup = 0;                 // crossbar rate / output link rate
  uint64_t egress_buffer_bytes = 0;   // per output; the crossbar fills it while below this
  std::string route_select;           // "adaptive" (least queued) | "hash" (entropy)
  // Traffic classes at egress (0: one egress queue per port, as every switch without
  // them). With n > 0 each port has n class queues (Packet::tc, clamped to n - 1) plus a
  // strict-priority control queue (kUrgent packets) served first; the classes share the
  // port by strict priority (higher tc first) or deficit-weighted round robin.
  int traffic_classes = 0;
  std::string egress_scheduler;       // "strict" | "dwrr" (traffic_classes > 0)
  std::vector<int64_t> class_weights; // dwrr: weight per class (quantum = weight x dwrr_quantum)
  uint64_t dwrr_quantum_bytes = 0;
  // Run settings set by the kind when it builds the model (not YAML keys):
  uint64_t seed = 0;                  // global seed: features' and the hash's streams
  bool salted_hash = false;           // hash routing salted per switch (Rng(seed, name)), so
                                      // tiers of one fabric do not all pick alike
  std::vector<int> coords;            // the topology generator's coordinates of the switch
};

}  // namespace fabricsim
