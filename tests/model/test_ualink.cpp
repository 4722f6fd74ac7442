// REFERENCE case 9 (UALink 1.0): a 64 B read through one switch over a < 4 m cable
// completes its round trip in < 1 us; switch port-to-port latency within the class limits
// (25.6T <= 150 ns, 51.2T < 200 ns, 102.4T < 250 ns); stream framing on a switched path.
// Every expected time is computed here from the modelled components, independently of the
// model code, and must match to the picosecond (or within the stated tolerance).
#include <gtest/gtest.h>

#include "models/switch/switch_kind.h"
#include "models/ualink/switch_class.h"
#include "models/endpoint/endpoint.h"
#include "testbenches/bench.h"

using namespace fabricsim;

namespace {

constexpr uint64_t kRate = 4 * 212'500'000'000ull;  // x4 at the signalling rate
constexpr uint64_t kCodeword = 6'400;               // 680 B x 8 / 850 Gb/s, ps
constexpr uint64_t kCable = 20'000;                 // 4 m x 5 ns/m, ps (one way)
constexpr uint64_t kTurnaround = 200'000;           // target memory access (assumption)

// Pipeline latency per switch class as in configs/ualink_pod8.yaml (25.6T) and the
// header's mapping: the largest whole-ns value that meets the class limit with a 6.4 ns
// codeword and a 3.2 ns crossbar (speedup 2) on x4 links.
uint64_t pipeline_for(const std::string& cls) {
  if (cls == "25.6T") return 140'000;
  if (cls == "51.2T") return 190'000;
  return 240'000;  // 102.4T
}

SwitchParams ualink_switch(const std::string& cls) {
  SwitchParams sp = defaults<SwitchParams>(switch_frame_params());
  sp.ports = 4;
  sp.pipeline_latency_ps = pipeline_for(cls);
  sp.speedup = 2.0;
  sp.egress_buffer_bytes = 8 * 1024;
  return sp;
}

EndpointParams accelerator() {
  EndpointParams ep;
  ep.ports = 1;
  ep.read_turnaround_ps = kTurnaround;
  return ep;
}

// Crossbar time of `wire` bytes at 850 Gb/s x 2, rounded up (Switch::xbar_ps).
uint64_t xbar_ps(uint64_t wire) { return transfer_ps(wire, 2 * kRate); }

// First bit in to first bit out, measured with a 64 B write from ep0 to ep1 through an idle
// switch. ep0's codeword starts at t0, so its first bit reaches the switch at t0 + cable;
// the egress is idle, so the packet opens a codeword there, whose first bit arrives at
// ep1 one cable and one codeword before ep1 has the whole codeword.
void check_port_to_port(const std::string& cls) {
  tb::StarBench bench(2, ualink_switch(cls), accelerator(), tb::ualink_x4(kCable, 64 * 1024));
  uint64_t delivered = 0;
  bench.eps[1]->on_delivery([&](const Endpoint::Delivery&) { delivered = Port::now(); });
  const uint64_t t0 = 0;
  bench.eps[0]->send(1, 64, 1);
  sc_core::sc_start();
  ASSERT_GT(delivered, 0u);
  const uint64_t first_in = t0 + kCable;
  const uint64_t first_out = delivered - kCable - kCodeword;
  const uint64_t p2p = first_out - first_in;
  // Components: the whole ingress codeword (CRC checked before forwarding), the pipeline,
  // the crossbar moving the packet's 86 wire bytes (80 TL bytes x 680 / 628, floored with
  // the remainder carried) at 1.7 Tb/s.
  const uint64_t expect = kCodeword + pipeline_for(cls) + xbar_ps(80 * 680 / 628);
  EXPECT_EQ(p2p, expect);
  ::testing::Test::RecordProperty("port_to_port_ps", std::to_string(p2p));
  const uint64_t limit = ualink_class_limit_ps(cls);
  if (cls == "25.6T")
    EXPECT_LE(p2p, limit);
  else
    EXPECT_LT(p2p, limit);
  // The config check's bound (a whole codeword through the crossbar) covers the measurement
  // and meets the class limit too.
  const PortToPort bound = port_to_port(ualink_switch(cls), tb::ualink_x4(kCable, 64 * 1024));
  EXPECT_GE(bound.total_ps, p2p);
  EXPECT_EQ(bound.total_ps, kCodeword + pipeline_for(cls) + 3'200u);
  EXPECT_LE(bound.total_ps, limit);
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
}

// 64 B read: request (16 B TL) ep0 -> switch -> ep1, turnaround, response (8 B field + 64 B
// data = 72 B TL) ep1 -> switch -> ep0. Each link crossing: one codeword (a lone packet
// waits for its padded codeword) + cable; each switch crossing: pipeline + crossbar.
uint64_t check_read_rtt(const std::string& cls) {
  tb::StarBench bench(2, ualink_switch(cls), accelerator(), tb::ualink_x4(kCable, 64 * 1024));
  uint64_t rtt = 0, bytes = 0, at = 0;
  bench.eps[0]->on_read_done([&](uint32_t target, uint64_t tag, uint64_t b, uint64_t r) {
    EXPECT_EQ(target, 1u);
    EXPECT_EQ(tag, 42u);
    bytes = b;
    rtt = r;
    at = Port::now();
  });
  bench.eps[0]->read(1, 64, 42);
  sc_core::sc_start();
  EXPECT_EQ(bytes, 64u);
  EXPECT_EQ(at, rtt);  // issued at 0
  const uint64_t req_wire = 16 * 680 / 628;   // 17 B
  const uint64_t resp_wire = 72 * 680 / 628;  // 77 B
  const uint64_t expect = 4 * kCodeword + 4 * kCable + 2 * pipeline_for(cls) +
                          xbar_ps(req_wire) + xbar_ps(resp_wire) + kTurnaround;
  EXPECT_EQ(rtt, expect);
  EXPECT_LT(rtt, 1'000'000u);  // REFERENCE case 9: < 1 us round trip
  EXPECT_EQ(bench.eps[0]->reads_completed(), 1u);
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
  ::testing::Test::RecordProperty("rtt_ps", std::to_string(rtt));
  return rtt;
}

}  // namespace

TEST(UALink, PortToPortWithin25T6Limit) { check_port_to_port("25.6T"); }
TEST(UALink, PortToPortWithin51T2Limit) { check_port_to_port("51.2T"); }
TEST(UALink, PortToPortWithin102T4Limit) { check_port_to_port("102.4T"); }

// 25.6T class: 4 x 6.4 + 4 x 20 + 2 x 140 + 0.08 + 0.363 + 200 = 586.04 ns.
TEST(UALink, Read64BRoundTripThroughOneSwitchUnder1us) {
  EXPECT_EQ(check_read_rtt("25.6T"), 586'043u);
}

// The slowest class still makes it: 2 x 240 ns of switch instead of 2 x 140.
TEST(UALink, Read64BRoundTripThrough102T4SwitchUnder1us) {
  EXPECT_EQ(check_read_rtt("102.4T"), 786'043u);
}

// Back-to-back 256 B writes ep0 -> switch -> ep1 (4 MiB) arrive at the framing ceiling:
// 4 x 200 Gb/s x 256 x 628 / (272 x 640) = 738.8 Gb/s of payload (92.35%). Tolerance 0.2%:
// the fixed latency (one codeword per hop, cables, pipeline: ~0.2 us) is 0.4% of the
// 45 us transfer and is subtracted; what remains is framing, exact to a codeword.
TEST(UALink, StreamedWritesThroughSwitchReachTheFramingCeiling) {
  tb::StarBench bench(2, ualink_switch("25.6T"), accelerator(), tb::ualink_x4(kCable, 64 * 1024));
  uint64_t delivered = 0;
  bench.eps[1]->on_delivery([&](const Endpoint::Delivery&) { delivered = Port::now(); });
  const uint64_t bytes = 4ull << 20;
  bench.eps[0]->send(1, bytes, 1);
  sc_core::sc_start();
  const uint64_t fixed = 2 * kCodeword + 2 * kCable + pipeline_for("25.6T");
  const double gbps = double(bytes) * 8 / (double(delivered - fixed) * 1e-12) / 1e9;
  const double ceiling = 800.0 * 256 * 628 / (272.0 * 640);
  ::testing::Test::RecordProperty("payload_gbps", std::to_string(gbps));
  EXPECT_NEAR(gbps / ceiling, 1.0, 0.002);
  // Wire bytes on ep0's port: the stream's exact share, floor(tl x 680 / 628).
  const uint64_t packets = bytes / 256;
  nlohmann::json j = bench.eps[0]->port(0).stats_json(delivered);
  EXPECT_EQ(j["tx_wire_bytes"].get<uint64_t>(), packets * 272 * 680 / 628);
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
}

// Reads are a real mechanism under load: 3 accelerators each issue 64 reads of 256 B to
// ep0 at t = 0. The requests (16 B of TL stream each) reach ep0 in codeword batches from
// 192.88 ns on (6.4 codeword + 20 cable + 140 pipeline + 0.08 crossbar + 6.4 codeword + 20
// cable); ep0's DMA returns each response 200 ns after its request arrived, so its port
// streams 192 responses of 264 TL bytes back to back: 50,688 TL bytes = 81 codewords =
// 518.4 ns; the last codeword (448 TL bytes: the tail of one response and the whole last
// one) then crosses the switch: 20 cable + 140 pipeline + the crossbar moving those two
// responses in turn from ep0's input (2 x 285 wire bytes at 1.7 Tb/s = 2 x 1.341 ns) +
// 6.4 codeword + 20 cable. Expected completion of the last read: 192.88 + 200 + 518.4 +
// 186.4 + 2.682 = 1100.362 ns; tolerance 0.1 ns for the picosecond roundings of the
// crossbar times and the carried wire-byte shares. Every read completes exactly once.
TEST(UALink, ConcurrentReadsStreamAtTheTargetsLinkRate) {
  tb::StarBench bench(4, ualink_switch("25.6T"), accelerator(), tb::ualink_x4(kCable, 64 * 1024));
  uint64_t done = 0, last = 0, bytes = 0;
  for (int r = 1; r <= 3; ++r)
    bench.eps[r]->on_read_done([&](uint32_t target, uint64_t, uint64_t b, uint64_t) {
      EXPECT_EQ(target, 0u);
      ++done;
      bytes += b;
      last = Port::now();
    });
  for (int r = 1; r <= 3; ++r)
    for (uint64_t k = 0; k < 64; ++k) bench.eps[r]->read(0, 256, k);
  sc_core::sc_start();
  EXPECT_EQ(done, 192u);
  EXPECT_EQ(bytes, 192u * 256u);
  const double expect_ns = 192.88 + 200 + 81 * 6.4 + (20 + 140 + 6.4 + 20) + 2 * 285 * 8 / 1700.0;
  ::testing::Test::RecordProperty("last_read_ps", std::to_string(last));
  EXPECT_NEAR(double(last) / 1000.0, expect_ns, 0.1);
  nlohmann::json j = bench.eps[0]->stats_json(last);
  EXPECT_EQ(j["reads_served"].get<uint64_t>(), 192u);
  // ep0's port carried the responses: 192 x 264 TL bytes of wire share.
  EXPECT_EQ(bench.eps[0]->port(0).stats_json(last)["tx_wire_bytes"].get<uint64_t>(),
            192u * 264u * 680u / 628u);
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
}
