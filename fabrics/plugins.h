// The built-in plug-ins: every device kind, switch feature, link framing, topology
// generator and workload type the simulator ships, added to their registries once.
#pragma once

namespace fabricsim {

// Idempotent; called first by the command line and by every test main.
void register_builtin_plugins();

}  // namespace fabricsim
