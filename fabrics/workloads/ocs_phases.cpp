// ocs_phases: a job whose steps alternate two phases with different traffic (phase A, then
// phase B, `steps` times; e.g. a training-step-like job: an all-reduce, then an all-to-all),
// each phase one collective. With a plan in the faults section (`ocs_phase_map`: at the
// start of every phase X the optical circuit switches take circuit map M) the run stops
// between phases for the reconfiguration, as a workload generator calling the OCS
// controller would (models/optics/ocs_controller.h; docs/optical.md, "Reconfiguration at
// workload phase boundaries"). Runs as jobs (fabrics/sim/training_run.cpp), one per phase.
#include <algorithm>

#include "fabrics/systems/system_spec.h"
#include "fabrics/workloads/workload.h"
#include "models/core/datatype.h"
#include "models/core/limits.h"
#include "models/core/text.h"
#include "models/core/units.h"

namespace fabricsim {

namespace {

using K = ParamKind;

std::vector<std::string> collective_names() {
  std::vector<std::string> c;
  for (const coll::AlgoInfo& a : coll::algorithm_table())
    if (std::find(c.begin(), c.end(), a.collective_name) == c.end()) c.push_back(a.collective_name);
  return c;
}

std::vector<ParamSpec> phase_params(const char* x, const char* collective, const char* what) {
  const std::string p = std::string("phase_") + x + "_";
  return {choice(p + "collective", collective_names(), collective,
                 std::string("Phase ") + what + "'s collective."),
          param(p + "algorithm", K::kString, "default", "",
                std::string("Phase ") + what + "'s algorithm; default: the collective's first "
                "(describe collective_sweep lists them)."),
          param(p + "bytes", K::kBytes, "", "bytes",
                std::string("Phase ") + what + "'s size (nccl-tests size of its collective).", 1,
                limits::kMaxMessageBytes)};
}

}  // namespace

WorkloadKind ocs_phases_workload() {
  WorkloadKind k;
  k.name = "ocs_phases";
  k.summary =
      "A job of `steps` steps, each phase A (a collective) then phase B (another), one after "
      "the other; with `faults: ocs_phase_map` entries the optical circuit switches take a "
      "named circuit map at the start of a phase and the job waits for it (docs/optical.md).";
  k.training = true;
  std::vector<ParamSpec> ps = {
      param("steps", K::kInt, "1", "steps", "How many times the phases run (A, B, A, B, ...).", 1,
            1000000)};
  for (const ParamSpec& s : phase_params("a", "all_reduce", "A")) ps.push_back(s);
  for (const ParamSpec& s : phase_params("b", "alltoall", "B")) ps.push_back(s);
  ps.push_back(choice("datatype", datatype_names(), "float", "Element type."));
  ps.push_back(param("channels", K::kInt, "1", "", "Channels of every collective.", 1, 64));
  ps.push_back(param("chunk_bytes", K::kBytes, "512KiB", "bytes",
                     "Pipelining granularity of every collective.", 1, limits::kMaxMessageBytes));
  k.params = ps;
  k.parse = [](const cfg::Params& p, const cfg::Params&, SystemSpec& s) {
    WorkloadSpec& w = s.workload;
    w.steps = int(p.integer("steps"));
    w.datatype = p.str("datatype");
    w.elem_bytes = datatype_bytes(w.datatype);
    w.channels = int(p.integer("channels"));
    w.chunk_bytes = p.bytes("chunk_bytes");
    w.slices = 1;
    for (const char* x : {"a", "b"}) {
      const std::string pre = std::string("phase_") + x + "_";
      PhaseSpec ph;
      ph.name = x[0] == 'a' ? "A" : "B";
      ph.collective = p.str(pre + "collective");
      const std::vector<std::string> algos = coll::algorithms_for(ph.collective);
      ph.algorithm = p.str(pre + "algorithm") == "default" ? algos.front() : p.str(pre + "algorithm");
      if (std::find(algos.begin(), algos.end(), ph.algorithm) == algos.end())
        p.fail(pre + "algorithm", "'" + ph.algorithm + "' is not an algorithm of " + ph.collective,
               did_you_mean(ph.algorithm, algos));
      if (coll::has_levels(ph.collective, ph.algorithm) ||
          coll::uses_nvls_switches(ph.algorithm))
        p.fail(pre + "algorithm",
               ph.algorithm + " needs levels or NVLS switches, which ocs_phases does not set up",
               "use a flat algorithm: " + join_list(coll::flat_algorithms_for(ph.collective)));
      ph.bytes = p.bytes(pre + "bytes");
      if (ph.bytes < w.elem_bytes || ph.bytes % w.elem_bytes)
        p.fail(pre + "bytes",
               format_bytes(ph.bytes) + " is not a whole number of " + w.datatype + "s (" +
                   std::to_string(w.elem_bytes) + " B)",
               "give a multiple of " + std::to_string(w.elem_bytes) + "B");
      w.phases.push_back(ph);
    }
    // The run-wide checks read one collective: phase A's.
    w.collective = w.phases[0].collective;
    w.algorithm = w.phases[0].algorithm;
  };
  return k;
}

}  // namespace fabricsim
