// Acceptance 4: ring all-reduce on an uncontended ring of point-to-point links completes
// within 1% of the closed form for the configured chunking (ring_allreduce.h states the formula):
//   T = K*w + (n-1)*max(K*w, w + p + d) + (n-2)*max(K*w, w + p) + p
// with w the wire time of one piece, p the link latency, d the reduction time of one
// piece (3 bytes of memory traffic per byte at the endpoint's memory bandwidth) and K the
// pieces per step (channels x pieces per block).
#include <gtest/gtest.h>

#include "models/collectives/engine.h"
#include "models/collectives/ring_allreduce.h"
#include "models/core/scheduler.h"
#include "testbenches/bench.h"

using namespace fabricsim;

namespace {

struct Case {
  const char* name;
  int ranks;
  uint64_t count;       // floats per rank
  int channels;
  uint64_t chunk_bytes;
  uint64_t aggregate_bytes;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class RingClosedForm : public ::testing::TestWithParam<Case> {};

TEST_P(RingClosedForm, SimulatedTimeMatchesClosedFormWithin1Percent) {
  const Case c = GetParam();
  Scheduler::instance();
  const uint64_t prop = 100'000;  // 100 ns
  const LinkParams link = tb::nvlink_like(prop, 1 << 20);
  EndpointParams ep;
  ep.ports = 2;
  ep.memory_bandwidth_Bps = 1'000'000'000'000ull;  // 1 TB/s
  ep.aggregate_bytes = c.aggregate_bytes;
  tb::RingBench bench(c.ranks, ep, link);
  std::vector<Endpoint*> ranks;
  for (auto& e : bench.eps) ranks.push_back(e.get());
  CollectiveEngine engine("engine", ranks, 4);

  coll::RingParams rp;
  rp.ranks = c.ranks;
  rp.count = c.count;
  rp.elem_bytes = 4;
  rp.channels = c.channels;
  rp.chunk_bytes = c.chunk_bytes;
  uint64_t done_ps = 0;
  engine.start(coll::ring_allreduce(rp), [&] { done_ps = sc_core::sc_time_stamp().value(); });
  sc_core::sc_start();
  ASSERT_GT(done_ps, 0u) << "collective did not finish";

  auto hop_ps = [&](uint64_t bytes) {
    const uint64_t full = bytes / link.packet_payload, last = bytes % link.packet_payload;
    uint64_t wire = full * link.framing->packet_wire_bytes(link.packet_payload);
    if (last) wire += link.framing->packet_wire_bytes(uint32_t(last));
    return transfer_ps(wire, link.rate_bps);
  };
  auto reduce_ps = [&](uint64_t bytes) {
    return transfer_ps(3 * bytes, ep.memory_bandwidth_Bps * 8);
  };
  const uint64_t expect = coll::ring_allreduce_time_ps(rp, hop_ps, prop, reduce_ps);
  RecordProperty("simulated_ps", std::to_string(done_ps));
  RecordProperty("closed_form_ps", std::to_string(expect));
  EXPECT_NEAR(double(done_ps) / double(expect), 1.0, 0.01)
      << "simulated " << done_ps << " ps, closed form " << expect << " ps";
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Regimes, RingClosedForm,
    ::testing::Values(
        // Bandwidth-bound: 8 pieces of 16 KiB per step keep the link busy.
        Case{"bandwidth_bound_4ranks", 4, 4 * 8 * 4096, 1, 16384, 0},
        // Latency-bound: one 4 KiB piece per step; each step waits for hop + latency.
        Case{"latency_bound_4ranks", 4, 4 * 1024, 1, 16384, 0},
        // Two channels interleaved on the same links, odd rank count.
        Case{"two_channels_5ranks", 5, 5 * 2 * 4 * 2048, 2, 8192, 0},
        // Aggregated transactions of 4 KiB on the same bandwidth-bound case.
        Case{"bandwidth_bound_aggregated", 4, 4 * 8 * 4096, 1, 16384, 4096}),
    [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

}  // namespace
