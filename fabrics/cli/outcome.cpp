#include "fabrics/cli/outcome.h"

#include <cstdio>

#include "fabrics/sim/faults.h"
#include "models/core/errors.h"
#include "models/core/packet.h"
#include "models/core/run_control.h"
#include "models/core/units.h"

namespace fabricsim {

namespace {

std::string us_text(uint64_t ps) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f us", double(ps) * 1e-6);
  return buf;
}

std::string located(const SystemSpec& spec, const std::string& key) {
  const auto it = spec.where.find(key);
  return (it == spec.where.end() ? spec.file : it->second) + ": " + key + ": ";
}

}  // namespace

std::string progress_text(const SystemSpec& spec, const CollectiveSweep& sweep,
                          const JobRunner* runner) {
  if (runner) {
    std::string s = std::to_string(runner->done()) + " of " + std::to_string(runner->total()) +
                    " jobs finished";
    if (runner->waiting())
      s += "; job " + std::to_string(runner->started()) +
           " was waiting to start (for the circuits it needs)";
    else if (runner->launched() > runner->done())
      s += "; job " + std::to_string(runner->launched()) + " was running";
    return s;
  }
  const std::vector<SweepRow>& rows = sweep.rows();
  const size_t total = spec.workload.sizes().size();
  // A row is added when its collective starts; all but a running last one have finished.
  const size_t finished = sweep.finished() || rows.empty() ? rows.size() : rows.size() - 1;
  std::string s = std::to_string(finished) + " of " + std::to_string(total) + " sizes finished";
  std::string done;
  for (size_t i = finished > 3 ? finished - 3 : 0; i < finished; ++i)
    done += (done.empty() ? "" : ", ") + format_bytes(rows[i].bytes) + " in " +
            us_text(rows[i].end_ps - rows[i].start_ps);
  if (!done.empty()) s += " (" + std::string(finished > 3 ? "last: " : "") + done + ")";
  if (finished < rows.size())
    s += "; the " + format_bytes(rows[finished].bytes) + " " + spec.workload.collective +
         " started at " + us_text(rows[finished].start_ps) + " was running";
  else if (rows.empty())
    s += "; the first had not started";
  return s;
}

void report_stop(const SystemSpec& spec, const std::string& progress, uint64_t now_ps) {
  const std::string at = " at simulated time " + us_text(now_ps);
  switch (stop_reason()) {
    case StopReason::kInterrupt:
    case StopReason::kTerminate:
      throw Interrupted(std::string("stopped by ") + stop_reason_name(stop_reason()) + at +
                        ": " + progress + "; no results were written (a previous "
                        "results.json in --out is kept)");
    case StopReason::kWallLimit:
      throw InputError(located(spec, "simulation.wall_limit") + "the run did not finish within " +
                       format_time_ps(spec.simulation.wall_limit_ps) + " of wall-clock time (" +
                       progress + at + "); raise simulation.wall_limit, or shrink the work: "
                       "fewer or smaller sizes, simulation.aggregate_bytes (e.g. 16KiB), a "
                       "smaller system");
    case StopReason::kNone: break;
  }
}

void report_unfinished(const SystemSpec& spec, const System& sys, const CollectiveSweep& sweep,
                       const JobRunner* runner, uint64_t now_ps, bool pending) {
  const std::string progress = progress_text(spec, sweep, runner);
  const std::string at = " at simulated time " + us_text(now_ps);
  report_stop(spec, progress, now_ps);
  // Faults that cut the workload off or lost its data explain a run that starves, and one
  // that runs into the time limit with ranks cut off (NIC transports keep retrying).
  if (const FaultManager* f = sys.faults()) {
    const std::string reason = f->unfinished_reason();
    if (!reason.empty() && (!pending || f->cut_off() || f->lost_for_good()))
      throw InputError(reason + " (" + progress + at +
                       (pending ? ", where simulation.time_limit ended it" : "") + ")");
  }
  if (pending)
    throw InputError(located(spec, "simulation.time_limit") +
                     "the workload did not finish within " +
                     format_time_ps(spec.simulation.time_limit_ps) + " of simulated time (" +
                     progress + "); raise simulation.time_limit or shrink the workload" +
                     (sys.faults() && sys.faults()->links_down()
                          ? " (links were still down: " + sys.faults()->unfinished_reason() + ")"
                          : std::string()));
  std::string waits;
  for (const std::string& w : sys.credit_waits(4)) waits += (waits.empty() ? "" : ", ") + w;
  throw InternalError("the simulation ran out of events before the workload finished "
                      "(deadlock)" + at + ": " + progress + "; " +
                      std::to_string(sys.messages_in_flight()) + " messages in flight, " +
                      std::to_string(PacketPool::global().outstanding()) +
                      " transactions outstanding" +
                      (waits.empty() ? "; no port waits for credits"
                                     : "; waiting for credits: " + waits) +
                      (spec.workload.torus.empty()
                           ? std::string()
                           : "; the ranks form a torus whose routes (shortest paths, no "
                             "dimension order, datelines or virtual channels) close credit "
                             "cycles round its rings: traffic beyond neighbours (e.g. "
                             "alltoall) can deadlock there unless the router type sets "
                             "torus_routing: dimension_order (docs/optical.md, \"Routing on "
                             "the torus\")"));
}

}  // namespace fabricsim
