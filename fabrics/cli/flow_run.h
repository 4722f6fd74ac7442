// `fabricsim run` at simulation.fidelity: flow (fabrics/sim/flow_system.h): the same
// workloads, table and results.json as the packet level, without per-port statistics.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "fabrics/cli/outputs.h"
#include "fabrics/systems/system_spec.h"

namespace fabricsim {

int run_flow(const SystemSpec& spec, const std::optional<std::string>& out, bool quiet,
             const OutputOptions& outputs, const std::string& command_line);

}  // namespace fabricsim
