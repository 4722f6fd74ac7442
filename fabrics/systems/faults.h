// The `faults:` section of a config: link, port and switch failures, flapping links and
// bit-error bursts at given simulated times (docs/faults.md). Parsed into the
// FaultPlan the fault manager plays during the run (fabrics/sim/faults.h). Plain C++.
#pragma once
#include <yaml-cpp/yaml.h>

#include "fabrics/systems/checks.h"
#include "fabrics/systems/system_spec.h"

namespace fabricsim {

// Parses `section` (absent or empty: no faults) against the built system `spec` (its graph,
// link and device types, workload and time limit) into spec.faults, and echoes it into
// spec.resolved["faults"]. Every bad value is an InputError at its place.
void load_faults(SystemSpec& spec, const SpecSources& src, const YAML::Node& section);

// The parameter tables of the section and of each event type, for `describe faults`.
std::vector<cfg::TypeSpec> fault_specs();

}  // namespace fabricsim
