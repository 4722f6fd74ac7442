// System tests for two-level systems and algorithm selection: the 2 x DGX H100
// InfiniBand config against the published per-NIC ring bandwidth (REFERENCE case 5),
// hierarchical vs flat ring, `algorithm: auto` on 16 nodes, and every algorithm against
// its alpha-beta closed form on an uncontended single-switch fabric.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <map>
#include <sstream>
#include <string>
#include <utility>
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

std::vector<std::string> sizes(const std::string& lo, const std::string& hi,
                               const std::string& step = "2") {
  return {"--set", "workload.min_bytes=" + lo, "--set", "workload.max_bytes=" + hi, "--set",
          "workload.step_factor=" + step};
}

std::vector<std::string> cat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

// REFERENCE case 5 (nccl-tests#290: "for NDR @ 400Gbps you should see 46-48GB/s per NIC"
// with NCCL_ALGO=RING on two nodes). 16 ranks, 8 NICs per node; the rail-aligned ring's 16
// channels put 2 channels on every NIC each way, so every NIC carries busbw / 8 (docs/
// collectives.md, "Per NIC"). Tolerance: the published range +-7% (REFERENCE.md), i.e.
// [42.8, 51.4] GB/s; the mechanism's own ceiling is the NIC's 400 Gb/s x 4096/4122
// InfiniBand framing = 49.68 GB/s, which the per-NIC figure may not exceed.
TEST(TwoNodeIb, RingAllReduceBusBwPerNicMatchesPublished) {
  const json r = run_ok(cat({"run", source("configs/2x_dgx_h100_ib.yaml"), "--quiet"},
                            sizes("256MiB", "256MiB")),
                        "case5");
  ASSERT_FALSE(r.is_null());
  const double busbw = row_of(r, 256ull << 20)["busbw_GBps"].get<double>();
  const double per_nic = busbw / 8.0;
  RecordProperty("busbw_per_nic_GBps", std::to_string(per_nic));
  EXPECT_GE(per_nic, 46.0 * 0.93);
  EXPECT_LE(per_nic, 48.0 * 1.07);
  const double ceiling = 400e9 / 8 * 4096.0 / 4122.0 / 1e9;
  EXPECT_LE(per_nic, ceiling * 1.0005);
  // NIC-bound by mechanism: every NIC port busy > 95% of the time, wire/payload = the
  // InfiniBand framing (4122/4096 for data; acks and flags add < 0.1%), and no ring hop
  // uses the spine (every node crossing stays on its rail).
  for (int node = 0; node < 2; ++node)
    for (int g = 0; g < 8; ++g) {
      const json& p = r["stats"]["node" + std::to_string(node) + "_gpu" + std::to_string(g) +
                                  ".port[18]"];
      EXPECT_GT(p["utilisation"].get<double>(), 0.95) << node << "/" << g;
      EXPECT_NEAR(p["tx_wire_bytes"].get<double>() / p["tx_payload_bytes"].get<double>(),
                  4122.0 / 4096.0, 0.001);
    }
  EXPECT_EQ(r["stats"]["spine0.port[0]"]["tx_payload_bytes"].get<uint64_t>(), 0u);
}

// `protocol: auto` on two nodes knows NCCL's network proxy (coll::AlgoCost, "proxy"): on
// the shipped 2 x DGX H100 config (ring, 32 channels) auto's row at every size is within
// 3% of the fastest of ring/simple, ring/ll and ring/ll128 named explicitly. Before the
// proxy was in the cost model auto took LL128 at 16 and 64 MiB (177.95 and 528.42 us
// against Simple's 170.16 and 416.47: 4.6% and 27% slower). 3%: the gaps between the best
// and the second-best protocol at these sizes are >= 4.6% (measured; docs/collectives.md,
// "auto across nodes"), so a wrong pick fails, while rows of the same schedule are
// identical (each row an independent measurement) and a right pick passes with margin.
// LL runs at 1 and 4 MiB only (its 64 MiB row is most of the CPU time): above, it moves
// twice the bytes in 32-byte stores (the model's ring/ll 68.6 GB/s against Simple's 212),
// and auto is checked against Simple and LL128 there.
TEST(TwoNodeIb, AutoProtocolWithinThreePercentOfFastestCandidate) {
  std::map<std::string, json> r;
  for (const char* proto : {"auto", "simple", "ll", "ll128"}) {
    const bool ll = std::string(proto) == "ll";
    r[proto] = run_ok(cat({"run", source("configs/2x_dgx_h100_ib.yaml"), "--quiet", "--set",
                           std::string("workload.protocol=") + proto},
                          sizes("1MiB", ll ? "4MiB" : "64MiB", "4")),
                      std::string("auto_proxy_") + proto);
    ASSERT_FALSE(r[proto].is_null());
  }
  for (uint64_t S : {1ull << 20, 4ull << 20, 16ull << 20, 64ull << 20}) {
    double best = 1e300;
    std::string best_proto;
    for (const char* proto : {"simple", "ll", "ll128"}) {
      if (std::string(proto) == "ll" && S > (4ull << 20)) continue;
      const double t = row_of(r[proto], S)["time_us"].get<double>();
      if (t < best) {
        best = t;
        best_proto = proto;
      }
    }
    const json row = row_of(r["auto"], S);
    RecordProperty("auto_" + std::to_string(S >> 20) + "MiB",
                   row["algorithm"].get<std::string>() + " " +
                       std::to_string(row["time_us"].get<double>()));
    EXPECT_LE(row["time_us"].get<double>(), best * 1.03)
        << S << " B: auto picked " << row["algorithm"] << ", fastest ring/" << best_proto;
  }
}

// `auto` over every algorithm on two nodes (ring, tree, hierarchical_nvls with 1-8 slices;
// every protocol) at 1 and 16 MiB, within 3% of the fastest of its top candidates named
// explicitly. hierarchical_nvls's schedule has no streams; each of its 16 channels has its
// own connection to the peer node (engine.h: a connection is (writer, reader, stream,
// channel), as NCCL's per-channel connectors), so at 1 MiB a connection carries 2 ring
// steps per slice and its 8 slots do not bind. Simulated (us), 1 MiB: hierarchical_nvls/1
// 32.99, /2 37.61, ring/ll 45.91; 16 MiB: hierarchical_nvls/4 101.27, /8 103.88, /2
// 108.98, /1 115.43, tree/simple 154.63. The cost model's connection term counts steps per
// connection and channel (coll::AlgoCost::connection_s); with one connection per peer (main
// before this) hierarchical_nvls/1 ran 51.85 and 152.74 us and /2 83.56 and 152.33.
// Candidates run: ring/ll, tree/simple, hierarchical_nvls/1, /2 and /4; 3%: /4 and /8, the
// two fastest at 16 MiB, are 2.6% apart and the model cannot be asked to split them.
TEST(TwoNodeIb, AutoOverEveryAlgorithmWithinThreePercentOfFastestCandidate) {
  const std::vector<std::string> every = {"--set", "workload.type=collective_sweep", "--set",
                                          "workload.collective=all_reduce"};
  std::map<std::string, json> r;
  const std::vector<std::vector<std::string>> runs = {
      {"auto", "auto", ""}, {"ring", "ll", ""}, {"tree", "simple", ""},
      {"hierarchical_nvls", "simple", "1"}, {"hierarchical_nvls", "simple", "2"},
      {"hierarchical_nvls", "simple", "4"}, {"hierarchical_nvls", "simple", "2", "1000"}};
  for (const auto& c : runs) {
    std::vector<std::string> args = {"run", source("configs/2x_dgx_h100_ib.yaml"), "--quiet",
                                     "--set", "workload.algorithm=" + c[0], "--set",
                                     "workload.protocol=" + c[1]};
    if (!c[2].empty()) args = cat(args, {"--set", "workload.slices=" + c[2]});
    if (c.size() > 3) args = cat(args, {"--set", "workload.slots=" + c[3]});
    const std::string name = c[0] + "/" + (c[2].empty() ? "" : c[2] + "/") + c[1] +
                             (c.size() > 3 ? "/slots" + c[3] : "");
    r[name] = run_ok(cat(cat(args, every), c.size() > 3 ? sizes("1MiB", "1MiB")
                                                       : sizes("1MiB", "16MiB", "16")),
                     "auto_every_" + std::to_string(r.size()));
    ASSERT_FALSE(r[name].is_null()) << name;
  }
  for (uint64_t S : {1ull << 20, 16ull << 20}) {
    double best = 1e300;
    std::string best_name;
    for (const auto& [name, res] : r) {
      if (name == "auto/auto" || name.find("/slots") != std::string::npos) continue;
      const double t = row_of(res, S)["time_us"].get<double>();
      if (t < best) {
        best = t;
        best_name = name;
      }
    }
    const json row = row_of(r["auto/auto"], S);
    RecordProperty("auto_" + std::to_string(S >> 20) + "MiB",
                   row["algorithm"].get<std::string>() + " " +
                       std::to_string(row["time_us"].get<double>()));
    EXPECT_LE(row["time_us"].get<double>(), best * 1.03)
        << S << " B: auto picked " << row["algorithm"] << ", fastest " << best_name << " "
        << best;
  }
  // The mechanism: one connection per channel. At 1 MiB with 2 slices each channel's
  // connection carries 4 steps, fewer than its 8 slots, so lifting the limit
  // (workload.slots=1000) changes nothing: the same grants in the same order, the same
  // time (0.1%: the runs are deterministic; equal to the ps here). With one connection for
  // every channel (main before this) its 64 steps took 8 rounds of the slots: 83.56 us
  // against 37.61 without the limit, 2.2x.
  const double limited = row_of(r["hierarchical_nvls/2/simple"], 1ull << 20)["time_us"].get<double>();
  const double unlimited =
      row_of(r["hierarchical_nvls/2/simple/slots1000"], 1ull << 20)["time_us"].get<double>();
  RecordProperty("hnvls2_1MiB_us", std::to_string(limited));
  EXPECT_NEAR(limited, unlimited, 1e-3 * unlimited);
}

// `algorithm: auto` and `protocol: auto` on a second multi-node fabric: the rail cluster
// (configs/32x_dgx_h100_rail.yaml) cut to 2 nodes (16 ranks, one rail switch per rail,
// no spines) with Ultra Ethernet NICs (GPU -> PCIe -> NIC -> 400G Ethernet), every
// all-reduce algorithm. Candidates of its cost model: ring and tree, each with LL and
// Simple (no LL128 on these GPUs, no NVLS). `scripts/auto_check.py --only 2x_rail_uec
// --detail` ran every candidate (docs/collectives.md, "`auto` across nodes"): 1 MiB
// ring/ll 27.53 us, tree/ll 27.57, tree/simple 31.09, ring/simple 47.19; 16 MiB
// ring/simple 92.89, tree/simple 104.14, ring/ll 166.85, tree/ll 171.35. Auto's row at each
// size within 3% of the fastest of the top candidates named explicitly (a wrong protocol
// at 1 MiB is +13% or more, a wrong one at 16 MiB +12% or more). Each size is its own run:
// inside one sweep the 16 MiB row after a 1 MiB LL row is 4.5% slower than alone (97.05
// against 92.89 us; after a 1 MiB Simple row it is the same as alone), i.e. the NIC's
// transport state carries over between rows, which is not what this test checks.
TEST(RailEthernet, AutoWithinThreePercentOfFastestCandidateOnTwoNodes) {
  const std::vector<std::string> base = {
      "run", source("configs/32x_dgx_h100_rail.yaml"), "--quiet", "--set",
      "topology.nodes=2", "--set", "topology.spines=0", "--set", "topology.uplinks_per_rail=0",
      "--set", "topology.scale_out=uec", "--set", "workload.type=collective_sweep", "--set",
      "workload.collective=all_reduce"};
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"1MiB", {"ring/ll", "tree/ll", "tree/simple"}},
      {"16MiB", {"ring/simple", "tree/simple"}}};
  for (const auto& [size, cands] : cases) {
    const uint64_t S = size == "1MiB" ? (1ull << 20) : (16ull << 20);
    double best = 1e300;
    std::string best_label;
    for (const std::string& c : cands) {
      const std::string algo = c.substr(0, c.find('/')), proto = c.substr(c.find('/') + 1);
      const json r = run_ok(cat(cat(base, {"--set", "workload.algorithm=" + algo, "--set",
                                           "workload.protocol=" + proto}),
                                sizes(size, size)),
                            "rail_uec_" + size + "_" + algo + "_" + proto);
      ASSERT_FALSE(r.is_null());
      const json row = row_of(r, S);
      EXPECT_EQ(row["algorithm"].get<std::string>(), c);
      const double t = row["time_us"].get<double>();
      RecordProperty(size + "_" + algo + "_" + proto + "_us", std::to_string(t));
      if (t < best) {
        best = t;
        best_label = c;
      }
    }
    const json r = run_ok(cat(cat(base, {"--set", "workload.algorithm=auto", "--set",
                                         "workload.protocol=auto"}),
                              sizes(size, size)),
                          "rail_uec_" + size + "_auto");
    ASSERT_FALSE(r.is_null());
    const json row = row_of(r, S);
    RecordProperty(size + "_auto", row["algorithm"].get<std::string>() + " " +
                                       std::to_string(row["time_us"].get<double>()));
    EXPECT_LE(row["time_us"].get<double>(), best * 1.03)
        << size << ": auto picked " << row["algorithm"] << ", fastest " << best_label;
  }
}

// Acceptance 3 of the collectives issue, small side: on 16 nodes x 8 GPUs (128 ranks) a
// 1 KiB all-reduce is latency-bound; the ring's 2(n-1) = 254 dependent steps each cost a
// fence+flag round over InfiniBand (~1.2 us), while halving-doubling has 14 and the
// double binary tree 2 x 7. Margin: both at least 3x faster than the ring (the model
// predicts 9.5x and 7.6x). `auto` must not pick the ring, and must be at least as fast as
// the best of the three (2% slack for the choice being made on the model).
TEST(SixteenNodeIb, SmallMessagesTreeAndHalvingDoublingBeatRingAndAutoAvoidsRing) {
  std::map<std::string, double> t;
  std::string auto_pick;
  for (const char* algo : {"ring", "tree", "halving_doubling", "auto"}) {
    const json r = run_ok(cat({"run", source("configs/16x_dgx_h100_ib.yaml"), "--quiet", "--set",
                               std::string("workload.algorithm=") + algo, "--set",
                               "workload.channels=4"},
                              sizes("1KiB", "1KiB")),
                          std::string("small_") + algo);
    ASSERT_FALSE(r.is_null());
    t[algo] = row_of(r, 1024)["time_us"].get<double>();
    if (std::string(algo) == "auto") auto_pick = row_of(r, 1024)["algorithm"].get<std::string>();
    RecordProperty(std::string(algo) + "_us", std::to_string(t[algo]));
  }
  EXPECT_LT(t["tree"] * 3, t["ring"]);
  EXPECT_LT(t["halving_doubling"] * 3, t["ring"]);
  EXPECT_NE(auto_pick, "ring");
  // auto chooses among NCCL's algorithms (ring, tree, the in-switch ones), not
  // halving-doubling: at least as fast as the better of ring and tree.
  EXPECT_LE(t["auto"], std::min({t["ring"], t["tree"]}) * 1.02);
}

// Acceptance 3, large side, and acceptance 4 (hierarchical beats the flat ring on the
// two-level system): at 32 MiB (4 channels) the ring's busiest NIC carries 2(n-1)/n x S/4
// while halving-doubling and the tree push most of the vector through every GPU's single
// NIC (model: 26.5 and 33.1 GB/s of algbw against the ring's 100), so the ring wins by
// more than 1.3x. `auto` picks hierarchical (one reduce-scatter and all-gather over
// NVLink, a 2(N-1)-step ring of S/8 per rail) with slices, which must beat the flat ring
// by > 10% (the model predicts ~2x: 30 cross-node steps instead of 254).
TEST(SixteenNodeIb, LargeMessagesRingBeatsTreeAndHalvingDoublingAutoPicksInSwitchHierarchical) {
  std::map<std::string, double> t;
  std::string auto_pick;
  const uint64_t S = 32ull << 20;
  for (const char* algo : {"ring", "tree", "halving_doubling", "auto"}) {
    const json r = run_ok(cat({"run", source("configs/16x_dgx_h100_ib.yaml"), "--quiet", "--set",
                               std::string("workload.algorithm=") + algo, "--set",
                               "workload.channels=4"},
                              sizes("32MiB", "32MiB")),
                          std::string("large_") + algo);
    ASSERT_FALSE(r.is_null());
    t[algo] = row_of(r, S)["time_us"].get<double>();
    if (std::string(algo) == "auto") auto_pick = row_of(r, S)["algorithm"].get<std::string>();
    RecordProperty(std::string(algo) + "_us", std::to_string(t[algo]));
  }
  // Under the protocol model the ring's 254 dependent steps each cost a Simple step over the
  // network (the proxy's completion and flag, ~11.6 us a step here: 2940 us), more than the
  // NIC bandwidth the tree and halving-doubling lose (1492 and 1362 us): as in NCCL, whose
  // tuning picks the tree at this size on 16 nodes. Before the protocol model the ring won
  // (455.81 us against 1694.12 and 1269.98).
  EXPECT_LT(t["tree"], t["ring"]);
  EXPECT_LT(t["halving_doubling"], t["ring"]);
  EXPECT_LT(t["auto"] * 1.1, t["ring"]);
  // auto also chooses the slices of hierarchical and hierarchical_nvls (1, 2, 4 or 8), and
  // the nodes' NVSwitches have NVLS, so hierarchical_nvls is a candidate. With one slice
  // the ring reduce-scatter hands a node's block to the NICs only in its last step, so the
  // phases run nearly in turn; slices pipeline them (docs/collectives.md, "Slices").
  // Measured: hierarchical/4 255.37 us, against 315.59 with one slice and the ring's
  // 455.81 (tree 1694.12, halving-doubling 1269.98). auto now picks hierarchical_nvls,
  // whose node phases run in the switches (1.125 S per GPU and direction on NVLink instead
  // of 1.75 S) and whose levels overlap sub-block by sub-block even with one slice
  // (measured 193.59 us). The test asks for an in-switch hierarchical 20% faster than
  // one-slice hierarchical.
  EXPECT_EQ(auto_pick.rfind("hierarchical_nvls", 0), 0u) << auto_pick;
  const json r = run_ok(cat({"run", source("configs/16x_dgx_h100_ib.yaml"), "--quiet", "--set",
                             "workload.algorithm=hierarchical", "--set", "workload.channels=4"},
                            sizes("32MiB", "32MiB")),
                        "large_one_slice");
  ASSERT_FALSE(r.is_null());
  const double one_slice = row_of(r, S)["time_us"].get<double>();
  RecordProperty("hierarchical_1_slice_us", std::to_string(one_slice));
  EXPECT_LT(t["auto"] * 1.2, one_slice);
  EXPECT_LT(one_slice * 1.1, t["ring"]);
}

// Aggregation under the protocol model's round robin (docs/architecture.md, "Aggregation
// under round robin"): two nodes of configs/16x_dgx_h100_ib.yaml, hierarchical_nvls, 8 MiB.
// The 16 channels' NVLS requests (32 KiB each: 14 NVLink packets per port) share every
// GPU port; per packet they progress together and finish late together, while one
// transaction per turn lets them finish one after another: plain aggregation is 23.1%
// fast (56.57 against 73.58 us). With aggregate_round_robin_packets a shared turn is one
// packet: 74.04 us (+0.63%). (It was 72.73, -1.16%, while the config's InfiniBand links
// aggregated: a message that found the NIC port alone took a whole 16 KiB transaction
// just before the next channel's message arrived.) Tolerance 2%: a message that finds its
// NVLink port alone still takes a whole transaction (up to 16 KiB) where per packet the
// next message's packets would interleave; plain aggregation misses it by 10x. It must
// still aggregate where a message is alone (fewer transaction-hops than per packet) and
// move the same packets and bytes.
TEST(SixteenNodeIb, RoundRobinInPacketsAgreesWithPerPacket) {
  const std::vector<std::string> base = two_ib_nodes_hierarchical_nvls("8MiB");
  const json pp = run_ok(cat(base, {"--set", "simulation.aggregate_bytes=0B"}), "rr_pp");
  const json rr =
      run_ok(cat(base, {"--set", "simulation.aggregate_round_robin_packets=true"}), "rr_on");
  ASSERT_FALSE(pp.is_null());
  ASSERT_FALSE(rr.is_null());
  const uint64_t S = 8ull << 20;
  const double t_pp = row_of(pp, S)["time_us"].get<double>();
  const double t_rr = row_of(rr, S)["time_us"].get<double>();
  RecordProperty("per_packet_us", std::to_string(t_pp));
  RecordProperty("round_robin_packets_us", std::to_string(t_rr));
  EXPECT_NEAR(t_rr / t_pp, 1.0, 0.02);
  EXPECT_LT(rr["run_cost"]["transaction_hops"].get<double>(),
            0.9 * pp["run_cost"]["transaction_hops"].get<double>());
  EXPECT_EQ(rr["run_cost"]["packet_hops"], pp["run_cost"]["packet_hops"]);
  // The option changes nothing per packet (every transaction is one packet there).
  const json pp_on = run_ok(cat(base, {"--set", "simulation.aggregate_bytes=0B", "--set",
                                       "simulation.aggregate_round_robin_packets=true"}),
                            "rr_pp_on");
  ASSERT_FALSE(pp_on.is_null());
  EXPECT_EQ(row_of(pp_on, S)["time_us"], row_of(pp, S)["time_us"]);
}

// InfiniBand links that do not aggregate (`link_types.<name>.aggregate: false`, as
// configs/16x_dgx_h100_ib.yaml ships them): at 256 KiB auto picks tree/ll, whose LL stores
// are never aggregated; what was aggregated were the proxies' 64 KiB RDMA writes, as 16 KiB
// transactions (4 InfiniBand packets) that took whole round-robin turns at a NIC port,
// where per packet the writes converging on it interleave packet by packet: 96.11 us
// against 97.59 per packet (-1.5%). With packets on the InfiniBand links nothing at this
// size moves as transactions of several packets, and the run is the per-packet one
// (97.59 us both). Tolerances: 0.1% for the agreement (measured equal to the reported
// 0.01 us), and the aggregated links must be at least 0.75% fast (half the measured
// error), so the test fails if `aggregate: false` stops taking effect.
TEST(SixteenNodeIb, InfinibandLinksWithoutAggregationAgreeWithPerPacket) {
  const std::vector<std::string> base = {"run", source("configs/16x_dgx_h100_ib.yaml"),
                                         "--quiet", "--set", "workload.min_bytes=256KiB",
                                         "--set", "workload.max_bytes=256KiB"};
  const json shipped = run_ok(base, "ib_shipped");
  const json pp = run_ok(cat(base, {"--set", "simulation.aggregate_bytes=0B"}), "ib_pp");
  const json agg = run_ok(cat(base, {"--set", "link_types.ndr.aggregate=true", "--set",
                                     "link_types.ndr_spine.aggregate=true"}),
                          "ib_aggregated");
  ASSERT_FALSE(shipped.is_null());
  ASSERT_FALSE(pp.is_null());
  ASSERT_FALSE(agg.is_null());
  const uint64_t S = 256ull << 10;
  const double t_shipped = row_of(shipped, S)["time_us"].get<double>();
  const double t_pp = row_of(pp, S)["time_us"].get<double>();
  const double t_agg = row_of(agg, S)["time_us"].get<double>();
  RecordProperty("shipped_us", std::to_string(t_shipped));
  RecordProperty("per_packet_us", std::to_string(t_pp));
  RecordProperty("ib_aggregated_us", std::to_string(t_agg));
  EXPECT_NEAR(t_shipped / t_pp, 1.0, 0.001);
  EXPECT_LT(t_agg, t_pp * (1 - 0.0075));
  // With the InfiniBand links aggregating, the proxies' writes move as transactions of
  // several packets; as shipped nothing at this size does (the tree's LL stores are never
  // aggregated, and those writes were the only aggregated messages): hop for hop per packet.
  EXPECT_LT(agg["run_cost"]["transaction_hops"].get<double>(),
            pp["run_cost"]["transaction_hops"].get<double>());
  EXPECT_EQ(shipped["run_cost"]["transaction_hops"], pp["run_cost"]["transaction_hops"]);
  EXPECT_EQ(shipped["run_cost"]["packet_hops"], pp["run_cost"]["packet_hops"]);
}

// Acceptance 4 on two nodes: NVLS inside each node, rail rings across (NCCL's multi-node
// NVLS). The flat ring is NIC-bound: each NIC carries 2(n-1)/n S / 8, so no flat ring can
// beat busbw = 8 NICs x 49.68 GB/s = 397.4 GB/s (the TwoNodeIb case above reaches 396).
// hierarchical_nvls sends only 2(N-1)/N x S/8 = S/8 per NIC (the flat ring: 2 x 15/16 x
// S/8), and its NVLink traffic is (L+1)/L S = 1.125 S per GPU and direction
// instead of the ring reduce-scatter + all-gather's 1.75 S, so the node's NVLink phases
// (~1.0 ms for 256 MiB at DGX H100's NVLS rate) bound it. Model: busbw ~500 GB/s; 4
// slices (with one, a node's results come out of the cross-node ring only at the end of
// its NVLS reductions, and it reaches 418 GB/s; docs/collectives.md). The test asks for
// 3% above the flat ring's ceiling (the protocol model's costs, below), and checks the
// mechanism: every NIC moved S/8 of payload (+1% for flags and acks). With the config's
// 16 channels and 4 slices every message is 256 KiB (S / 16 / 4 / 8 blocks / 2
// sub-blocks), below its 512 KiB aggregation threshold (simulation.aggregate_min_message),
// so the test aggregates from 16 KiB: 1176.72 us, busbw 427.73, in ~26 CPU s, with the
// config's aggregate_round_robin_packets: nvls (1224.65 us in 1.4 s with false); per
// packet 1152.30 us, busbw 436.79, 45 CPU s (measured 2026-12-05).
TEST(TwoNodeIb, HierarchicalNvlsBeatsAnyFlatRingForLargeMessages) {
  const uint64_t S = 256ull << 20;
  const json r = run_ok(cat({"run", source("configs/2x_dgx_h100_ib.yaml"), "--quiet", "--set",
                             "workload.algorithm=hierarchical_nvls", "--set",
                             "workload.slices=4", "--set",
                             "simulation.aggregate_min_message=16KiB"},
                            sizes("256MiB", "256MiB")),
                        "hier_nvls_2");
  ASSERT_FALSE(r.is_null());
  const double busbw = row_of(r, S)["busbw_GBps"].get<double>();
  RecordProperty("busbw_GBps", std::to_string(busbw));
  const double ring_ceiling = 8 * 400e9 / 8 * 4096.0 / 4122.0 / 1e9;
  // Under the protocol model NVLS pays what NCCL's does (a fence and a multicast flag per
  // store, the reduction handshake, the NVLS path's own latency): 427.73 GB/s, where the
  // idealised NVLS gave 499.09. It must still beat any flat ring's NIC ceiling.
  EXPECT_GT(busbw, 1.03 * ring_ceiling);
  for (int node = 0; node < 2; ++node)
    for (int g = 0; g < 8; ++g) {
      const json& p = r["stats"]["node" + std::to_string(node) + "_gpu" + std::to_string(g) +
                                  ".port[18]"];
      const double nic = p["tx_payload_bytes"].get<double>();
      EXPECT_GE(nic, double(S) / 8) << node << "/" << g;
      EXPECT_LE(nic, double(S) / 8 * 1.01) << node << "/" << g;
    }
}

// Acceptance 2 of the collectives issue: on an uncontended fabric every algorithm's
// simulated time is within 2% of its alpha-beta closed form (algorithms.h), with alpha and
// beta taken from the config, not fitted. Fabric: configs/minimal.yaml at 8 ranks (one
// switch, VOQ + iSLIP, speedup 2: every pattern here is delivered without contention),
// sync: data, per-packet, 1 channel, 64 KiB chunks, S = 4 MiB (bandwidth-bound).
//   beta  = 1 / (2 links x 25 GB/s x 128/160 framing) = 1 / 40 GB/s per rank
//   alpha = one 128 B packet's trip: 2 x 6.4 ns serialisation (160 B at 25 GB/s) + 2 x 25 ns
//           links + 100 ns switch pipeline + 3.2 ns crossbar (160 B at 2 x 25 GB/s)
//         = 166.0 ns
// Formulas (n = 8, S the per-rank size):
//   all_reduce ring, hierarchical (one domain)  14 alpha + 1.75 S beta
//   all_reduce halving_doubling                  6 alpha + 1.75 S beta
//   all_reduce direct                            2 alpha + 1.75 S beta
//   all_reduce tree: not here. On one node NCCL's tree is a chain of the n ranks (14 hops
//        up and back at n = 8) and its 8-piece window per (channel, tree) is shorter than
//        the chain's round trip, so it is window-bound: 1.12-1.23 x 14 alpha + 2 S beta +
//        14 b beta for 8-128 KiB pieces. Its closed form with the window is not derived.
//   reduce_scatter, all_gather ring; alltoall pairwise   7 alpha + 0.875 S beta
//   alltoall direct                              alpha + 0.875 S beta
//   sendrecv                                     alpha + S beta
//   broadcast, reduce (pipelined chain)          7 alpha + S beta + 6 b beta: the table's
//        (n-1) alpha + S beta plus the chain's fill, n-2 pieces of b = 64 KiB (with one
//        channel, the chain's first piece crosses 7 links before the last rank has it)
struct ClosedForm {
  const char* collective;
  const char* algorithm;
  double alphas;        // alpha multiplier
  double volume;        // multiplier of S beta
  double fill_pieces;   // extra pieces of b beta
  const char* chunk = "64KiB";  // b
};

void PrintTo(const ClosedForm& c, std::ostream* os) { *os << c.collective << "/" << c.algorithm; }

class AlphaBeta : public ::testing::TestWithParam<ClosedForm> {};

TEST_P(AlphaBeta, SimulatedWithinTwoPercentOfClosedFormOnOneSwitch) {
  const ClosedForm c = GetParam();
  const double S = 4.0 * 1024 * 1024;
  const double b = std::string(c.chunk) == "8KiB" ? 8.0 * 1024 : 64.0 * 1024;
  const double beta = 1.0 / (2 * 25e9 * 128.0 / 160.0);
  const double alpha = 2 * 6.4e-9 + 2 * 25e-9 + 100e-9 + 3.2e-9;
  const double formula = c.alphas * alpha + c.volume * S * beta + c.fill_pieces * b * beta;
  const json r = run_ok({"run", source("configs/minimal.yaml"), "--quiet",
                         "--set", "workload.type=collective_sweep",
                         "--set", std::string("workload.collective=") + c.collective,
                         "--set", std::string("workload.algorithm=") + c.algorithm,
                         "--set", "topology.endpoints=8", "--set", "device_types.sw.ports=16",
                         "--set", "simulation.functional=false", "--set", "workload.channels=1",
                         "--set", std::string("workload.chunk_bytes=") + c.chunk, "--set", "workload.sync=data",
                         "--set", "workload.min_bytes=4MiB", "--set", "workload.max_bytes=4MiB"},
                        std::string("ab_") + c.collective + "_" + c.algorithm);
  ASSERT_FALSE(r.is_null());
  const double t = row_of(r, 4ull << 20)["time_us"].get<double>() * 1e-6;
  RecordProperty("simulated_us", std::to_string(t * 1e6));
  RecordProperty("closed_form_us", std::to_string(formula * 1e6));
  EXPECT_NEAR(t / formula, 1.0, 0.02) << t * 1e6 << " us vs " << formula * 1e6 << " us";
}

INSTANTIATE_TEST_SUITE_P(
    Algorithms, AlphaBeta,
    ::testing::Values(ClosedForm{"all_reduce", "ring", 14, 1.75, 0},
                      ClosedForm{"all_reduce", "hierarchical", 14, 1.75, 0},
                      ClosedForm{"all_reduce", "halving_doubling", 6, 1.75, 0},
                      ClosedForm{"all_reduce", "direct", 2, 1.75, 0},
                      ClosedForm{"reduce_scatter", "ring", 7, 0.875, 0},
                      ClosedForm{"all_gather", "ring", 7, 0.875, 0},
                      ClosedForm{"alltoall", "pairwise", 7, 0.875, 0},
                      ClosedForm{"alltoall", "direct", 1, 0.875, 0},
                      ClosedForm{"sendrecv", "direct", 1, 1.0, 0},
                      ClosedForm{"broadcast", "ring", 7, 1.0, 6},
                      ClosedForm{"reduce", "ring", 7, 1.0, 6}),
    [](const ::testing::TestParamInfo<ClosedForm>& i) {
      return std::string(i.param.collective) + "_" + i.param.algorithm;
    });

// Every all-reduce algorithm, and auto, computes the exact sum on a two-level fabric:
// 2 and 3 nodes x 8 GPUs (3 nodes: the rail-aligned ring's odd-N layout), functional mode,
// sizes from one element to 16 KiB, 16 channels (rail orders on every rail).
class AcrossNodes : public ::testing::TestWithParam<const char*> {};

TEST_P(AcrossNodes, AllReduceExactOnTwoAndThreeNodes) {
  for (const char* nodes : {"2", "3"}) {
    const json r = run_ok(cat({"run", source("configs/2x_dgx_h100_ib.yaml"), "--quiet", "--set",
                               std::string("workload.algorithm=") + GetParam(), "--set",
                               std::string("topology.nodes=") + nodes, "--set",
                               "simulation.functional=true"},
                              sizes("4B", "16KiB", "16")),
                          std::string("exact_") + GetParam() + nodes);
    ASSERT_FALSE(r.is_null());
    ASSERT_EQ(r["rows"].size(), 4u);
    for (const json& row : r["rows"]) EXPECT_EQ(row["wrong"].get<uint64_t>(), 0u) << nodes;
  }
}

INSTANTIATE_TEST_SUITE_P(Algorithms, AcrossNodes,
                         ::testing::Values("ring", "tree", "halving_doubling", "direct",
                                           "hierarchical", "hierarchical_nvls", "auto"));

// Slices keep the sums exact on the fabric: hierarchical and hierarchical_nvls with 3
// slices on 2 nodes, functional mode (the engine's per-node NVLS groups).
TEST(AcrossNodesSliced, HierarchicalExactWithSlices) {
  for (const char* algo : {"hierarchical", "hierarchical_nvls"}) {
    const json r = run_ok(cat({"run", source("configs/2x_dgx_h100_ib.yaml"), "--quiet", "--set",
                               std::string("workload.algorithm=") + algo, "--set",
                               "workload.slices=3", "--set", "simulation.functional=true"},
                              sizes("4B", "16KiB", "16")),
                          std::string("exact_sliced_") + algo);
    ASSERT_FALSE(r.is_null());
    ASSERT_EQ(r["rows"].size(), 4u);
    for (const json& row : r["rows"]) EXPECT_EQ(row["wrong"].get<uint64_t>(), 0u) << algo;
  }
}

// The tree across nodes against its pipelined closed form (docs/collectives.md, "The tree
// across nodes: pipelined closed form"). N x DGX H100 on NDR rails (configs/
// 2x_dgx_h100_ib.yaml, N = 2, 3, 4), the fabric alone (sync data, launch and completion 0),
// 32 channels, 128 KiB pieces (NCCL's Tree/Simple piece at these sizes), 1 GiB:
//   T = max(T_nvlink, T_nic) + fill
//   T_nvlink = 2 (L-1)/L S / B_gpu        every GPU forwards each half up and down its chain
//   T_nic    = k_N S / L / B_nic          the busiest NIC: k_N = 1 (N = 2), 2 (N = 3), 3 (N = 4)
//                                        halves per stream (an up send plus a down send per
//                                        child, in the tree whose heads are on its rail)
//   fill     = 2 ((L-1) b / B_gpu + ceil(log2 N) b / B_nic)   one piece up and down the depth
// with B_gpu = 18 links x 25 GB/s x 128/160 = 360 GB/s, B_nic = 50 GB/s x 4096/4122.
// Tolerance 5% (the issue's); measured 5220.25, 5556.12, 8264.74 us against 5229.95,
// 5418.44, 8119.83: -0.2%, +2.5%, +1.8% (N = 2, 3, 4).
TEST(TreeAcrossNodes, WithinFivePercentOfPipelinedClosedForm) {
  const double S = 1024.0 * 1024 * 1024, b = 128.0 * 1024, L = 8;
  const double B_gpu = 18 * 25e9 * 128.0 / 160.0, B_nic = 50e9 * 4096.0 / 4122.0;
  for (const auto& [N, k, log2N] : std::vector<std::tuple<int, double, double>>{
           {2, 1, 1}, {3, 2, 2}, {4, 3, 2}}) {
    const double t_nvl = 2 * (L - 1) / L * S / B_gpu, t_nic = k * S / L / B_nic;
    const double fill = 2 * ((L - 1) * b / B_gpu + log2N * b / B_nic);
    const double formula = std::max(t_nvl, t_nic) + fill;
    const json r = run_ok(cat({"run", source("configs/2x_dgx_h100_ib.yaml"), "--quiet", "--set",
                               "topology.nodes=" + std::to_string(N), "--set",
                               "workload.algorithm=tree", "--set", "workload.sync=data", "--set",
                               "workload.chunk_bytes=128KiB", "--set",
                               "simulation.aggregate_min_message=128KiB", "--set",
                               "workload.launch_latency=0ns", "--set",
                               "workload.completion_latency=0ns"},
                              sizes("1GiB", "1GiB")),
                          "tree_nodes" + std::to_string(N));
    ASSERT_FALSE(r.is_null());
    const double t = row_of(r, 1ull << 30)["time_us"].get<double>() * 1e-6;
    RecordProperty("simulated_us_" + std::to_string(N), std::to_string(t * 1e6));
    RecordProperty("closed_form_us_" + std::to_string(N), std::to_string(formula * 1e6));
    EXPECT_NEAR(t / formula, 1.0, 0.05) << N << " nodes: " << t * 1e6 << " us vs " << formula * 1e6;
  }
}

// All-gather spreads its channels over the rails as all-reduce does: on the rail cluster
// (configs/32x_dgx_h100_rail.yaml, 8 rails, spines) every NIC carries all-gather traffic at
// all-reduce's per-NIC rate, within 10% (the bound; before the rail rings,
// all-gather reached ~50 GB/s of busbw where all-reduce reached ~397: one NIC's worth).
// Per NIC = the NIC port's payload sent / the row's time. Size and fidelity: 4 nodes
// (32 GPUs, all 8 rails and the spine layer; what decides the spreading is the channel ->
// rail assignment of the rail rings, the same for 4 and 32 nodes), the InfiniBand credit
// NICs of the config's `scale_out: infiniband`, 64 MiB, transactions of 16 KiB from 16 KiB
// messages up. At 32 nodes a bandwidth-bound row (256 MiB: 255 ring steps each way) takes
// minutes of CPU (measured: 56 s of CPU for 170 us of a ~1.4 ms row). Measured: all-gather
// 48.58 GB/s per NIC (busbw 388.49), all-reduce 49.10 (392.61): -1.1%.
TEST(RailCluster, AllGatherPerNicBandwidthWithinTenPercentOfAllReduce) {
  std::map<std::string, std::vector<double>> per_nic;
  for (const char* c : {"all_gather", "all_reduce"}) {
    const json r = run_ok(cat({"run", source("configs/32x_dgx_h100_rail.yaml"), "--quiet", "--set",
                               "topology.nodes=4", "--set", "topology.scale_out=infiniband",
                               "--set", "simulation.aggregate_min_message=16KiB", "--set",
                               "workload.type=collective_sweep", "--set",
                               std::string("workload.collective=") + c},
                              sizes("64MiB", "64MiB")),
                          std::string("rail_") + c);
    ASSERT_FALSE(r.is_null());
    const double t = row_of(r, 64ull << 20)["time_us"].get<double>() * 1e-6;
    for (int node = 0; node < 4; ++node)
      for (int g = 0; g < 8; ++g)
        per_nic[c].push_back(r["stats"]["node" + std::to_string(node) + "_gpu" +
                                        std::to_string(g) + ".port[18]"]["tx_payload_bytes"]
                                 .get<double>() /
                             t / 1e9);
  }
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return s / double(v.size());
  };
  const double ag = mean(per_nic["all_gather"]), ar = mean(per_nic["all_reduce"]);
  RecordProperty("all_gather_per_nic_GBps", std::to_string(ag));
  RecordProperty("all_reduce_per_nic_GBps", std::to_string(ar));
  EXPECT_NEAR(ag / ar, 1.0, 0.10) << ag << " vs " << ar << " GB/s per NIC";
  // Every NIC takes its share (no rail left idle).
  for (double x : per_nic["all_gather"]) EXPECT_GE(x, 0.9 * ag);
}

// The shape of a public multi-node curve (docs/validation.md, NVIDIA/nccl-tests#232; the
// rows in docs/data/nccl-tests-232.csv): tree all-reduce on 2 nodes x 1 H100, each GPU's
// own 400 Gb/s NIC, 2-16 MiB. The model's side as documented: `channels: auto`, NCCL's 4
// channels on one NIC (one found by the search at 48 GB/s, doubled by
// ncclTopoDupChannels and again by ncclTopoPostset), which tree runs as 2 channels of 2
// trees (4 thread blocks; the count is asserted, then the curve), and
// whole 512 KiB steps (NCCL 2.20 and later do not halve tree/Simple chunks). What makes the
// shape is the network proxy: every 512 KiB step is written by its thread block at
// channel_bandwidth, then posted, crosses the NIC, is polled and flushed before the next
// hop's block can read it (store and forward per step); without it the model reached half
// its plateau below 2 MiB (geometric-mean error 42.8%). Tolerances: each row within 15%
// of the measured out-of-place time (the reporter's own in-place run differs from it by
// 18% at 2 MiB: the hardware's run-to-run spread at the small end); the geometric-mean
// error within 10%; and the shape itself: busbw crosses half of the NIC's 49.68 GB/s
// between 2 and 4 MiB, as the measured curve does (18.53 -> 27.16 GB/s), and rises
// monotonically. Measured (model): 112.49 / 140.50 / 230.26 / 386.86 us against
// 113.2 / 154.4 / 231.4 / 420.5: -0.6%, -9.0%, -0.5%, -8.0%.
TEST(TwoNodeIb, TreeCurveOnePerNodeHasTheShapeOfNcclTests232) {
  std::map<uint64_t, double> measured;  // size -> out-of-place time (us)
  std::istringstream csv(slurp(source("docs/data/nccl-tests-232.csv")));
  for (std::string line; std::getline(csv, line);) {
    if (line.empty() || line[0] == '#' || line[0] == 's') continue;
    std::istringstream row(line);
    std::string size, t;
    std::getline(row, size, ',');
    std::getline(row, t, ',');
    measured[std::stoull(size)] = std::stod(t);
  }
  ASSERT_EQ(measured.size(), 5u);
  const json r = run_ok(cat({"run", source("configs/2x_dgx_h100_ib.yaml"), "--quiet", "--set",
                             "topology.endpoints_per_node=1", "--set", "workload.algorithm=tree",
                             "--set", "workload.channels=auto", "--set",
                             "workload.tree_chunk_halving=false"},
                            sizes("2MiB", "16MiB")),
                        "nccl_tests_232");
  ASSERT_FALSE(r.is_null());
  EXPECT_EQ(r["resolved_config"]["workload"]["channels_auto"]["channels"], 4);
  double log_sum = 0;
  double last_busbw = 0;
  const double half = 0.5 * 400e9 / 8 * 4096.0 / 4122.0 / 1e9;
  for (uint64_t s : {2ull << 20, 4ull << 20, 8ull << 20, 16ull << 20}) {
    const json row = row_of(r, s);
    const double t = row["time_us"].get<double>(), busbw = row["busbw_GBps"].get<double>();
    RecordProperty("simulated_us_" + std::to_string(s >> 20) + "MiB", std::to_string(t));
    EXPECT_NEAR(t / measured.at(s), 1.0, 0.15) << s << " B: " << t << " us vs " << measured.at(s);
    log_sum += std::fabs(std::log(t / measured.at(s)));
    EXPECT_GT(busbw, last_busbw) << s;
    if (s == (2ull << 20)) {
      EXPECT_LT(busbw, half);
    }
    if (s == (4ull << 20)) {
      EXPECT_GT(busbw, half);
    }
    last_busbw = busbw;
  }
  const double geomean = std::exp(log_sum / 4) - 1;
  RecordProperty("geomean_error", std::to_string(geomean));
  EXPECT_LT(geomean, 0.10);
}
