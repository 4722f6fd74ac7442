// The run as a Chrome trace-event JSON file (opens in ui.perfetto.dev and chrome://tracing):
// one process per rank with its ops (send, receive, reduce, compute, delay, NVLS) as
// slices on lanes that never overlap, each dependency as a flow arrow, one process per
// window (the sweep's rows, the jobs), and one process per device with counter tracks of
// its ports' utilisation and queue depth from the time series. Timestamps are in
// microseconds with picosecond decimals, written in non-decreasing order.
#pragma once
#include <string>

#include "fabrics/sim/observe.h"

namespace fabricsim {

void write_trace(const std::string& file, const SystemSpec& spec, const Observation& obs);

}  // namespace fabricsim
