// Training workloads on an elaborated system: builds the jobs of ddp_step, fsdp_step,
// moe_layer and tp_layer from the WorkloadSpec (models/collectives/training.h), turns each
// finished job's times into a row, prints the table and the rows of results.json.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fabrics/systems/system_spec.h"
#include "models/collectives/engine.h"
#include "models/collectives/program.h"

namespace fabricsim {

struct TrainingColumn {
  std::string key;    // results.json row key, e.g. "step_us"
  std::string unit;   // printed under the header, e.g. "(us)"
  int width;
};

class TrainingWorkload {
 public:
  explicit TrainingWorkload(const SystemSpec& spec);
  // The jobs to run back to back (moved out once).
  std::vector<coll::Schedule> take_jobs();
  size_t job_count() const { return n_jobs_; }
  // Called by the JobRunner after job `index` while the engine holds its op times.
  void job_done(size_t index, uint64_t start_ps, uint64_t end_ps, const CollectiveEngine& e);

  void print(std::ostream& os) const;
  nlohmann::json rows_json() const;      // one object per row, keys = column keys
  nlohmann::json units_json() const;     // column key -> unit

 private:
  int n_ = 0;
  std::vector<coll::Schedule> jobs_;
  size_t n_jobs_ = 0;
  std::vector<std::function<void(uint64_t, uint64_t, const CollectiveEngine&)>> measure_;
  std::string title_;
  std::vector<std::string> notes_;
  std::vector<TrainingColumn> columns_;
  std::vector<nlohmann::json> rows_;
  std::shared_ptr<uint64_t> phase_prev_end_;  // ocs_phases: the last phase's end
};

}  // namespace fabricsim
