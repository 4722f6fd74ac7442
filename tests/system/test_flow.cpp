// The flow level (simulation.fidelity: flow, docs/fidelity.md) against the packet and
// transaction levels on the same configs, folding against the whole system, and its bad
// inputs.
#include <string>
#include <vector>

#include "tests/system/system_util.h"

namespace fabricsim::systest {
namespace {

// Runs `config` with `sets` at the shipped fidelity and at flow; returns both results.
std::pair<nlohmann::json, nlohmann::json> both(const std::string& name, const std::string& config,
                                               const std::vector<std::string>& sets) {
  std::vector<std::string> args{"run", source(config), "--quiet"};
  for (const std::string& s : sets) args.insert(args.end(), {"--set", s});
  RunResult ref = run_fabricsim(args, fresh_dir(name + "_ref"));
  EXPECT_EQ(ref.exit_code, 0) << ref.err;
  args.insert(args.end(), {"--set", "simulation.fidelity=flow"});
  RunResult flow = run_fabricsim(args, fresh_dir(name + "_flow"));
  EXPECT_EQ(flow.exit_code, 0) << flow.err;
  return {ref.results, flow.results};
}

// Bandwidth-bound ring all-reduces on one switched node: every message crosses one
// switch, the flow level's max-min fair share is the packet level's link rate after
// framing, and per-hop latency is small against the transfer. Both run the idealised
// transport (sync: data, protocol simple), the flow level's max-min sharing without the
// protocol model (the shipped transport: AgreesWithPacketLevelOnDgxH100AsShipped). docs/fidelity.md measures
// -0.03..-0.29% (DGX H100, 4 MiB..8 GiB) and +0.06..+0.15% (UALink 8, 8 MiB..1 GiB); the
// tolerance, 1%, leaves room for the pipeline fill of the flow level's fluid transfers.
TEST(Flow, AgreesWithTransactionLevelOnDgxH100) {
  auto [ref, flow] = both("flow_dgx", "configs/dgx_h100.yaml",
                          {"workload.min_bytes=8MiB", "workload.max_bytes=64MiB",
                           "workload.sync=data", "workload.protocol=simple"});
  ASSERT_EQ(ref["rows"].size(), 4u);
  ASSERT_EQ(flow["rows"].size(), 4u);
  EXPECT_EQ(flow["resolved_config"]["simulation"]["fidelity"], "flow");
  for (size_t i = 0; i < 4; ++i) {
    const double r = ref["rows"][i]["time_us"].get<double>();
    const double f = flow["rows"][i]["time_us"].get<double>();
    EXPECT_NEAR(f / r, 1.0, 0.01) << ref["rows"][i]["size_bytes"] << " B: " << r << " vs " << f;
  }
  // The flow level ran flows, not packets, and accounted for every byte.
  EXPECT_GT(flow["flow"]["flows"].get<uint64_t>(), 0u);
  EXPECT_EQ(flow["checks"]["payload_bytes_sent"], flow["checks"]["payload_bytes_delivered"]);
  EXPECT_EQ(flow["run_cost"]["packet_hops"].get<uint64_t>(), 0u);
}

TEST(Flow, AgreesWithTransactionLevelOnUalinkPod8) {
  auto [ref, flow] = both("flow_ua", "configs/ualink_pod8.yaml",
                          {"workload.min_bytes=8MiB", "workload.max_bytes=64MiB",
                           "workload.sync=data", "workload.protocol=simple"});
  ASSERT_EQ(ref["rows"].size(), 4u);
  ASSERT_EQ(flow["rows"].size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    const double r = ref["rows"][i]["time_us"].get<double>();
    const double f = flow["rows"][i]["time_us"].get<double>();
    EXPECT_NEAR(f / r, 1.0, 0.01) << ref["rows"][i]["size_bytes"] << " B: " << r << " vs " << f;
  }
}

// The shipped DGX H100 config AS SHIPPED (sync: fence_flag, protocol: auto): both levels
// run the same schedules (LL at 1 MiB, LL128 at 2-16 MiB, Simple from 32 MiB, the library's
// per-protocol channels and steps) under the engine's protocol model (thread blocks at
// their channel rate, slots, fences, flags, polls, LL's 32 B stores). docs/fidelity.md
// measures -0.34..+0.24% from 2 MiB to 128 MiB and -3.9% at 1 MiB (LL: latency-bound,
// 14 steps of a few microseconds each, where the fluid transfer's pipeline fill and the
// packet level's per-packet arbitration differ most); tolerances 1% and 5% (the issue's
// threshold) keep both with a margin. Without the protocol model at flow level (the
// Simple schedule of the raw workload at every size) the errors were -23% to -52%.
TEST(Flow, AgreesWithPacketLevelOnDgxH100AsShipped) {
  auto [ref, flow] = both("flow_dgx_shipped", "configs/dgx_h100.yaml",
                          {"workload.min_bytes=1MiB", "workload.max_bytes=64MiB"});
  ASSERT_EQ(ref["rows"].size(), 7u);
  ASSERT_EQ(flow["rows"].size(), 7u);
  for (size_t i = 0; i < 7; ++i) {
    // The same protocol per size at both levels.
    EXPECT_EQ(flow["rows"][i]["algorithm"], ref["rows"][i]["algorithm"]) << i;
    const double r = ref["rows"][i]["time_us"].get<double>();
    const double f = flow["rows"][i]["time_us"].get<double>();
    EXPECT_NEAR(f / r, 1.0, i == 0 ? 0.05 : 0.01)
        << ref["rows"][i]["size_bytes"] << " B (" << ref["rows"][i]["algorithm"] << "): " << r
        << " vs " << f;
  }
  EXPECT_EQ(ref["rows"][0]["algorithm"], "ring/ll");
  EXPECT_EQ(ref["rows"][1]["algorithm"], "ring/ll128");
  EXPECT_EQ(ref["rows"][6]["algorithm"], "ring/simple");
}

// The GB200 NVL72 config as shipped (32 channels, fence_flag, protocol auto) on 16 of its
// GPUs, 64 MiB: the shape of the 1 GiB cross-check row at a size that runs per packet in
// seconds (58 KiB ring messages over 18 planes, one aggregated transaction per port, as
// the 72-GPU ring's 58-233 KiB messages at 256 MiB-1 GiB). Against per packet the flow
// level is -0.7% (253.03 / 254.75 us). The reference is per packet: the transaction level
// was +18.0% here (300.60 us; 72 GPUs at 256 MiB: +18.6%) until it held only a message's
// last packet for its thread block's pass (-0.8% now, test
// Aggregation.Gb200Nvl72RingHeldLastPacketAgreesWithPerPacket; docs/fidelity.md,
// "Cross-check"). Tolerance 2%: the measured error with a margin.
TEST(Flow, AgreesWithPerPacketOnGb200Nvl72Shape) {
  auto [ref, flow] = both("flow_gb200_16", "configs/gb200_nvl72.yaml",
                          {"topology.endpoints=16", "workload.min_bytes=64MiB",
                           "workload.max_bytes=64MiB", "simulation.aggregate_bytes=0B"});
  ASSERT_EQ(ref["rows"].size(), 1u);
  ASSERT_EQ(flow["rows"].size(), 1u);
  // Per packet: every transaction is one packet.
  EXPECT_EQ(ref["run_cost"]["transaction_hops"], ref["run_cost"]["packet_hops"]);
  EXPECT_EQ(flow["rows"][0]["algorithm"], ref["rows"][0]["algorithm"]);
  const double r = ref["rows"][0]["time_us"].get<double>();
  const double f = flow["rows"][0]["time_us"].get<double>();
  EXPECT_NEAR(f / r, 1.0, 0.02) << r << " vs " << f;
}

// Folding is exact: 8 DGX H100 nodes on InfiniBand rails, ring (period two nodes) and
// hierarchical (one node), give the same times folded as whole, with 16 and 8 ranks run
// instead of 64.
TEST(Flow, FoldedRunEqualsWholeRun) {
  for (const char* algo : {"ring", "hierarchical"}) {
    std::vector<std::string> args{"run",
                                  source("configs/32x_dgx_h100_rail.yaml"),
                                  "--quiet",
                                  "--set", "topology.scale_out=infiniband",
                                  "--set", "topology.nodes=8",
                                  "--set", "workload.min_bytes=16MiB",
                                  "--set", "workload.max_bytes=64MiB",
                                  "--set", std::string("workload.algorithm=") + algo,
                                  "--set", "simulation.fidelity=flow"};
    RunResult whole = run_fabricsim(args, fresh_dir(std::string("flow_whole_") + algo));
    ASSERT_EQ(whole.exit_code, 0) << whole.err;
    args.insert(args.end(), {"--set", "simulation.flow_fold=true"});
    RunResult fold = run_fabricsim(args, fresh_dir(std::string("flow_fold_") + algo));
    ASSERT_EQ(fold.exit_code, 0) << fold.err;
    EXPECT_EQ(whole.results["flow"]["ranks_simulated"], 64);
    EXPECT_EQ(fold.results["flow"]["ranks_simulated"], std::string(algo) == "ring" ? 16 : 8);
    ASSERT_EQ(whole.results["rows"].size(), 2u);
    for (size_t i = 0; i < 2; ++i)
      EXPECT_NEAR(fold.results["rows"][i]["time_us"].get<double>(),
                  whole.results["rows"][i]["time_us"].get<double>(), 1e-6)
          << algo << " row " << i;
  }
}

TEST(Flow, BadInputsExitTwo) {
  // A schedule that is not shift-invariant (tree) cannot be folded.
  RunResult tree = run_fabricsim({"run", source("configs/32x_dgx_h100_rail.yaml"), "--quiet",
                                  "--set", "topology.scale_out=infiniband", "--set",
                                  "workload.algorithm=tree", "--set",
                                  "workload.max_bytes=64MiB", "--set",
                                  "simulation.fidelity=flow", "--set",
                                  "simulation.flow_fold=true"});
  EXPECT_EQ(tree.exit_code, 2) << tree.err;
  EXPECT_NE(tree.err.find("simulation.flow_fold: the tree/simple schedule is not invariant"),
            std::string::npos)
      << tree.err;
  // In-switch reduction is not modelled.
  RunResult nvls = run_fabricsim({"run", source("configs/dgx_h100.yaml"), "--quiet", "--set",
                                  "workload.algorithm=nvls", "--set",
                                  "simulation.fidelity=flow"});
  EXPECT_EQ(nvls.exit_code, 2) << nvls.err;
  EXPECT_NE(nvls.err.find("workload.algorithm: nvls uses in-switch reduction"),
            std::string::npos)
      << nvls.err;
  // Per-port outputs need ports.
  RunResult series = run_fabricsim({"run", source("configs/minimal.yaml"), "--quiet", "--set",
                                    "simulation.functional=false", "--set",
                                    "simulation.fidelity=flow", "--series", "1us"});
  EXPECT_EQ(series.exit_code, 2) << series.err;
}

}  // namespace
}  // namespace fabricsim::systest
