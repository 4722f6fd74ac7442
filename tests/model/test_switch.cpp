// Acceptance 3: textbook switch results under uniform random traffic at full load.
// Karol, Hluchyj, Morgan 1987: FIFO input queues saturate at 2 - sqrt(2) = 58.6% for
// large N (about 59% at N = 32); McKeown 1999: VOQ + iSLIP approaches 100%.
#include <gtest/gtest.h>

#include "models/switch/switch_kind.h"
#include "models/endpoint/endpoint.h"
#include "testbenches/bench.h"

using namespace fabricsim;

namespace {

double saturation_throughput(const std::string& queues, const std::string& arbiter) {
  const int n = 32;
  SwitchParams sp = defaults<SwitchParams>(switch_frame_params());
  sp.ports = n;
  sp.pipeline_latency_ps = 20'000;
  sp.input_queues = queues;
  sp.arbiter = arbiter;
  sp.islip_iterations = 1;
  sp.speedup = 1.0;
  sp.egress_buffer_bytes = 2 * 128;
  EndpointParams ep;
  ep.ports = 1;
  LinkParams link = tb::nvlink_like(5'000, 64 * 160);
  tb::StarBench bench(n, sp, ep, link);
  std::vector<std::unique_ptr<tb::UniformSource>> sources;
  std::vector<Endpoint*> sinks;
  for (int i = 0; i < n; ++i) {
    sources.push_back(std::make_unique<tb::UniformSource>(
        ("source" + std::to_string(i)).c_str(), *bench.eps[i], n, 128, 7));
    sinks.push_back(bench.eps[i].get());
  }
  const uint64_t warmup = 20'000'000, window = 80'000'000;  // 20 us, 80 us
  tb::ThroughputMonitor mon("monitor", sinks, warmup, warmup + window);
  sc_core::sc_start(sc_core::sc_time::from_value(warmup + window));
  const double capacity = n * (double(link.rate_bps) / 8 * 128.0 / 160.0) * (window * 1e-12);
  return double(mon.bytes()) / capacity;
}

}  // namespace

TEST(Switch, FifoInputsSaturateNearKarolLimit) {
  const double t = saturation_throughput("fifo", "round_robin");
  RecordProperty("throughput", std::to_string(t));
  EXPECT_GT(t, 0.55);
  EXPECT_LT(t, 0.62);
}

TEST(Switch, VoqWithIslipExceeds95Percent) {
  const double t = saturation_throughput("voq", "islip");
  RecordProperty("throughput", std::to_string(t));
  EXPECT_GT(t, 0.95);
}
