// The `simulation:` section: run-wide settings.
#include "fabrics/systems/system_spec.h"
#include "models/core/limits.h"
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
       bind(param("time_limit", K::kTime, "60s", "simulated time",
                  "Stop with an error (exit 2) if the workload has not finished by this "
                  "simulated time.",
                  1, limits::kMaxTimePs),
            &S::time_limit_ps),
       bind(param("functional", K::kBool, "false", "",
                  "Carry real numbers through the collectives and check every rank's result "
                  "exactly (for sizes up to 64MiB)."),
            &S::functional),
       bind(param("wall_limit", K::kTime, "86400s", "wall-clock time",
                  "The most wall-clock time a run may take. A run whose estimated work "
                  "(fabricsim check prints it) needs longer is refused before it starts, and "
                  "one still running at this limit stops (exit 2) with what it did.",
                  1e12, 1e18),
            &S::wall_limit_ps),
       bind(param("memory_limit", K::kBytes, "0B", "bytes",
                  "The most memory a run may use: a system whose estimated memory (devices, "
                  "ports, routes, schedules, packets in flight; fabricsim check prints it) "
                  "exceeds it is refused before it is built, and the process cannot allocate "
                  "more than it (plus a margin for the estimate's error). 0B: three quarters "
                  "of this machine's memory.",
                  0, 17592186044416.0),
            &S::memory_limit)},
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
