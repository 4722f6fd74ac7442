// A real deadlock is an internal error (exit 3) with its diagnosis, distinct from the time
// limit (exit 2): a test-only device kind that swallows every transaction and never returns
// its credits makes a run that no event can finish, through the command line's own entry
// point.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "fabrics/cli/app.h"
#include "models/core/device_kind.h"
#include "models/core/device_model.h"
#include "models/link/link_type.h"
#include "models/link/port.h"

namespace fabricsim {
namespace {

// Keeps what arrives; sends nothing; frees no buffer.
class BlackHole : public sc_core::sc_module, public PortOwner, public DeviceModel {
 public:
  BlackHole(sc_core::sc_module_name n, std::string name, const std::vector<int>& used)
      : sc_module(n), name_(std::move(name)) {
    for (int i : used)
      ports_[i] = std::make_unique<Port>(("port_" + std::to_string(i)).c_str(),
                                         name_ + ".port[" + std::to_string(i) + "]", this, i,
                                         /*rx_at_head=*/false);
  }
  const std::string& display_name() const override { return name_; }
  Port& port(int i) override { return *ports_[i]; }
  void set_routes(const std::vector<std::vector<int>>&) override {}
  nlohmann::json stats_json(uint64_t) const override { return {{"swallowed", swallowed_}}; }
  Packet* tx_peek(int) override { return nullptr; }
  void tx_pop(int, Packet*) override {}
  void rx_arrive(int, Packet*) override { ++swallowed_; }

 private:
  std::string name_;
  std::unique_ptr<Port> ports_[2];
  uint64_t swallowed_ = 0;
};

struct BlackHoleParams {
  std::string protocol;
};

DeviceKind black_hole_kind() {
  DeviceKind k;
  k.name = "test_black_hole";
  k.summary = "Swallows every transaction (tests/model/test_run_outcome.cpp).";
  k.forwards = true;
  k.params.push_back(param_block<BlackHoleParams>(
      "black_hole", {bind(choice("protocol", link_protocols(), "", "Protocol of its ports."),
                          &BlackHoleParams::protocol)}));
  k.ports = [](const DeviceType& t) {
    return std::vector<PortGroup>{{"fabric", 2, t.get<BlackHoleParams>().protocol}};
  };
  k.create = [](const DeviceBuild& b) -> std::unique_ptr<DeviceModel> {
    return std::make_unique<BlackHole>(b.name.c_str(), b.name, b.used_ports);
  };
  return k;
}

std::string write_config() {
  const std::string file = "/tmp/fabricsim_outcome_" + std::to_string(::getpid()) + ".yaml";
  // 8 KiB of data into a 1 KiB receive buffer that is never freed: the sender stalls for
  // credits after 1 KiB for good.
  std::ofstream(file) << R"(name: black_hole
link_types:
  l: {protocol: generic, lanes: 1, lane_rate: 100Gb/s, packet_payload: 64B, latency: 10ns,
      rx_buffer: 1KiB}
device_types:
  gpu: {type: endpoint, protocol: generic, ports: 1, memory_bandwidth: 1000GB/s}
  hole: {type: test_black_hole, protocol: generic}
topology:
  type: explicit
  devices: {gpu0: gpu, gpu1: gpu, h: hole}
  links:
    - {a: "gpu0.port[0]", b: "h.port[0]", type: l}
    - {a: "gpu1.port[0]", b: "h.port[1]", type: l}
workload: {type: collective_sweep, collective: sendrecv, min_bytes: 8KiB, max_bytes: 8KiB}
)";
  return file;
}

}  // namespace

TEST(RunOutcome, DeadlockIsAnInternalErrorWithItsDiagnosis) {
  if (!device_kinds().find("test_black_hole")) device_kinds().add(black_hole_kind());
  testing::internal::CaptureStderr();
  const int rc = app_main({"run", write_config(), "--quiet"});
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 3) << err;
  EXPECT_NE(err.find("fabricsim: internal error: the simulation ran out of events before the "
                     "workload finished (deadlock) at simulated time "),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("0 of 1 sizes finished; the 8KiB sendrecv started at 0.00 us was running"),
            std::string::npos)
      << err;
  // Both GPUs wait for credits that never come back, oldest wait first.
  EXPECT_NE(err.find("waiting for credits: gpu0.port[0] (since "), std::string::npos) << err;
  EXPECT_NE(err.find("gpu1.port[0] (since "), std::string::npos) << err;
  EXPECT_NE(err.find("2 messages in flight"), std::string::npos) << err;
}

}  // namespace fabricsim
