// PCIe host path: TLP framing efficiency of the shipped PCIe Gen5 x16 link type, and the
// root complex's host path (models/pcie/host_path.h) timing and throughput.
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "fabrics/config/document.h"
#include "fabrics/config/params.h"
#include "models/link/frame_framing.h"
#include "models/link/link_type.h"
#include "models/pcie/host_path.h"

namespace fabricsim {
namespace {

// The link type of configs/pcie_8gpu.yaml, parsed with the declared link keys, so the
// test and the shipped config cannot drift apart.
cfg::Params pcie_link() {
  const std::string file = std::string(FABRICSIM_SOURCE_DIR) + "/configs/pcie_8gpu.yaml";
  const YAML::Node root = cfg::load_yaml_file(file);
  return cfg::parse_params({"link", "", link_type_specs()}, root["link_types"]["pcie5x16"], file,
                           "link_types.pcie5x16");
}

// Efficiency = payload / (payload + overheads) x 128/130, with overheads per 256 B TLP:
// STP token 4 + sequence number 2 + 4 DW header 16 + LCRC 4 = 26 B (header_bytes) and the
// DLLP share 4 B (gap_bytes: 8 B Ack + 8 B UpdateFC per 4 TLPs); 128b/130b only in the
// lane rate (encoding_efficiency). 256 / 286 x 128/130 = 0.881334.
TEST(PcieFraming, Gen5x16EfficiencyIsPayloadOverPayloadPlusOverheadsTimes128Over130) {
  const cfg::Params p = pcie_link();
  ASSERT_EQ(p.str("framing"), "frame");
  FrameFramingParams fp;
  fp.header_bytes = uint32_t(p.bytes("header_bytes"));
  fp.min_frame_bytes = uint32_t(p.bytes("min_frame_bytes"));
  fp.gap_bytes = uint32_t(p.bytes("gap_bytes"));
  const FrameFraming f(fp);
  const uint32_t payload = uint32_t(p.bytes("packet_payload"));
  EXPECT_EQ(payload, 256u);
  EXPECT_EQ(f.packet_wire_bytes(payload), 256u + 26u + 4u);
  const double encoding = p.real("encoding_efficiency");
  EXPECT_NEAR(encoding, 128.0 / 130.0, 1e-8);  // counted once, here
  const double eff = f.efficiency(payload) * encoding;
  EXPECT_NEAR(eff, 256.0 / 286.0 * 128.0 / 130.0, 1e-8);
  EXPECT_NEAR(eff, 0.881334, 1e-6);
  // Raw: 16 lanes x 32 GT/s = 64 GB/s per direction; after encoding 63.02 GB/s (the
  // published "~63 GB/s" per x16 Gen5); payload 56.41 GB/s.
  const double rate_GBps =
      double(p.integer("lanes")) * double(p.bandwidth_bps("lane_rate")) * encoding / 8e9;
  EXPECT_NEAR(rate_GBps, 63.015, 0.001);
  EXPECT_NEAR(rate_GBps * f.efficiency(payload), 56.41, 0.005);
  // A short packet pays the same overheads: an 8 B flag is 38 B on the wire.
  EXPECT_EQ(f.packet_wire_bytes(8), 38u);
}

HostPathParams bounce() {
  HostPathParams h;
  h.enabled = true;
  h.p2p = false;
  h.rc_bps = 512ull * 8 * 1000000000;      // 512 GB/s per direction
  h.memory_bps = 4608ull * 8 * 100000000;  // 460.8 GB/s
  h.memory_latency_ps = 100000;            // 100 ns
  return h;
}

// One 16 KiB transaction: up 32 ns, memory write + read 2 x 35.5556 ns (carried
// remainder: 35555 + 35556 ps), memory latency 100 ns, down 32 ns.
TEST(HostPath, BounceLatencyIsUpWriteReadLatencyDown) {
  HostPath h(bounce());
  EXPECT_EQ(h.forward(1000, 16384), 1000u + 32000 + 71111 + 100000 + 32000);
  EXPECT_EQ(h.memory_bytes_written(), 16384u);
  EXPECT_EQ(h.memory_bytes_read(), 16384u);
  EXPECT_EQ(h.memory_busy_ps(), 71111u);
}

// Back-to-back transactions: the memory (every byte written and read: 2 x bytes / 460.8
// GB/s) is the bottleneck, so N transactions finish after N x 2b/B_mem plus one pass of
// the other stages; the data path is busy exactly bytes / rate each way.
TEST(HostPath, BounceThroughputIsHalfTheMemoryBandwidth) {
  HostPath h(bounce());
  const uint64_t n = 1000, b = 4096;
  uint64_t last = 0;
  for (uint64_t i = 0; i < n; ++i) last = h.forward(0, b);
  const double mem_ps = 2.0 * double(n * b) * 8e12 / (460.8e9 * 8);
  EXPECT_NEAR(double(h.memory_busy_ps()), mem_ps, 1.0);
  EXPECT_NEAR(double(h.up_busy_ps()), double(n * b) / 512e9 * 1e12, 1.0);
  EXPECT_EQ(h.up_busy_ps(), h.down_busy_ps());
  // Fill (first up, 8 ns) + memory + latency + last down (8 ns).
  EXPECT_NEAR(double(last), 8000 + mem_ps + 100000 + 8000, 2.0);
  // Effective forwarding rate: n x b / time ~ 230.4 GB/s = half of 460.8.
  EXPECT_NEAR(double(n * b) / (mem_ps * 1e-12) / 1e9, 230.4, 1e-6);
}

// p2p: no memory; the root complex data path alone, each byte once up and once down.
TEST(HostPath, P2pSkipsMemoryAndIsLimitedByTheDataPath) {
  HostPathParams p = bounce();
  p.p2p = true;
  p.rc_bps = 10ull * 8 * 1000000000;  // 10 GB/s: the limit
  HostPath h(p);
  EXPECT_EQ(h.forward(0, 1000), 100000u + 100000u);  // 100 ns up, 100 ns down
  uint64_t last = 0;
  for (int i = 0; i < 99; ++i) last = h.forward(0, 1000);
  EXPECT_EQ(last, 100u * 100000 + 100000);  // up pipelined: 100 x 100 ns, then the last down
  EXPECT_EQ(h.memory_bytes_written(), 0u);
  EXPECT_EQ(h.memory_busy_ps(), 0u);
}

// Between independent measurements (RootComplex::reset_dynamic_state) the idle path's
// stages start again as built: a 1000 B transaction leaves carried remainders, after
// which a 4 KiB transaction 1 ms later takes 1 ps longer (133,778 ps) than on a fresh
// path (133,777: 8 ns up, 2 x 8.8889 ns in memory, 100 ns, 8 ns down). After reset() it
// takes what it takes on a fresh path, and so does the next; the statistics are kept.
TEST(HostPath, ResetStartsTheStagesAgainAndKeepsTheStatistics) {
  const uint64_t t0 = 1000000000, t1 = t0 + 1000000;
  HostPath fresh(bounce());
  const uint64_t a = fresh.forward(t0, 4096) - t0, b = fresh.forward(t1, 4096) - t1;
  EXPECT_EQ(a, 133777u);
  HostPath carried(bounce());
  carried.forward(0, 1000);
  EXPECT_EQ(carried.forward(t0, 4096) - t0, a + 1);  // the remainder a reset removes
  HostPath h(bounce());
  h.forward(0, 1000);
  EXPECT_LE(h.idle_at(), t0);
  h.reset();
  EXPECT_EQ(h.forward(t0, 4096) - t0, a);
  EXPECT_EQ(h.forward(t1, 4096) - t1, b);
  EXPECT_EQ(h.bytes_forwarded(), 1000u + 2 * 4096);
  EXPECT_EQ(h.memory_bytes_written(), 1000u + 2 * 4096);
  EXPECT_EQ(h.up_busy_ps(), 1953u + fresh.up_busy_ps());  // 1000 B at 512 GB/s, then 2 x 8 ns
}

}  // namespace
}  // namespace fabricsim
