// What a run will cost before it is built: memory (devices, ports, routes, switch queues,
// schedules, packets in flight, functional buffers) and work (transaction-hops, and the
// wall time they take), so that a system that cannot run on this machine, or not within
// simulation.wall_limit, is refused up front (exit 2) with the estimate and how to lower
// it, instead of growing until the machine kills it. Plain C++.
//
// The coefficients are measured on this code (docs/reliability.md, "Memory and time before
// the run"): the estimate is meant to be within a factor of two, on the safe side.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fabrics/systems/checks.h"
#include "fabrics/systems/system_spec.h"

namespace fabricsim {

namespace cost {
constexpr double kBaseBytes = 16.0 * (1 << 20);  // the process: libraries, kernel, calendar
constexpr double kPortBytes = 5120;              // a Port: sc_module, sockets, queues
constexpr double kDeviceBytes = 8192;            // a device model besides its ports
constexpr double kGraphLinkBytes = 512;          // a link while the graph is built and checked
constexpr double kRoutePairBytes = 240;          // a (device, endpoint) route entry, held twice
constexpr double kOpBytes = 200;                 // a schedule op with the engine's state
constexpr double kPacketBytes = 160;             // a pooled transaction
constexpr double kHopsPerWallSecond = 5e5;       // transaction-hops simulated per second:
                                                 // below every rate measured (0.8 to 5.7M/s)
// The flow level (fabrics/sim/flow_system.h): a resource per link direction, a cached
// path per (source, destination) pair used, flows instead of packets.
constexpr double kFlowLinkBytes = 256;           // two link directions and the graph's link
constexpr double kFlowPathBytes = 64;            // per hop of a cached path
constexpr double kFlowHopsPerWallSecond = 2e5;   // flow-hops (a flow's start or end on a
                                                 // link) per second: measured 0.5-3M/s
}  // namespace cost

struct ResourceEstimate {
  double memory_bytes = 0;
  std::vector<std::pair<std::string, double>> parts;  // what the memory goes to, largest first
  double transaction_hops = 0;
  double wall_s = 0;
  // "1.2GiB (routes 800MiB, ports 200MiB, schedules 150MiB); 3.4e6 transaction-hops (~7 s)"
  std::string text() const;
};

ResourceEstimate estimate_resources(const SystemSpec& spec);

// This machine's memory: the smaller of its RAM and the process's cgroup limit.
uint64_t machine_memory();
// Three quarters of machine_memory(): the default of simulation.memory_limit.
uint64_t default_memory_limit();
// The address space (RLIMIT_AS) a run with this memory limit is given, so that a run the
// estimate got wrong fails an allocation (exit 2) rather than meet the OOM killer: the limit
// plus half of it plus 2 GiB (the estimate's error, and what is mapped but never touched),
// but no more than the machine's memory, unless the limit plus 2 GiB is already more (a limit
// raised past the machine on purpose). 18 GiB (the default on 24 GiB) -> 24 GiB, not 29.
uint64_t address_space_cap(uint64_t limit, uint64_t machine);
// simulation.memory_limit, or the default when it is 0; never above the process's cap.
uint64_t memory_limit(const SystemSpec& spec);
// A cap on every run's memory limit in this process, whatever the config says (0: none).
// The fuzzers (tests/fuzz/) set one, so that a config asking for terabytes is refused
// instead of built.
void set_memory_cap(uint64_t bytes);

// Refuses, at simulation.memory_limit or simulation.wall_limit, a run whose estimate
// exceeds them; stores the estimate in spec.estimate.
void check_resources(SystemSpec& spec, const SpecSources& src);

}  // namespace fabricsim
