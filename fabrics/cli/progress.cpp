#include "fabrics/cli/progress.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include <systemc>

#include "models/core/run_control.h"
#include "models/core/scheduler.h"
#include "models/core/types.h"

namespace fabricsim {

ProgressMode progress_mode(bool quiet, double progress_s) {
  ProgressMode m;
  if (progress_s > 0)
    m.every_s = progress_s;
  else
    m.live = !quiet && ::isatty(STDERR_FILENO);
  return m;
}

ProgressState sweep_progress(const std::vector<SweepRow>& rows, bool finished,
                             const std::vector<uint64_t>& sizes) {
  ProgressState p;
  p.rows_total = sizes.size();
  p.rows_done = finished ? rows.size() : (rows.empty() ? 0 : rows.size() - 1);
  for (uint64_t b : sizes) p.row_work.push_back(double(b));
  return p;
}

ProgressState job_progress(size_t started, bool finished, size_t total) {
  ProgressState p;
  p.rows_total = total;
  p.rows_done = finished ? total : (started ? started - 1 : 0);
  return p;
}

std::string progress_line(const ProgressState& s, uint64_t sim_ps, double events_per_s,
                          double elapsed_s) {
  // Work done: the rows completed, weighted by their size (bytes moved grow with it).
  double done = 0, total = 0;
  for (size_t i = 0; i < s.rows_total; ++i) {
    const double w = s.row_work.empty() ? 1.0 : s.row_work[i];
    total += w;
    if (i < s.rows_done) done += w;
  }
  char eta[32] = "ETA ?";
  if (done > 0 && total > done)
    std::snprintf(eta, sizeof eta, "ETA %.0f s", elapsed_s * (total - done) / done);
  else if (total > 0 && done >= total)
    std::snprintf(eta, sizeof eta, "ETA 0 s");
  char buf[160];
  std::snprintf(buf, sizeof buf, "# progress: row %zu/%zu, sim %.3f ms, %.2f M events/s, %s",
                std::min(s.rows_done + 1, s.rows_total), s.rows_total, double(sim_ps) * 1e-9,
                events_per_s * 1e-6, eta);
  return buf;
}

void simulate(uint64_t time_limit_ps, const ProgressMode& mode,
              const std::function<ProgressState()>& state) {
  if (!mode.on()) {
    Scheduler::start(time_limit_ps);
    return;
  }
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  auto last_print = t0;
  uint64_t last_events = g_kernel_events;
  double slice_ps = 1e6;  // 1 us of simulated time, then sized to ~0.2 wall seconds
  const double print_every = mode.live ? 0.5 : mode.every_s;
  bool printed = false;
  for (;;) {
    const uint64_t now = Scheduler::time();
    if (now >= time_limit_ps) break;
    const uint64_t step = std::min<uint64_t>(uint64_t(slice_ps), time_limit_ps - now);
    const auto s0 = clock::now();
    Scheduler::start(step);
    const auto s1 = clock::now();
    if (!sc_core::sc_pending_activity()) break;  // starved: the run is over
    if (stop_requested()) break;  // SIGINT, SIGTERM or the wall-clock limit stopped the kernel
    const double took = std::chrono::duration<double>(s1 - s0).count();
    slice_ps = std::clamp(slice_ps * (took > 0 ? 0.2 / took : 4.0), 1e3, slice_ps * 4);
    const double since = std::chrono::duration<double>(s1 - last_print).count();
    if (since >= print_every) {
      const double rate = double(g_kernel_events - last_events) / since;
      const std::string line =
          progress_line(state(), Scheduler::time(), rate,
                        std::chrono::duration<double>(s1 - t0).count());
      if (mode.live)
        std::fprintf(stderr, "\r%s\033[K", line.c_str());
      else
        std::fprintf(stderr, "%s\n", line.c_str());
      std::fflush(stderr);
      printed = true;
      last_print = s1;
      last_events = g_kernel_events;
    }
  }
  if (mode.live && printed) {  // leave the terminal as it was
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }
}

}  // namespace fabricsim
