// Traffic workloads (incast, permutation: fabrics/workloads/traffic.cpp) on an elaborated
// system: the flows as one job of send/receive ops (every flow starts when the job does,
// plus its own start offset), then per-flow completion times, the aggregate goodput and
// the fairness of the flows' rates, for the table and results.json.
#pragma once
#include <cstdint>
#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "fabrics/systems/system_spec.h"
#include "models/collectives/engine.h"
#include "models/collectives/program.h"

namespace fabricsim {

class TrafficWorkload {
 public:
  explicit TrafficWorkload(const SystemSpec& spec);
  // The one job (moved out once).
  std::vector<coll::Schedule> take_jobs();
  // Called by the JobRunner when the job is done, while the engine holds its op times.
  void job_done(uint64_t start_ps, uint64_t end_ps, const CollectiveEngine& e);

  void print(std::ostream& os) const;
  nlohmann::json rows_json() const;
  nlohmann::json units_json() const;
  nlohmann::json summary_json() const { return summary_; }

 private:
  struct FlowOps {
    uint32_t send_op = 0, recv_op = 0;
  };
  const SystemSpec& spec_;
  std::vector<coll::Schedule> jobs_;
  std::vector<FlowOps> ops_;
  std::vector<uint64_t> fct_ps_;  // per flow
  nlohmann::json summary_;
};

}  // namespace fabricsim
