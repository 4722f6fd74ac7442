// Runs a list of jobs (job.h schedules, e.g. training steps under different settings) back
// to back on the CollectiveEngine: the next starts when the previous has completed on every
// rank. After each job `on_done(index, start_ps, end_ps)` runs while the engine still holds
// that job's per-op completion times (CollectiveEngine::op_done_ps).
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include <systemc>

#include "models/collectives/engine.h"
#include "models/collectives/program.h"

namespace fabricsim {

class JobRunner : public sc_core::sc_module {
 public:
  using Done = std::function<void(size_t index, uint64_t start_ps, uint64_t end_ps)>;
  JobRunner(sc_core::sc_module_name n, CollectiveEngine& engine, std::vector<coll::Schedule> jobs,
            Done on_done);
  // Called before job `index` starts (the first at time 0 too): the job starts when the
  // hook calls `go` (at once or later, e.g. once the optical circuit switches have taken
  // the circuits the job needs: fabrics/cli/app.cpp, models/optics/ocs_controller.h).
  using Before = std::function<void(size_t index, std::function<void()> go)>;
  void set_before(Before before) { before_ = std::move(before); }
  bool finished() const { return done_ == jobs_.size(); }
  size_t started() const { return next_; }  // handed to the before hook (or started)
  size_t launched() const { return launched_; }  // the hook said go: running or done
  // Is a job waiting for its before hook's go (e.g. for circuits being reconfigured)?
  bool waiting() const { return next_ > launched_; }
  size_t done() const { return done_; }
  size_t total() const { return jobs_.size(); }

 private:
  void kickoff() { start_next(); }
  void start_next();
  void start(size_t index);

  CollectiveEngine& engine_;
  std::vector<coll::Schedule> jobs_;
  Done on_done_;
  Before before_;
  size_t next_ = 0, launched_ = 0, done_ = 0;
};

}  // namespace fabricsim
