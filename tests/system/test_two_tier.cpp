// System tests for the two-tier scale-up domain (topology two_tier, configs/nvl576_two_tier.yaml):
// the generator's wiring through its hop latencies, the full 576-GPU config's size, a
// non-blocking spine tier that costs a ring all-reduce nothing, and a tapered one that
// bounds all-to-all at the leaf uplinks, as the analytic ceiling predicts.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "tests/system/system_util.h"

using namespace fabricsim::systest;
using nlohmann::json;

namespace {

const std::string kConfig = "configs/nvl576_two_tier.yaml";

std::vector<std::string> cat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

json run_ok(const std::vector<std::string>& extra, const std::string& name) {
  RunResult r = run_fabricsim(cat({"run", source(kConfig), "--quiet"}, extra), fresh_dir(name));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0) return json();
  expect_accounting_clean(r.results);
  return r.results;
}

// The shipped config cut down to 16 GPUs with 2 planes: 2 racks, leaves of 4 GPUs (4 leaves
// per plane), 2 spines per plane; leaf_up 4 is non-blocking, 2 is a 2:1 taper.
std::vector<std::string> small(int leaf_up) {
  return {"--set", "device_types.b200.ports=2",    "--set", "topology.endpoints=16",
          "--set", "topology.racks=2",             "--set", "topology.leaf_down=4",
          "--set", "topology.leaf_up=" + std::to_string(leaf_up),
          "--set", "topology.spines_per_plane=2"};
}

std::vector<std::string> alltoall(const std::string& bytes) {
  return {"--set", "workload.type=collective_sweep", "--set", "workload.collective=alltoall",
          "--set", "workload.algorithm=direct",      "--set", "workload.channels=1",
          "--set", "workload.min_bytes=" + bytes,    "--set", "workload.max_bytes=" + bytes,
          // the fabric's bound alone: no kernel launch and completion (5 us per collective)
          "--set", "workload.launch_latency=0ns",    "--set", "workload.completion_latency=0ns"};
}

}  // namespace

// One 64 B write between two GPUs (sync: data, one plane), on the same leaf and on leaves
// in different racks. Per switch the frame adds pipeline (250 ns) + the crossbar at link
// rate x speedup 2 (s / 2); every link adds serialisation s = 96 wire bytes (4 data + 2
// overhead flits of 16 B) / 50 GB/s = 1.92 ns and its latency (25 ns copper, 150 ns
// optical uplinks). Same leaf: 2s + 2 x 25 + 250 + s/2 = 304.80 ns. Across the spine:
// 4s + 2 x 25 + 2 x 150 + 3 x (250 + s/2) = 1110.56 ns. Exact to the picosecond: a wrong
// port on either tier, or a route through an extra switch, changes it by >= 250 ns.
TEST(TwoTier, CrossLeafWriteCrossesLeafSpineLeafAtTheClosedFormLatency) {
  const std::vector<std::string> base{
      "--set", "workload.type=collective_sweep", "--set", "workload.collective=sendrecv",
      "--set", "workload.algorithm=direct",      "--set", "workload.channels=1",
      "--set", "workload.min_bytes=64B",         "--set", "workload.max_bytes=64B",
      "--set", "workload.sync=data",             "--set", "device_types.b200.ports=1",
      // the fabric's latency alone: no kernel launch or completion around the write
      "--set", "workload.launch_latency=0ns",    "--set", "workload.completion_latency=0ns",
      "--set", "topology.endpoints=2",           "--set", "topology.leaf_up=1",
      "--set", "topology.spines_per_plane=1"};
  const json same = run_ok(
      cat(base, {"--set", "topology.racks=1", "--set", "topology.leaf_down=2"}), "tt_same");
  const json cross = run_ok(
      cat(base, {"--set", "topology.racks=2", "--set", "topology.leaf_down=1"}), "tt_cross");
  ASSERT_FALSE(same.is_null() || cross.is_null());
  const double s_ns = 96.0 / 50.0;
  EXPECT_NEAR(row_of(same, 64)["time_us"].get<double>() * 1e3,
              2 * s_ns + 2 * 25 + 250 + s_ns / 2, 1e-3);
  EXPECT_NEAR(row_of(cross, 64)["time_us"].get<double>() * 1e3,
              4 * s_ns + 2 * 25 + 2 * 150 + 3 * (250 + s_ns / 2), 1e-3);
  // The write went up and down the only path: leaf, spine, the other rack's leaf.
  const json& st = cross["stats"];
  for (const char* port : {"l1_r0_p0_0.port[1]", "l2_p0_0.port[1]", "l1_r1_p0_0.port[0]"})
    EXPECT_GT(st[port]["tx_payload_bytes"].get<uint64_t>(), 0u) << port;
}

// The shipped 576-GPU domain (checked with one channel: the 16-channel ring schedule of 576
// ranks alone takes 2 GB and 8 s to build): 576 GPUs + 18 planes x (8 racks x 2 leaves + 9
// spines) = 1026 devices; 576 x 18 GPU links + 288 leaves x 36 uplinks = 20,736 links.
TEST(TwoTier, Nvl576ConfigBuildsEighteenPlanesOfLeavesAndSpines) {
  const RunResult r =
      run_fabricsim({"check", source(kConfig), "--set", "workload.channels=1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("ok (1026 devices, 20736 links, 576 ranks)"), std::string::npos) << r.out;
}

// Non-blocking (leaf_up = leaf_down): a 64 MiB ring all-reduce on 16 GPUs in two racks
// reaches the GPU links' 80 GB/s (2 x 50 GB/s x 128/160) as on one tier: the rack
// crossings add only latency. Measured 79.81 GB/s on two tiers, 79.93 on one leaf per
// plane; the 2% margin is 10x the 0.15% the extra hops cost.
TEST(TwoTier, NonBlockingSpineTierCostsARingAllReduceOnlyLatency) {
  const std::vector<std::string> size{"--set", "workload.min_bytes=64MiB", "--set",
                                      "workload.max_bytes=64MiB"};
  const json two = run_ok(cat(small(4), size), "tt_ring2");
  std::vector<std::string> one = small(2);
  one[5] = "topology.racks=1";
  one[7] = "topology.leaf_down=16";
  const json flat = run_ok(cat(one, size), "tt_ring1");
  ASSERT_FALSE(two.is_null() || flat.is_null());
  const double b2 = row_of(two, 64ull << 20)["busbw_GBps"].get<double>();
  const double b1 = row_of(flat, 64ull << 20)["busbw_GBps"].get<double>();
  RecordProperty("busbw_two_tier_GBps", std::to_string(b2));
  RecordProperty("busbw_one_tier_GBps", std::to_string(b1));
  EXPECT_NEAR(two["ceiling"]["busbw_GBps"].get<double>(), 80.0, 1e-9);
  EXPECT_GT(b2, 0.98 * b1);
  EXPECT_GT(b2, 0.97 * 80.0);
  EXPECT_LE(b2, 80.0 * 1.0005);
}

// A 16 MiB direct all-to-all: 12 of every GPU's 15 destinations are on other leaves. Per
// plane a leaf sends 4 GPUs x 12 x S/16 / 2 planes = 1.5 S up its uplinks. Non-blocking
// (4 uplinks): the GPU links bound it (busbw ceiling 80 GB/s); tapered 2:1 (2 uplinks of
// 40 GB/s payload) the uplinks do: time = 1.5 S / 80 GB/s, busbw = (15/16) x 80 / 1.5 =
// 50 GB/s, and the ceiling must name a leaf uplink. Measured 78.66 and 46.73 GB/s (98.3%
// and 93.5% of their ceilings: the last transactions of an adaptive spread do not finish
// together); bounds: >= 95% non-blocking, >= 88% tapered, the taper at least 1.5x slower.
// Adaptive routing spreads the tapered leaf's load: its 2 uplinks carry within 5%.
TEST(TwoTier, TaperedSpineTierBoundsAllToAllAtTheLeafUplinks) {
  const json full = run_ok(cat(small(4), alltoall("16MiB")), "tt_a2a4");
  const json taper = run_ok(cat(small(2), alltoall("16MiB")), "tt_a2a2");
  ASSERT_FALSE(full.is_null() || taper.is_null());
  const json& rf = row_of(full, 16ull << 20);
  const json& rt = row_of(taper, 16ull << 20);
  RecordProperty("busbw_nonblocking_GBps", std::to_string(rf["busbw_GBps"].get<double>()));
  RecordProperty("busbw_tapered_GBps", std::to_string(rt["busbw_GBps"].get<double>()));
  EXPECT_NEAR(full["ceiling"]["busbw_GBps"].get<double>(), 80.0, 1e-9);
  EXPECT_NEAR(taper["ceiling"]["busbw_GBps"].get<double>(), 50.0, 1e-9);
  const std::string limit = taper["ceiling"]["limited_by"].get<std::string>();
  EXPECT_TRUE(std::regex_match(limit, std::regex(R"(l1_r\d_p\d_\d\.port\[[45]\] tx)"))) << limit;
  EXPECT_GE(rf["busbw_GBps"].get<double>(), 0.95 * 80.0);
  EXPECT_LE(rf["busbw_GBps"].get<double>(), 80.0 * 1.0005);
  EXPECT_GE(rt["busbw_GBps"].get<double>(), 0.88 * 50.0);
  EXPECT_LE(rt["busbw_GBps"].get<double>(), 50.0 * 1.0005);
  EXPECT_GT(rt["time_us"].get<double>(), 1.5 * rf["time_us"].get<double>());
  const double u4 = taper["stats"]["l1_r0_p0_0.port[4]"]["tx_payload_bytes"].get<double>();
  const double u5 = taper["stats"]["l1_r0_p0_0.port[5]"]["tx_payload_bytes"].get<double>();
  EXPECT_GT(u4, 0.0);
  EXPECT_NEAR(u4 / u5, 1.0, 0.05);
}
