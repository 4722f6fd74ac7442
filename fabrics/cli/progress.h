// Running the simulation with progress on stderr. Without progress the kernel runs in one
// sc_start call, as it always has; with it, in slices of simulated time sized to about a
// fifth of a wall second each, after which a line is printed. Slicing changes nothing the
// model sees: events are processed in the same order, and the kernel still stops at the
// last event (starvation) or at the time limit.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/collectives/sweep.h"

namespace fabricsim {

// How progress is shown: `live`: one line rewritten in place (a terminal); else a plain
// line every `every_s` seconds; neither: silent.
struct ProgressMode {
  bool live = false;
  double every_s = 0;  // > 0: plain lines (--progress[=SECONDS])
  bool on() const { return live || every_s > 0; }
};

// What the run has done so far: rows (collectives or jobs) completed of the total, and the
// work of each row (bytes of its size; equal weights for jobs) for the ETA.
struct ProgressState {
  size_t rows_done = 0, rows_total = 0;
  std::vector<double> row_work;  // size rows_total; empty: equal weights
};

// The state of a size sweep (rows started so far, whether all are done, every size) and of
// a job list.
ProgressState sweep_progress(const std::vector<SweepRow>& rows, bool finished,
                             const std::vector<uint64_t>& sizes);
ProgressState job_progress(size_t started, bool finished, size_t total);

// The mode for a run: live on a terminal unless quiet; --progress gives plain lines
// whatever the terminal (every `progress_s` seconds).
ProgressMode progress_mode(bool quiet, double progress_s);

// sc_start until the time limit or the end of all events, printing progress per `mode`.
void simulate(uint64_t time_limit_ps, const ProgressMode& mode,
              const std::function<ProgressState()>& state);

// One progress line: "row 5/14, sim 1.234 ms, 2.31 M events/s, ETA 12 s".
std::string progress_line(const ProgressState& s, uint64_t sim_ps, double events_per_s,
                          double elapsed_s);

}  // namespace fabricsim
