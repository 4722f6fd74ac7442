// libFuzzer harness: the --set parser. The input is up to 16 lines, each one --set
// assignment (key.path=value), applied to a small valid config (the one below) and checked
// as `fabricsim check CONFIG --set LINE...` does. docs/reliability.md, "The fuzzed loader".
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_common.h"

namespace {

// configs/minimal.yaml without comments, with a faults section so that its keys are
// reachable too.
const char kBase[] = R"(version: 1
name: fuzz_set_base
seed: 1
simulation:
  aggregate_bytes: 0B
  functional: true
link_types:
  nvl:
    protocol: nvlink
    lanes: 2
    lane_rate: 100Gb/s
    framing: flit
    flit_bytes: 16B
    overhead_flits: 2
    packet_payload: 128B
    latency: 25ns
    rx_buffer: 16KiB
device_types:
  gpu:
    type: endpoint
    protocol: nvlink
    ports: 2
    memory_bandwidth: 2000GB/s
  sw:
    type: switch
    protocol: nvlink
    ports: 8
    pipeline_latency: 100ns
    arbiter: islip
    speedup: 2.0
    egress_buffer: 8KiB
topology:
  type: switched_node
  endpoint_type: gpu
  endpoints: 4
  switch_type: sw
  switches: 1
  links_per_switch: [2]
  link_type: nvl
workload:
  type: allreduce_sweep
  algorithm: ring
  min_bytes: 64KiB
  max_bytes: 4MiB
  step_factor: 4
  datatype: float
  channels: 2
  chunk_bytes: 64KiB
faults:
  events:
    - {type: link_down, link: "gpu0.port[0]", at: 5us, up_at: 10us}
)";

}  // namespace

// libsystemc defines main() and wants sc_main(); libFuzzer's main() is the one that runs.
extern "C" int sc_main(int, char**) { return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string base = fabricsim::fuzz::write_input(
      "base.yaml", reinterpret_cast<const uint8_t*>(kBase), sizeof kBase - 1);
  std::vector<std::string> sets;
  const std::string text(reinterpret_cast<const char*>(data), size);
  size_t start = 0;
  while (start <= text.size() && sets.size() < 16) {
    const size_t end = std::min(text.find('\n', start), text.size());
    sets.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  fabricsim::fuzz::check(base, sets);
  return 0;
}
