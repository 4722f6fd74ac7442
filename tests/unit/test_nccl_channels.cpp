// channels: auto: NCCL's channel count from the topology (models/collectives/nccl_channels.h,
// fabrics/systems/auto_channels.h). The counts are the rule worked by hand from NCCL
// v2.27.3's search (docs/collectives.md, "channels: auto"), and where public logs print
// them they agree: 8 x H100 one node "24 coll channels" (AWS p5), 8 x H800 "16 coll
// channels" (NVIDIA/nccl#892), 8 x A100 "24 coll channels", B200 / GB200 "32 coll channels".
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "fabrics/systems/system_spec.h"
#include "models/collectives/nccl_channels.h"
#include "models/core/errors.h"

namespace fabricsim {
namespace {

using coll::NcclSearchInput;
using coll::nccl_channels;

NcclSearchInput nvswitch_node(int cc, int links, int gpus) {
  NcclSearchInput in;
  in.compute_capability = cc;
  in.gpus_per_node = gpus;
  in.nodes = 1;
  in.nvlink_GBps = links * coll::nccl_nvlink_GBps(cc);
  return in;
}

// One node of 8 H100 (18 NVLink4 links: 18 x 20.6 = 370.8 GB/s): the intra speeds of SM90
// start at 60 GB/s: 6 channels fit (360); 50 gives 7 x 50 = 350, 40 gives 9 x 40 = 360
// and 30 gives 12 x 30 = 360, none strictly better, and 24 / 60 < .49 stops the descent.
// ncclTopoDupChannels doubles (60 >= 25, not below 50) to 12 x 30; no higher speed holds
// 12 (9 at 40); ncclTopoPostset doubles to 24.
TEST(NcclChannels, DgxH100OneNodeIs24) {
  const coll::NcclSearchResult r = nccl_channels(nvswitch_node(90, 18, 8));
  EXPECT_EQ(r.searched, 6);
  EXPECT_DOUBLE_EQ(r.searched_GBps, 60);
  EXPECT_EQ(r.graph, 12);
  EXPECT_DOUBLE_EQ(r.graph_GBps, 30);
  EXPECT_EQ(r.channels, 24);
}

// H800 (8 links, 164.8 GB/s): 2 x 60, 3 x 50, then 4 x 40 = 160 is the best; 4 channels are
// not "more than 4", so they double to 8 x 20; Postset: 16 (NVIDIA/nccl#892 prints 16).
// A100 (SM80, 12 x 20 = 240): 6 x 40 = 240 reaches totalBw; SM80 doubles (cc 80 is not
// above 80) to 12 x 20; 24. B200 (SM100, 18 x 40 = 720): 8 x 90 = 720, doubled to 16 x 45,
// no higher speed holds 16 (14 at 50); 32.
TEST(NcclChannels, OtherNvSwitchNodesMatchTheirLogs) {
  EXPECT_EQ(nccl_channels(nvswitch_node(90, 8, 8)).channels, 16);
  EXPECT_EQ(nccl_channels(nvswitch_node(80, 12, 8)).channels, 24);
  const coll::NcclSearchResult b200 = nccl_channels(nvswitch_node(100, 18, 8));
  EXPECT_EQ(b200.searched, 8);
  EXPECT_DOUBLE_EQ(b200.searched_GBps, 90);
  EXPECT_EQ(b200.channels, 32);
  // 72 GPUs in one NVLink domain: the same per-GPU figures, the same count.
  EXPECT_EQ(nccl_channels(nvswitch_node(100, 18, 72)).channels, 32);
}

// Two nodes of 8 H100, one 400 Gb/s (50 GB/s) NIC per GPU: inter speeds of SM90 start at
// 48 GB/s: 8 channels (one per NIC each way; 7 NVLink hops per channel spread over 8 GPUs,
// 7 x 48 of 370.8 each), 8 x 48 = 384 >= 370.8 ends the search; 48 < 50 with more than 4
// channels: no duplication; Postset: 16; bw 48 > 45 but 16 is not below 16: no more.
TEST(NcclChannels, TwoDgxH100WithEightNicsIs16) {
  NcclSearchInput in = nvswitch_node(90, 18, 8);
  in.nodes = 2;
  in.nics_per_gpu = 1;
  in.nic_GBps = 50;
  const coll::NcclSearchResult r = nccl_channels(in);
  EXPECT_EQ(r.searched, 8);
  EXPECT_DOUBLE_EQ(r.searched_GBps, 48);
  EXPECT_EQ(r.graph, 8);
  EXPECT_EQ(r.channels, 16);
}

// One H100 per node with its 400 Gb/s NIC (NVIDIA/nccl-tests#232): 1 x 48; 24 / 48 = .5
// gives 2 x 24 = 48, not better; duplicated (one channel) to 2 x 24; 30 and above hold
// only 1; Postset: 4.
TEST(NcclChannels, OneGpuPerNodeOneNicIs4) {
  NcclSearchInput in = nvswitch_node(90, 18, 1);
  in.nodes = 2;
  in.nics_per_gpu = 1;
  in.nic_GBps = 50;
  const coll::NcclSearchResult r = nccl_channels(in);
  EXPECT_EQ(r.searched, 1);
  EXPECT_DOUBLE_EQ(r.searched_GBps, 48);
  EXPECT_EQ(r.graph, 2);
  EXPECT_DOUBLE_EQ(r.graph_GBps, 24);
  EXPECT_EQ(r.channels, 4);
}

// The same counts read off the shipped configs' topologies (auto_channels.cpp).
int auto_channels(const std::string& config, std::vector<std::string> sets) {
  sets.push_back("workload.channels=auto");
  const SystemSpec s =
      load_system(std::string(FABRICSIM_SOURCE_DIR) + "/configs/" + config, sets, std::nullopt);
  EXPECT_TRUE(s.workload.channels_auto);
  return s.workload.channels;
}

TEST(NcclChannels, ShippedTopologiesGiveTheRulesCounts) {
  EXPECT_EQ(auto_channels("dgx_h100.yaml", {}), 24);
  EXPECT_EQ(auto_channels("2x_dgx_h100_ib.yaml", {}), 16);
  EXPECT_EQ(auto_channels("2x_dgx_h100_ib.yaml", {"topology.endpoints_per_node=1"}), 4);
  EXPECT_EQ(auto_channels("dgx_a100.yaml", {"workload.nccl_compute_capability=80"}), 24);
  EXPECT_EQ(auto_channels("hgx_b200.yaml", {"workload.nccl_compute_capability=100"}), 32);
}

// Where NCCL's rule does not apply, auto is refused at workload.channels.
TEST(NcclChannels, AutoIsRefusedWhereTheRuleDoesNotApply) {
  for (const char* config : {"ualink_pod8.yaml", "mi300x_mesh.yaml"}) {
    try {
      auto_channels(config, {});
      ADD_FAILURE() << config << " accepted channels: auto";
    } catch (const InputError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("workload.channels: channels: auto"), std::string::npos) << m;
      EXPECT_NE(m.find("set workload.channels to a number"), std::string::npos) << m;
    }
  }
}

}  // namespace
}  // namespace fabricsim
