#include "models/collectives/job_runner.h"

#include "models/core/scheduler.h"

namespace fabricsim {

JobRunner::JobRunner(sc_core::sc_module_name n, CollectiveEngine& engine,
                     std::vector<coll::Schedule> jobs, Done on_done)
    : sc_module(n), engine_(engine), jobs_(std::move(jobs)), on_done_(std::move(on_done)) {
  SC_HAS_PROCESS(JobRunner);
  SC_METHOD(kickoff);  // runs once at time 0
}

void JobRunner::start_next() {
  if (next_ == jobs_.size()) return;
  const size_t index = next_++;
  if (before_) {
    before_(index, [this, index]() { start(index); });
    return;
  }
  start(index);
}

void JobRunner::start(size_t index) {
  ++launched_;
  const uint64_t start = Scheduler::time();
  engine_.start(std::move(jobs_[index]), [this, index, start]() {
    ++done_;
    if (on_done_) on_done_(index, start, Scheduler::time());
    start_next();
  });
}

}  // namespace fabricsim
