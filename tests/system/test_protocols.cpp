// System tests of the collective protocol model (models/collectives/protocol.h,
// engine_protocol.cpp): each protocol's wire format byte for byte, rows that are
// independent measurements, and the DGX H100 size curve against a public nccl-tests curve.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/system/system_util.h"

using namespace fabricsim::systest;
using nlohmann::json;

namespace {

json run_ok(const std::vector<std::string>& args, const std::string& name) {
  RunResult r = run_fabricsim(args, fresh_dir(name));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0) return json();
  expect_accounting_clean(r.results);
  return r.results;
}

std::vector<std::string> cat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<std::string> sizes(const std::string& lo, const std::string& hi,
                               const std::string& step = "2") {
  return {"--set", "workload.min_bytes=" + lo, "--set", "workload.max_bytes=" + hi, "--set",
          "workload.step_factor=" + step};
}

// One 1 MiB send/recv each way between the two GPUs of configs/nvlink4_pair.yaml (one
// NVLink4 link, 128 B packets, 2 overhead flits of 16 B each), under protocol `proto`.
// gpu0's port carries gpu0's data in the protocol's line format and, for the data gpu1
// writes to it, the reader's messages: per step of that data a head update (8 B, NCCL's
// slot release) and for Simple also the ack of the writes (16 B) that retires the writer's
// fence; for its own Simple steps the flag (8 B). LL and LL128 carry their flags inline:
// no flag and no ack. Every control message is one packet of one 16 B data flit.
struct WireCase {
  const char* proto;
  uint64_t format_bytes;  // the line format of S = 1 MiB
  uint64_t steps;         // steps of S (one buffer slot each)
  uint64_t control_bytes_per_step;
  uint64_t control_packets_per_step;
};

class ProtocolWire : public ::testing::TestWithParam<WireCase> {};

TEST_P(ProtocolWire, PortBytesAreTheLineFormatExactly) {
  const WireCase c = GetParam();
  const uint64_t S = 1ull << 20;
  const json r = run_ok(cat({"run", source("configs/nvlink4_pair.yaml"), "--quiet", "--set",
                             "workload.sync=fence_flag", "--set",
                             std::string("workload.protocol=") + c.proto, "--set",
                             "workload.channels=1", "--set", "workload.flag_bytes=8B", "--set",
                             "workload.ack_bytes=16B", "--set", "workload.ll_chunk_bytes=32KiB",
                             "--set", "workload.ll128_chunk_bytes=576000B", "--set",
                             "workload.chunk_bytes=512KiB"},
                            sizes("1MiB", "1MiB")),
                        std::string("wire_") + c.proto);
  ASSERT_FALSE(r.is_null());
  const json& p = r["stats"]["gpu0.port[0]"];
  const uint64_t payload = p["tx_payload_bytes"].get<uint64_t>();
  const uint64_t packets = p["tx_packets"].get<uint64_t>();
  const uint64_t wire = p["tx_wire_bytes"].get<uint64_t>();
  const uint64_t data_packets = (c.format_bytes + 127) / 128;
  EXPECT_EQ(payload, c.format_bytes + c.steps * c.control_bytes_per_step) << c.proto;
  EXPECT_EQ(packets, data_packets + c.steps * c.control_packets_per_step) << c.proto;
  // Link framing on top: 32 B per packet; a control message pads to one 16 B flit.
  EXPECT_EQ(wire, c.format_bytes + 32 * data_packets + 48 * c.steps * c.control_packets_per_step)
      << c.proto;
  // The format's efficiency: wire payload over data.
  RecordProperty("format_over_data", std::to_string(double(c.format_bytes) / double(S)));
}

// LL: 8 B lines of 4 B data + 4 B flag: 2 S. LL128: 128 B lines of 120 B data:
// ceil(S / 120) x 128 = 8739 x 128. Simple: the data itself.
INSTANTIATE_TEST_SUITE_P(
    Formats, ProtocolWire,
    ::testing::Values(WireCase{"ll", 2ull << 20, (1ull << 20) / (32 << 10), 8, 1},
                      WireCase{"ll128", ((1ull << 20) + 119) / 120 * 128,
                               ((1ull << 20) + 575999) / 576000, 8, 1},
                      WireCase{"simple", 1ull << 20, 2, 8 + 16 + 8, 3}),
    [](const ::testing::TestParamInfo<WireCase>& i) { return std::string(i.param.proto); });

// Every row is an independent measurement: the sweep waits until every device is idle and
// resets the fabric's dynamic state between rows (credits, replay buffers, link-layer
// remainders, entropy streams, round-robin pointers), so a row gives the same time alone,
// first, last or in the middle of any sweep. Exact (the simulation is deterministic).
TEST(IndependentRows, SameRowAloneAndInsideAnySweep) {
  // DGX H100 with NVLS off and auto (LL, LL128 and Simple rows), 1 MiB; DGX H100 as
  // shipped (NVLS switches, the ring) at 64 MiB; and its NVLS all-reduce at 1 MiB.
  struct Case {
    std::vector<std::string> base;
    uint64_t bytes;
    std::vector<std::vector<std::string>> sweeps;
  };
  const std::vector<Case> cases = {
      {{"--set", "device_types.nvswitch3.nvls=false", "--set", "workload.algorithm=auto"},
       1ull << 20,
       {sizes("1MiB", "1MiB"), sizes("4B", "1MiB", "4"), sizes("1MiB", "4MiB"),
        sizes("256KiB", "4MiB")}},
      {{}, 64ull << 20, {sizes("64MiB", "64MiB"), sizes("16MiB", "64MiB"), sizes("64MiB", "128MiB")}},
      // NVLS all-reduce: the GPUs' rotation over their NVLS links for group messages and
      // the NVLS units' pipelines (docs/architecture.md, "The NVLS unit's pipeline").
      {{"--set", "workload.algorithm=nvls"}, 1ull << 20,
       {sizes("1MiB", "1MiB"), sizes("256KiB", "1MiB"), sizes("512KiB", "4MiB")}},
  };
  int k = 0;
  for (const Case& c : cases) {
    std::vector<double> times;
    for (const auto& sw : c.sweeps) {
      const json r = run_ok(cat(cat({"run", source("configs/dgx_h100.yaml"), "--quiet"}, c.base), sw),
                            "rows" + std::to_string(k++));
      ASSERT_FALSE(r.is_null());
      times.push_back(row_of(r, c.bytes)["time_us"].get<double>());
    }
    for (size_t i = 1; i < times.size(); ++i)
      EXPECT_EQ(times[i], times[0]) << c.bytes << " B, sweep " << i;
  }
}

// The public curve (REFERENCE case 11): 8 x H20 (NVLink4 behind NVSwitch, 900 GB/s class),
// nccl-tests 2.19.7 all_reduce_perf, float (kvcache-ai/Mooncake PR #3484); the 4 B floor
// ~12.5 us (deepseek-ai/DeepEP issue #303). DGX H100 with NVLS off and auto must meet it
// within 15% from 1 MiB to 1 GiB, 25% from 32 KiB to 1 MiB, 30% at 4 B (the issue's
// acceptance). The time is compared (busbw is the same ratio).
TEST(DgxH100Curve, NvlsOffAutoMeetsThePublicNcclTestsCurve) {
  const std::vector<std::pair<uint64_t, double>> measured_us = {
      {32ull << 10, 18.66},  {64ull << 10, 18.95},   {128ull << 10, 19.25},
      {256ull << 10, 19.54}, {512ull << 10, 20.39},  {1ull << 20, 27.76},
      {2ull << 20, 40.66},   {4ull << 20, 53.24},    {8ull << 20, 81.16},
      {16ull << 20, 121.33}, {32ull << 20, 195.40},  {128ull << 20, 700.25},
      {256ull << 20, 1366.17}, {512ull << 20, 2671.60}, {1ull << 30, 5252.64}};
  const std::vector<std::string> base = {"run", source("configs/dgx_h100.yaml"), "--quiet",
                                         "--set", "device_types.nvswitch3.nvls=false",
                                         "--set", "workload.algorithm=auto"};
  const json r = run_ok(cat(base, sizes("32KiB", "1GiB")), "curve");
  ASSERT_FALSE(r.is_null());
  for (const auto& [bytes, want] : measured_us) {
    const double got = row_of(r, bytes)["time_us"].get<double>();
    const double err = got / want - 1;
    RecordProperty("err_" + std::to_string(bytes), std::to_string(err));
    const double tol = bytes >= (1ull << 20) ? 0.15 : 0.25;
    EXPECT_LE(std::fabs(err), tol) << bytes << " B: " << got << " us against " << want;
  }
  const json f = run_ok(cat(base, sizes("4B", "4B")), "floor");
  ASSERT_FALSE(f.is_null());
  const double floor_us = row_of(f, 4)["time_us"].get<double>();
  RecordProperty("floor_us", std::to_string(floor_us));
  EXPECT_LE(std::fabs(floor_us / 12.5 - 1), 0.30) << floor_us;
}

}  // namespace

namespace {

// Full mesh (configs/mi300x_mesh.yaml: 7 xGMI links per GPU, no switch): the ring search
// over distinct links gives every channel its own ring order, so all of a GPU's links
// carry traffic and the ring's busbw grows with the GPU count as links are added: 2 GPUs
// have one link between them, 8 GPUs seven. Measured at 256 MiB (Simple): 47.93, 133.92,
// 222.91, 333.00 GB/s for 2, 4, 6, 8 GPUs. The bound: 8 GPUs >= 5x 2 GPUs (a
// single ring order would give one link's busbw whatever the count), and every step up
// adds bandwidth.
TEST(FullMesh, RingBusBwGrowsWithTheGpuCountAsLinksAreAdded) {
  std::vector<double> busbw;
  for (int n : {2, 4, 6, 8}) {
    const json r = run_ok(cat({"run", source("configs/mi300x_mesh.yaml"), "--quiet", "--set",
                               "topology.endpoints=" + std::to_string(n), "--set",
                               "device_types.mi300x.ports=" + std::to_string(n - 1)},
                              sizes("256MiB", "256MiB")),
                          "mesh" + std::to_string(n));
    ASSERT_FALSE(r.is_null());
    busbw.push_back(row_of(r, 256ull << 20)["busbw_GBps"].get<double>());
    RecordProperty("busbw_GBps_" + std::to_string(n), std::to_string(busbw.back()));
  }
  for (size_t i = 1; i < busbw.size(); ++i) EXPECT_GT(busbw[i], busbw[i - 1] * 1.3) << i;
  EXPECT_GE(busbw.back(), 5 * busbw.front());
}

}  // namespace
