// Why a run ended before its workload finished, told the way the user needs it:
//   * stopped by SIGINT or SIGTERM              -> Interrupted (exit 4)
//   * the wall-clock limit                      -> InputError at simulation.wall_limit (exit 2)
//   * events left beyond simulation.time_limit  -> InputError at simulation.time_limit (exit 2)
//   * no event left at all                      -> a deadlock: InternalError (exit 3) with
//                                                  its diagnosis, unless faults explain it
// Each message says what was done (sizes or jobs finished, the one running) and when.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "fabrics/sim/system.h"
#include "fabrics/systems/system_spec.h"
#include "models/collectives/job_runner.h"
#include "models/collectives/sweep.h"

namespace fabricsim {

// "2 of 4 sizes finished (64KiB in 12.30 us, 256KiB in 40.10 us); the 1MiB all_reduce
// started at 52.4us", or "1 of 6 jobs finished; job 2 started at 3ms".
std::string progress_text(const SystemSpec& spec, const CollectiveSweep& sweep,
                          const JobRunner* runner);

// Throws Interrupted (SIGINT, SIGTERM) or the wall-limit InputError if the run was stopped;
// returns otherwise. `progress`: progress_text of the run.
void report_stop(const SystemSpec& spec, const std::string& progress, uint64_t now_ps);

// Throws the error that explains an unfinished run (above). `pending`: the kernel still
// had events (sc_pending_activity()) when it returned at `now_ps`.
[[noreturn]] void report_unfinished(const SystemSpec& spec, const System& sys,
                                    const CollectiveSweep& sweep, const JobRunner* runner,
                                    uint64_t now_ps, bool pending);

}  // namespace fabricsim
