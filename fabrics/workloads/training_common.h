// What every job-running workload shares (the training steps and chakra): the
// communication parameters and their parse. Plain C++.
#pragma once
#include <vector>

#include "fabrics/config/params.h"
#include "fabrics/systems/system_spec.h"

namespace fabricsim {

// Communication parameters every training workload takes (algorithm, datatype, channels,
// chunk_bytes, sync, ack/flag bytes, launch_latency, ranks, device_tflops).
std::vector<ParamSpec> comm_params();

// Fills the workload's communication settings and ranks from `p` (and, with_model, the
// transformer layers); training workloads run timing only (checked against `sim`).
void parse_common(const cfg::Params& p, const cfg::Params& sim, SystemSpec& s, bool with_model);

}  // namespace fabricsim
