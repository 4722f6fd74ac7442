// The `simulation:` section: run-wide settings.
#include "fabrics/systems/system_spec.h"
#include "models/core/units.h"

namespace fabricsim {

const ParamBlock& simulation_params() {
  using K = ParamKind;
  using S = SimulationParams;
  static const ParamBlock block = param_block<S>(
      "simulation",
      {bind(param("aggregate_bytes", K::kBytes, "0B", "bytes",
                  "Largest payload moved as one simulated transaction: a run of back-to-back "
                  "packets of one message whose wire time, credits and statistics stay "
                  "byte-exact. 0B or one packet's payload = per-packet simulation. Every "
                  "link's rx_buffer must hold one such transaction.",
                  0),
            &S::aggregate_bytes),
       bind(param("aggregate_min_message", K::kBytes, "0B", "bytes",
                  "Messages smaller than this always move packet by packet, so latency-bound "
                  "traffic (small collectives, acks, flags) keeps per-packet interleaving; "
                  "larger ones are aggregated (bandwidth-bound, where aggregation converges). "
                  "0B: aggregate every message.",
                  0),
            &S::aggregate_min_message),
       bind(param("aggregate_min_group_message", K::kBytes, "1TiB", "bytes",
                  "In-switch (NVLS) group messages of at least this size are aggregated "
                  "even below aggregate_min_message (the smaller of the two applies): "
                  "NCCL's NVLS chunks are 16-128 KiB, so large NVLS collectives would "
                  "otherwise run packet by packet (docs/architecture.md, \"Aggregation\").",
                  0),
            &S::aggregate_min_group_message),
       bind(param("time_limit", K::kTime, "60s", "simulated time",
                  "Stop with an error if the workload has not finished by this simulated time.",
                  1),
            &S::time_limit_ps),
       bind(param("functional", K::kBool, "false", "",
                  "Carry real numbers through the collectives and check every rank's result "
                  "exactly (for sizes up to 64MiB)."),
            &S::functional)},
      [](S& s, const ParamReader& r) {
        if (s.aggregate_bytes > (1ull << 30))
          r.fail("aggregate_bytes",
                 "aggregate_bytes " + format_bytes(s.aggregate_bytes) +
                     " is larger than the 1GiB a transaction can carry",
                 "use 64KiB or less");
      });
  return block;
}

}  // namespace fabricsim
