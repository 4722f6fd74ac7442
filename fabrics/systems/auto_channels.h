// workload.channels: auto: the channels NCCL would build for this topology (its graph
// search, models/collectives/nccl_channels.h), read off the system's graph. Plain C++.
#pragma once
#include "fabrics/config/params.h"
#include "fabrics/systems/system_spec.h"

namespace fabricsim {

// With spec.workload.channels_auto, sets spec.workload.channels to NCCL's count for the
// ranks' GPUs and records it in spec.resolved (workload.channels_auto); `p` (the workload
// section) reports a topology the rule does not cover at workload.channels. Otherwise
// does nothing.
void resolve_auto_channels(SystemSpec& spec, const cfg::Params& p);

}  // namespace fabricsim
