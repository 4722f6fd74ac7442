// NVLS (in-switch reduction and multicast) on the simulated fabric: exact results,
// REFERENCE.md cases 2 and 4 (NVLS), the link-bound ceiling the mechanism implies, and
// the reduction engine's throughput as the bound when it is the slowest stage.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "tests/system/system_util.h"

using namespace fabricsim::systest;
using nlohmann::json;

namespace {

// The busiest NVLS reduction engine's utilisation over the run.
double max_engine_utilisation(const json& results) {
  double m = 0;
  for (const auto& [name, s] : results["stats"].items())
    if (s.contains("nvls_reduce_engine_utilisation"))
      m = std::max(m, s["nvls_reduce_engine_utilisation"].get<double>());
  return m;
}

// Per rank and direction an NVLS all-reduce puts on the switch -> GPU links, per byte of
// S: the switches' reads (header-only packets of `req_wire` bytes per 128 B asked), the
// reduced 1/n back, and every replica: req_wire/128 + (1/n + 1) x 160/128. The GPU ->
// switch direction carries less ((1 + 1/n) x 160/128 plus the requests for its 1/n), so
// algbw <= per-GPU wire rate / that factor.
double nvls_link_bound_busbw(double gpu_wire_GBps, int n, double req_wire) {
  const double per_byte = req_wire / 128.0 + (1.0 / n + 1.0) * 160.0 / 128.0;
  return gpu_wire_GBps / per_byte * 2.0 * (n - 1) / n;
}

}  // namespace

// Every NVLS collective ends with the exact result on every rank, for 2 to 9 GPUs on one
// NVLS switch (real numbers through the switch's reductions and replicas).
TEST(Nvls, ExactOnTheFabricFor2To9Ranks) {
  for (const char* coll : {"all_reduce", "reduce_scatter", "all_gather"}) {
    for (int n = 2; n <= 9; ++n) {
      RunResult r = run_fabricsim(
          {"run", source("configs/minimal.yaml"), "--set", "workload.type=collective_sweep",
           "--set", std::string("workload.collective=") + coll, "--set",
           "workload.algorithm=nvls", "--set", "device_types.sw.nvls=true", "--set",
           "device_types.sw.nvls_reduce_bandwidth=400GB/s", "--set",
           "topology.endpoints=" + std::to_string(n), "--set",
           "device_types.sw.ports=" + std::to_string(2 * n), "--set", "workload.min_bytes=4B",
           "--set", "workload.max_bytes=256KiB", "--set", "workload.step_factor=9", "--quiet"},
          fresh_dir("nvls_exact"));
      ASSERT_EQ(r.exit_code, 0) << coll << " n=" << n << ": " << r.err;
      for (const json& row : r.results["rows"]) {
        ASSERT_TRUE(row.contains("wrong"));
        EXPECT_EQ(row["wrong"].get<uint64_t>(), 0u) << coll << " n=" << n;
      }
      expect_accounting_clean(r.results);
    }
  }
}

// REFERENCE.md case 2: DGX H100 NVLS all-reduce, 8 GiB: busbw ~480 GB/s, +-5%. The
// reduction engine is not the bound here (assumed to keep up with the chip's ports);
// the links are: the switch -> GPU direction carries reads, results and replicas, so
// busbw <= 450 GB/s / (32/128 + 9/8 x 160/128) x 7/4 = 475.5 GB/s. The gain over the ring
// (360 GB/s ceiling) is the in-switch reduction: (n+1)/n S per direction instead of
// 2(n-1)/n S.
TEST(Nvls, DgxH100AllReduce8GiBWithin5PercentOfPublished) {
  RunResult r = run_fabricsim({"run", source("configs/dgx_h100.yaml"), "--set",
                               "workload.algorithm=nvls", "--set", "workload.min_bytes=8GiB",
                               "--set", "workload.max_bytes=8GiB", "--quiet"},
                              fresh_dir("nvls_h100"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const double busbw = row_of(r.results, 8ull << 30)["busbw_GBps"].get<double>();
  RecordProperty("busbw_GBps", std::to_string(busbw));
  EXPECT_NEAR(busbw / 480.0, 1.0, 0.05);
  const double bound = nvls_link_bound_busbw(450.0, 8, 32.0);
  EXPECT_LE(busbw, bound * 1.001);
  EXPECT_GE(busbw, bound * 0.95);  // pipeline fill and drain only
  EXPECT_GT(busbw, 360.0 * 1.25);  // well above the ring's ceiling
  EXPECT_LT(max_engine_utilisation(r.results), 0.6);
  expect_accounting_clean(r.results);
}

// The largest switch egress queue of a run (bytes).
uint64_t max_switch_queue_bytes(const json& results) {
  uint64_t m = 0;
  for (const auto& [name, s] : results["stats"].items())
    if (s.value("kind", "") == "switch" && s.contains("queue_depth_max_bytes"))
      m = std::max(m, s["queue_depth_max_bytes"].get<uint64_t>());
  return m;
}

// NVLS all-gather on DGX H100: every rank multicasts its block, so each switch -> GPU
// direction carries S (7 peers' blocks and the rank's own replica) at 160 wire bytes per
// 128 B: algbw <= 18 x 25 GB/s x 128/160 = 360 GB/s. A rank's store of piece j waits for
// every rank's piece j - 8 (NCCL_STEPS slots), so the switches' queues stop growing once the
// window binds (32 channels x 8 slots x 512 KiB = 128 MiB per rank: from 1 GiB up). Without
// the slots every rank multicast its whole block at once: the busiest queue grew with the
// size (13 MB at 256 MiB, 52 MB at 1 GiB) and an 8 GiB run peaked at 1.7 GB of RSS.
TEST(Nvls, DgxH100AllGatherQueuesBoundedBySlotsAtTheLinkBound) {
  uint64_t depth[2];
  const char* sizes[2] = {"1GiB", "4GiB"};
  for (int i = 0; i < 2; ++i) {
    RunResult r = run_fabricsim(
        {"run", source("configs/dgx_h100.yaml"), "--set", "workload.type=collective_sweep",
         "--set", "workload.collective=all_gather", "--set", "workload.algorithm=nvls",
         "--set", std::string("workload.min_bytes=") + sizes[i], "--set",
         std::string("workload.max_bytes=") + sizes[i], "--quiet"},
        fresh_dir("nvls_allgather"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const double algbw = r.results["rows"][0]["algbw_GBps"].get<double>();
    EXPECT_LE(algbw, 360.0 * 1.001) << sizes[i];
    EXPECT_GE(algbw, 360.0 * 0.98) << sizes[i];  // fill and drain, and the slots' handshake
    depth[i] = max_switch_queue_bytes(r.results);
    expect_accounting_clean(r.results);
  }
  EXPECT_GT(depth[0], 0u);
  EXPECT_LE(depth[1], depth[0] + depth[0] / 10) << "a 4x larger all-gather queued more";
}

// The largest and the smallest payload a GPU port sent (its requests carry none: the
// answers to the switches' reads are what a port carries in a reduce-scatter).
std::pair<uint64_t, uint64_t> gpu_port_payload_range(const json& results) {
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const auto& [name, s] : results["stats"].items())
    if (name.rfind("gpu", 0) == 0 && name.find(".port[") != std::string::npos) {
      const uint64_t b = s["tx_payload_bytes"].get<uint64_t>();
      lo = std::min(lo, b);
      hi = std::max(hi, b);
    }
  return {lo, hi};
}

// DGX H100 NVLS reduce-scatter, 4-16 MiB, aggregated (16 KiB transactions: every group
// message of 64 KiB and more) against per packet. Two aggregation errors made it 1.4-4.5%
// slow (docs/architecture.md, "Aggregation of NVLS"): free ports pulled whole pieces of a
// request (114 header packets, each piece committing 0.73 us of answers on the same link
// index of every GPU), so some link indices carried 4.5% more answers than others (per
// packet: 0.3%); and the reads, the answers and a reduction's result went out
// store-and-forward (a read answered at its tail, a result sent after the last member's
// whole answer had queued for the engine). With the reduce requests cut by the address
// interleave and the NVLS path cut-through, every row is within 0.1% (4 MiB -0.07%, 8 MiB
// 0.00%, 16 MiB -0.04%); the tolerance, 0.5%, is the project's bound for aggregation, well
// below the 3.6% (4 MiB) and 4.5% (16 MiB) this fails with before. The ports' load is
// checked directly: the busiest GPU port carries no more than 1% over the per-packet one.
TEST(Nvls, DgxH100ReduceScatterAggregatedAgreesWithPerPacket) {
  const std::vector<std::string> base = {
      "run", source("configs/dgx_h100.yaml"), "--quiet", "--set",
      "workload={type: collective_sweep, collective: reduce_scatter, algorithm: nvls}",
      "--set", "workload.min_bytes=4MiB", "--set", "workload.max_bytes=16MiB"};
  auto [pp, agg] = run_per_packet_and_as_given(base, "nvls_rs");
  ASSERT_EQ(pp.exit_code, 0) << pp.err;
  ASSERT_EQ(agg.exit_code, 0) << agg.err;
  for (uint64_t S : {4ull << 20, 8ull << 20, 16ull << 20}) {
    const double t_pp = row_of(pp.results, S)["time_us"].get<double>();
    const double t_agg = row_of(agg.results, S)["time_us"].get<double>();
    RecordProperty("per_packet_us_" + std::to_string(S >> 20) + "MiB", std::to_string(t_pp));
    RecordProperty("aggregated_us_" + std::to_string(S >> 20) + "MiB", std::to_string(t_agg));
    EXPECT_NEAR(t_agg / t_pp, 1.0, 0.005) << S;
  }
  // The same packets, as far fewer transactions (pieces of up to 114 packets).
  EXPECT_EQ(agg.results["run_cost"]["packet_hops"], pp.results["run_cost"]["packet_hops"]);
  EXPECT_LT(agg.results["run_cost"]["transaction_hops"].get<double>(),
            0.1 * pp.results["run_cost"]["transaction_hops"].get<double>());
  EXPECT_LE(double(gpu_port_payload_range(agg.results).second),
            1.01 * double(gpu_port_payload_range(pp.results).second));
  expect_accounting_clean(agg.results);
}

// The NVLS unit's pipeline and a GPU's links (docs/architecture.md, "The NVLS unit's
// pipeline"): DGX H100 NVLS all-reduce, 2 NVLS channels, 128 MiB, per packet.
// 1. Every GPU port carries the same payload within 0.5%: a multicast object is spread
//    over the links by address, and the per-packet residue is a piece's rounding (0.14%
//    measured). Failed at 2.5% when a GPU offered each new group message to its lowest
//    idle port first and the pipeline held ports (both as before this test): link 0 of
//    every GPU carried the most (at 1 GiB, through the replicas, switch plane 0 too).
// 2. With data-only synchronisation the egress queues stay backlogged, so the unit's
//    pipeline latency L is a delay line in front of them: it may shift the stream's end,
//    not slow it down. L = 10 us costs 0.08 us; when the unit queued its results and
//    replicas at once with a head L ahead, a packet still in the pipeline held its port
//    and what was queued behind it (the switch's reads), and L cost 7.84 us (0.78 L).
//    Bound: L / 4.
TEST(Nvls, PipelineLatencyDoesNotHoldThePortAndGroupMessagesUseEveryLinkEvenly) {
  const std::vector<std::string> base = {
      "run", source("configs/dgx_h100.yaml"), "--quiet", "--set", "workload.algorithm=nvls",
      "--set", "workload.nvls_channels=2", "--set", "workload.min_bytes=128MiB", "--set",
      "workload.max_bytes=128MiB", "--set", "simulation.aggregate_bytes=0B"};
  RunResult even = run_fabricsim(base, fresh_dir("nvls_even"));
  ASSERT_EQ(even.exit_code, 0) << even.err;
  const auto [lo, hi] = gpu_port_payload_range(even.results);
  ASSERT_GT(lo, 0u);
  RecordProperty("gpu_port_payload_max_over_min", std::to_string(double(hi) / double(lo)));
  EXPECT_LE(double(hi), 1.005 * double(lo));
  expect_accounting_clean(even.results);

  double t[2];
  const char* latency[2] = {"0ns", "10us"};
  for (int i = 0; i < 2; ++i) {
    std::vector<std::string> args = base;
    for (const std::string& s :
         {std::string("workload.sync=data"),
          std::string("device_types.nvswitch3.nvls_latency=") + latency[i]}) {
      args.push_back("--set");
      args.push_back(s);
    }
    RunResult r = run_fabricsim(args, fresh_dir("nvls_pipeline"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    t[i] = r.results["rows"][0]["time_us"].get<double>();
    expect_accounting_clean(r.results);
  }
  RecordProperty("latency_cost_us", std::to_string(t[1] - t[0]));
  EXPECT_GE(t[1], t[0]);
  EXPECT_LE(t[1] - t[0], 10.0 / 4);
}

// aggregate_round_robin_packets and the members' answers (docs/architecture.md, "Aggregation
// under round robin"): DGX H100 NVLS reduce-scatter at 64 MiB under the protocol model, with
// the group messages (64 KiB pieces) aggregated. The option cuts a reduce request one header
// packet per turn while the channels share a port; a member's answer to a request that had a
// port to itself is a whole transaction (up to 128 packets). Answer and DMA taking a turn each
// gave the request one turn in up to 129 where per packet it has one in two: 243.23 us
// against 204.32 per packet (+19.0%). With the answer a packet per turn while the DMA has data
// for the port (Endpoint::answer_part, the NVLS unit counting answers by packets): 205.90
// (+0.77%). Tolerance 2%: the measured error with a margin, a ninth of the error before.
TEST(Aggregation, RoundRobinInPacketsAnswersAPacketPerTurn) {
  const std::vector<std::string> base = {
      "run", source("configs/dgx_h100.yaml"), "--quiet", "--set",
      "workload.type=collective_sweep", "--set", "workload.collective=reduce_scatter", "--set",
      "workload.algorithm=nvls", "--set", "workload.min_bytes=64MiB", "--set",
      "workload.max_bytes=64MiB", "--set", "simulation.aggregate_min_group_message=64KiB",
      "--set", "simulation.aggregate_round_robin_packets=true"};
  auto [pp, agg] = run_per_packet_and_as_given(base, "rr_answers");
  ASSERT_EQ(pp.exit_code, 0) << pp.err;
  ASSERT_EQ(agg.exit_code, 0) << agg.err;
  const double t_pp = row_of(pp.results, 64ull << 20)["time_us"].get<double>();
  const double t_agg = row_of(agg.results, 64ull << 20)["time_us"].get<double>();
  RecordProperty("per_packet_us", std::to_string(t_pp));
  RecordProperty("round_robin_packets_us", std::to_string(t_agg));
  EXPECT_NEAR(t_agg / t_pp, 1.0, 0.02);
  // Answers did go in parts, and no packet was lost or doubled doing so.
  uint64_t parts = 0;
  for (const auto& [name, st] : agg.results["stats"].items())
    if (st.is_object() && st.contains("nvls_answer_parts"))
      parts += st["nvls_answer_parts"].get<uint64_t>();
  EXPECT_GT(parts, 0u);
  EXPECT_EQ(agg.results["run_cost"]["packet_hops"], pp.results["run_cost"]["packet_hops"]);
  expect_accounting_clean(agg.results);
  expect_accounting_clean(pp.results);
}

// aggregate_round_robin_packets: nvls takes the option's packet turns for the NVLS group
// messages and the answers only. Two DGX H100 nodes with hierarchical_nvls at 16 MiB (the
// 16-node config's links on two nodes), where every NVLink port carries only NVLS traffic:
// nvls is the run with true, to the transaction (102.24 us; per packet 98.24; whole
// transactions per turn 101.99 in 11x fewer transaction-hops). GB200 NVL72's ring on 16
// GPUs, with no group messages: nvls is the run with false (251.88 us in 1.35M
// transaction-hops; with true 254.94 in 30.7M, near per packet's 31.6M).
TEST(Aggregation, RoundRobinNvlsTurnsPacketsForGroupMessagesOnly) {
  const std::vector<std::string> two_nodes = two_ib_nodes_hierarchical_nvls("16MiB");
  const std::vector<std::string> ring = {
      "run", source("configs/gb200_nvl72.yaml"), "--quiet", "--set", "topology.endpoints=16",
      "--set", "workload.min_bytes=64MiB", "--set", "workload.max_bytes=64MiB"};
  auto with = [](std::vector<std::string> args, const std::string& value) {
    args.insert(args.end(), {"--set", "simulation.aggregate_round_robin_packets=" + value});
    return run_fabricsim(args, fresh_dir("rr_scope_" + value));
  };
  const RunResult nvls_all = with(two_nodes, "true"), nvls_scoped = with(two_nodes, "nvls"),
                  nvls_whole = with(two_nodes, "false");
  const RunResult ring_whole = with(ring, "false"), ring_scoped = with(ring, "nvls");
  for (const RunResult* r : {&nvls_all, &nvls_scoped, &nvls_whole, &ring_whole, &ring_scoped})
    ASSERT_EQ(r->exit_code, 0) << r->err;
  const auto time = [](const RunResult& r, uint64_t size) {
    return row_of(r.results, size)["time_us"].get<double>();
  };
  const auto hops = [](const RunResult& r) {
    return r.results["run_cost"]["transaction_hops"].get<double>();
  };
  EXPECT_EQ(time(nvls_scoped, 16ull << 20), time(nvls_all, 16ull << 20));
  EXPECT_EQ(hops(nvls_scoped), hops(nvls_all));
  EXPECT_GT(hops(nvls_scoped), 5 * hops(nvls_whole));  // the scope did turn group messages
  EXPECT_EQ(time(ring_scoped, 64ull << 20), time(ring_whole, 64ull << 20));
  EXPECT_EQ(hops(ring_scoped), hops(ring_whole));
  expect_accounting_clean(nvls_scoped.results);
  expect_accounting_clean(ring_scoped.results);
}

// GB200 NVL72 as shipped (32 channels, protocol model) on 16 of its GPUs, 64 MiB ring: 58 KiB
// ring messages, each one aggregated transaction per NVLink port, 32 thread blocks taking
// turns on every port. A message's data may not all leave before its block's pass ends
// (not_before). The transaction level held the whole transaction that would end the message
// (kilobytes that per packet are on the wire already) and then let it wait for a round of the
// other messages' whole transactions (per packet: one packet of each): 300.60 us against
// 254.75 per packet (+18.0%; 72 GPUs at 256 MiB +18.6%). Now only the last packet waits, and
// goes first once its pass has ended: 252.75 us (-0.79%; 72 GPUs at 256 MiB +0.71%); since it
// and control packets go between a transaction's packets, 252.10 (-1.04%); since a control
// packet wakes only the port with the earliest boundary, 251.88 (-1.13%).
// Tolerance 1.5%: the measured error with a margin, a twelfth of the error before.
TEST(Aggregation, Gb200Nvl72RingHeldLastPacketAgreesWithPerPacket) {
  const std::vector<std::string> base = {
      "run", source("configs/gb200_nvl72.yaml"), "--quiet", "--set", "topology.endpoints=16",
      "--set", "workload.min_bytes=64MiB", "--set", "workload.max_bytes=64MiB"};
  auto [pp, agg] = run_per_packet_and_as_given(base, "nvl72_ring");
  ASSERT_EQ(pp.exit_code, 0) << pp.err;
  ASSERT_EQ(agg.exit_code, 0) << agg.err;
  const double t_pp = row_of(pp.results, 64ull << 20)["time_us"].get<double>();
  const double t_agg = row_of(agg.results, 64ull << 20)["time_us"].get<double>();
  RecordProperty("per_packet_us", std::to_string(t_pp));
  RecordProperty("aggregated_us", std::to_string(t_agg));
  EXPECT_NEAR(t_agg / t_pp, 1.0, 0.015);
  // Still aggregated: the same packets as under a tenth of the transactions.
  EXPECT_EQ(agg.results["run_cost"]["packet_hops"], pp.results["run_cost"]["packet_hops"]);
  EXPECT_LT(agg.results["run_cost"]["transaction_hops"].get<double>(),
            0.1 * pp.results["run_cost"]["transaction_hops"].get<double>());
  expect_accounting_clean(agg.results);
}

// simulation.aggregate_fair_completion on the case above: each aggregated message's last
// packet waits for its finish in the processor sharing of its GPU's NVLink ports, so the 32
// channels' first messages finish late together as per packet instead of one after another
// (docs/architecture.md, "Fair completion"). Measured at 23-27 ns of link latency: every
// point within 0.26% of per packet, the means within 0.05% (without: -1.00%). Tolerance
// 0.4%: half again the largest point, under half the error without the option, which this
// test also runs and which must be at least three times further off.
TEST(Aggregation, Gb200Nvl72RingFairCompletionAgreesWithPerPacket) {
  const std::vector<std::string> base = {
      "run", source("configs/gb200_nvl72.yaml"), "--quiet", "--set", "topology.endpoints=16",
      "--set", "workload.min_bytes=64MiB", "--set", "workload.max_bytes=64MiB"};
  std::vector<std::string> fair = base;
  fair.insert(fair.end(), {"--set", "simulation.aggregate_fair_completion=true"});
  auto [pp, agg] = run_per_packet_and_as_given(fair, "nvl72_fair");
  RunResult plain = run_fabricsim(base, fresh_dir("nvl72_plain"));
  ASSERT_EQ(pp.exit_code, 0) << pp.err;
  ASSERT_EQ(agg.exit_code, 0) << agg.err;
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const double t_pp = row_of(pp.results, 64ull << 20)["time_us"].get<double>();
  const double t_fair = row_of(agg.results, 64ull << 20)["time_us"].get<double>();
  const double t_plain = row_of(plain.results, 64ull << 20)["time_us"].get<double>();
  RecordProperty("per_packet_us", std::to_string(t_pp));
  RecordProperty("fair_us", std::to_string(t_fair));
  RecordProperty("plain_us", std::to_string(t_plain));
  EXPECT_NEAR(t_fair / t_pp, 1.0, 0.004);
  EXPECT_GT(std::abs(t_plain / t_pp - 1.0), 3 * std::abs(t_fair / t_pp - 1.0));
  // Still aggregated: the held last packets add a transaction per message at most.
  EXPECT_EQ(agg.results["run_cost"]["packet_hops"], pp.results["run_cost"]["packet_hops"]);
  EXPECT_LT(agg.results["run_cost"]["transaction_hops"].get<double>(),
            0.1 * pp.results["run_cost"]["transaction_hops"].get<double>());
  expect_accounting_clean(agg.results);
}

// REFERENCE.md case 4 (NVLS): 8 x B200, NVLS all-reduce busbw 830-850 GB/s, +-5%. Here the
// switch's reduction engine is the bound (calibrated: configs/hgx_b200.yaml), so this is
// a consistency check of the mechanism: algbw = 2 chips x 1920 GB/s / 8 ranks = 480 GB/s
// at full engine utilisation, i.e. busbw 840; and the busiest engine is near saturation.
TEST(Nvls, HgxB200AllReduce8GiBWithin5PercentOfPublished) {
  RunResult r = run_fabricsim({"run", source("configs/hgx_b200.yaml"), "--set",
                               "workload.algorithm=nvls", "--set", "workload.min_bytes=8GiB",
                               "--set", "workload.max_bytes=8GiB", "--quiet"},
                              fresh_dir("nvls_b200"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const double busbw = row_of(r.results, 8ull << 30)["busbw_GBps"].get<double>();
  RecordProperty("busbw_GBps", std::to_string(busbw));
  EXPECT_NEAR(busbw / 840.0, 1.0, 0.05);
  EXPECT_LE(busbw, 2 * 1920.0 / 8 * 1.75 * 1.001);
  EXPECT_GT(max_engine_utilisation(r.results), 0.9);
  expect_accounting_clean(r.results);
}

// The reduction engine's throughput is a real bound: on one switch with 4 GPUs, every
// rank's whole buffer passes through the engine once, so algbw <= R / n. With R = 20 GB/s
// (far below the links' 40 GB/s per GPU) a 4 MiB all-reduce runs at R/n = 5 GB/s within
// 3% (pipeline fill), and halving R halves it.
TEST(Nvls, ReductionEngineThroughputBoundsTheAllReduce) {
  double algbw[2];
  const char* rates[2] = {"20GB/s", "10GB/s"};
  for (int i = 0; i < 2; ++i) {
    RunResult r = run_fabricsim(
        {"run", source("configs/minimal.yaml"), "--set", "workload.algorithm=nvls", "--set",
         "device_types.sw.nvls=true", "--set",
         std::string("device_types.sw.nvls_reduce_bandwidth=") + rates[i], "--set",
         "simulation.functional=false", "--set", "workload.min_bytes=4MiB", "--set",
         "workload.max_bytes=4MiB", "--quiet"},
        fresh_dir("nvls_engine"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    algbw[i] = row_of(r.results, 4ull << 20)["algbw_GBps"].get<double>();
    EXPECT_GT(max_engine_utilisation(r.results), 0.9);
  }
  EXPECT_NEAR(algbw[0] / 5.0, 1.0, 0.03);
  EXPECT_NEAR(algbw[1] / 2.5, 1.0, 0.03);
}

// REFERENCE.md case 6, the worked example: 70B parameters in bf16 (140 GB of gradients)
// on 72 NVLink5 GPUs, on the uncontended configuration its closed forms assume
// (configs/worked_example_70b.yaml: one 900 GB/s port per GPU, no framing overhead,
// an engine that is not the bound). Each time within 2% of its closed form:
//   ring  2(p-1)/p S / 900 GB/s = 0.3068 s;  NVLS (p+1)/p S / 900 GB/s = 0.1577 s;
//   NICs (one 400 Gb/s = 50 GB/s NIC per GPU) 2(p-1)/p S / 50 GB/s = 5.522 s (REFERENCE's
//   5.6 s rounds 2(p-1)/p to 2).
// Using NVIDIA's bidirectional 1.8 TB/s as the one-way rate would halve the first two.
TEST(WorkedExample, SeventyBillionOn72GpusWithin2PercentOfClosedForms) {
  const double S = 140e9, p = 72;
  struct Case {
    std::vector<std::string> set;
    double closed_form_s;
  };
  const std::vector<Case> cases{
      {{}, 2 * (p - 1) / p * S / 900e9},
      {{"--set", "workload.algorithm=nvls"}, (p + 1) / p * S / 900e9},
      {{"--set", "link_types.ideal.lane_rate=400Gb/s", "--set", "simulation.time_limit=60s"},
       2 * (p - 1) / p * S / 50e9}};
  for (const Case& c : cases) {
    std::vector<std::string> args{"run", source("configs/worked_example_70b.yaml"), "--quiet"};
    args.insert(args.end(), c.set.begin(), c.set.end());
    RunResult r = run_fabricsim(args, fresh_dir("worked"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const double t = row_of(r.results, 140000000000ull)["time_us"].get<double>() * 1e-6;
    EXPECT_NEAR(t / c.closed_form_s, 1.0, 0.02) << "closed form " << c.closed_form_s << " s";
    expect_accounting_clean(r.results);
  }
}

// ---------------------------------------------------------------------------------------
// `algorithm: auto` with NVLS switches (fabrics/systems/cost_model.h; docs/collectives.md, "auto").

namespace {

// One message size on configs/minimal.yaml at 8 ranks (one switch, 2 links per GPU,
// sync: data, per packet), NVLS on or off; returns {algorithm of the row, time_us}.
std::pair<std::string, double> one_switch_row(const std::string& algo, const std::string& size,
                                              bool nvls) {
  std::vector<std::string> args{"run", source("configs/minimal.yaml"), "--quiet", "--set",
                                "topology.endpoints=8", "--set", "device_types.sw.ports=16",
                                "--set", "simulation.functional=false", "--set",
                                "workload.algorithm=" + algo, "--set",
                                "workload.min_bytes=" + size, "--set",
                                "workload.max_bytes=" + size};
  if (nvls)
    for (const char* s : {"device_types.sw.nvls=true", "device_types.sw.nvls_reduce_bandwidth=400GB/s"})
      args.insert(args.end(), {"--set", s});
  RunResult r = run_fabricsim(args, fresh_dir("auto_nvls_" + algo));
  EXPECT_EQ(r.exit_code, 0) << algo << " " << size << ": " << r.err;
  if (r.exit_code != 0) return {"", 0};
  expect_accounting_clean(r.results);
  const json& row = r.results["rows"][0];
  return {row["algorithm"].get<std::string>(), row["time_us"].get<double>()};
}

}  // namespace

// With NVLS switches auto considers nvls beside NCCL's ring and tree (auto's candidates
// are NCCL's algorithms). On one switch with sync: data an NVLS reduction is 4 link trips
// and 2 pipelines and its store 2 more links and a pipeline (0.497 us at 1 KiB), while the
// ring and NCCL's single-node tree (a chain of the 8 ranks) take 14 dependent steps. Per
// byte nvls moves 1.325 S on the busier (switch -> GPU) direction against the ring's 1.75 S
// and the tree's 2 S: nvls wins at 1 KiB and 1 MiB. auto must pick nvls, each row's time
// must be the explicit run's (same schedule, same fabric: exactly equal), and that must be
// the fastest of every candidate simulated.
TEST(AutoNvls, OneSwitchPicksNvlsAndTheFastestSimulated) {
  for (const char* size : {"1KiB", "1MiB"}) {
    const auto [pick, t_auto] = one_switch_row("auto", size, true);
    RecordProperty(std::string("auto_") + size, pick + " " + std::to_string(t_auto));
    EXPECT_EQ(pick, "nvls") << size;
    double best = 1e300;
    for (const char* algo : {"ring", "tree", "nvls"}) {
      const double t = one_switch_row(algo, size, true).second;
      if (algo == pick) {
        EXPECT_EQ(t_auto, t) << size << " " << algo;
      }
      best = std::min(best, t);
    }
    EXPECT_EQ(t_auto, best) << size;
  }
}

// DGX H100 (configs/dgx_h100.yaml as shipped, 64 MiB): NVLS is link-bound; the model's
// algbw is the GPU's NVLink payload rate, 18 x 25 GB/s x 128/160 = 360 GB/s, over the
// switch -> GPU bytes per byte of S, 32/160 (reads) + 1/8 (result) + 1 (replicas) = 1.325:
// 271.7 GB/s, against the ring's 205.7. auto picks nvls, and its row is the explicit nvls
// run's. The row and the model name the protocol: NVLS runs Simple (as NCCL's).
TEST(AutoNvls, DgxH100PicksNvlsForLargeMessages) {
  double t[2];
  std::string pick;
  json model;
  for (int i = 0; i < 2; ++i) {
    RunResult r = run_fabricsim({"run", source("configs/dgx_h100.yaml"), "--quiet", "--set",
                                 std::string("workload.algorithm=") + (i ? "nvls" : "auto"),
                                 "--set", "workload.min_bytes=64MiB", "--set",
                                 "workload.max_bytes=64MiB"},
                                fresh_dir("auto_nvls_h100"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json& row = row_of(r.results, 64ull << 20);
    t[i] = row["time_us"].get<double>();
    if (i == 0) {
      pick = row["algorithm"].get<std::string>();
      model = r.results["auto_cost_model"];
    }
  }
  RecordProperty("auto_us", std::to_string(t[0]));
  EXPECT_EQ(pick, "nvls/simple");
  EXPECT_EQ(t[0], t[1]);
  ASSERT_TRUE(model.contains("nvls/simple")) << model.dump();
  EXPECT_NEAR(model["nvls/simple"]["GBps"].get<double>(), 360.0 / 1.325, 0.01);
  EXPECT_FALSE(model.contains("hierarchical_nvls"));  // one domain: nvls's schedule
}

// Without NVLS switches auto has no nvls candidate: NCCL's ring and tree remain (sync:
// data: Simple only, so the labels carry no protocol). On one switch the ring (14 steps of
// 1.75 S) beats the chain-shaped single-node tree (14 steps of 2 S) at both sizes, and its
// rows are the explicit ring run's.
TEST(AutoNvls, WithoutNvlsSwitchesPicksAreUnchanged) {
  RunResult r = run_fabricsim(
      {"run", source("configs/minimal.yaml"), "--quiet", "--set", "topology.endpoints=8", "--set",
       "device_types.sw.ports=16", "--set", "simulation.functional=false", "--set",
       "workload.algorithm=auto", "--set", "workload.min_bytes=1KiB", "--set",
       "workload.max_bytes=1MiB", "--set", "workload.step_factor=1024"},
      fresh_dir("auto_no_nvls"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> keys;
  for (const auto& [k, v] : r.results["auto_cost_model"].items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"ring", "tree"}));
  ASSERT_EQ(r.results["rows"].size(), 2u);
  for (const json& row : r.results["rows"]) EXPECT_EQ(row["algorithm"], "ring");
  EXPECT_EQ(r.results["rows"][0]["time_us"].get<double>(), one_switch_row("ring", "1KiB", false).second);
  EXPECT_EQ(r.results["rows"][1]["time_us"].get<double>(), one_switch_row("ring", "1MiB", false).second);
}
