// The optical circuit switches' controller as a workload generator sees it (docs/optical.md,
// "Reconfiguration at workload phase boundaries"): between two phases of a job the workload
// asks for a named circuit map (one map per optical circuit switch of the system, declared in
// the config's `faults.circuit_maps`), waits until every changed circuit is lit again, and
// resumes. Each switch reconfigures as a timed `ocs_reconfigure` does: its changed circuits'
// transmitters stop, drain (or are cut: reconfiguration_mode immediate), are dark for exactly
// its reconfiguration_time, then the new map is lit and every device's routes follow it.
// Implemented by the fault manager (fabrics/sim/faults.h), which plays the reconfigurations.
#pragma once
#include <functional>
#include <string>

namespace fabricsim {

class OcsController {
 public:
  virtual ~OcsController() = default;
  // True if `map` names a circuit map of the config.
  virtual bool has_circuit_map(const std::string& map) const = 0;
  // Every switch named in `map` takes its map there; `ready` runs (in simulation context,
  // at the instant the last changed circuit is lit) once all of them are. A switch whose
  // map is already in force is not touched; if none changes, `ready` runs at once. One
  // request at a time: a request while another is still reconfiguring is an internal error
  // (a plan that could overlap is refused when the config is loaded).
  virtual void request_circuit_map(const std::string& map, std::function<void()> ready) = 0;
};

}  // namespace fabricsim
