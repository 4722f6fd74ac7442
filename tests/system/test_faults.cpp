// Fault injection through the whole tool (docs/faults.md): links, ports and switches going
// down and up, flapping links and bit-error bursts, on credit fabrics with link-level replay
// (NVLink, PCIe), with end-to-end retransmission (InfiniBand) and lossy Ethernet with NIC
// transports. Every run that finishes has passed the end-of-run checks (every transaction
// delivered or counted lost, every credit back, every replay buffer empty, the packet
// ledger balanced): a failure there is exit 3.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/system/system_util.h"

using namespace fabricsim::systest;
using nlohmann::json;

namespace {

// `fabricsim run CONFIG --set S...` with --out; `faults` (YAML flow, may be "") replaces the
// config's faults section.
RunResult run_with(const std::string& config, std::vector<std::string> sets,
                   const std::string& faults, const std::string& tag) {
  std::vector<std::string> args{"run", source(config)};
  if (!faults.empty()) sets.push_back("faults=" + faults);
  for (const std::string& s : sets) args.insert(args.end(), {"--set", s});
  return run_fabricsim(args, fresh_dir("faults_" + tag));
}

double time_us(const json& results, uint64_t bytes) {
  return row_of(results, bytes)["time_us"].get<double>();
}

// sent = delivered + lost, nothing outstanding.
void expect_balance(const json& results) {
  const json& c = results["checks"];
  EXPECT_EQ(c["packets_outstanding"].get<uint64_t>(), 0u);
  EXPECT_EQ(c["payload_bytes_sent"].get<uint64_t>(),
            c["payload_bytes_delivered"].get<uint64_t>() + c["payload_bytes_lost"].get<uint64_t>());
}

const char* kLeafSpine = "configs/ib_leaf_spine.yaml";
constexpr uint64_t k16MiB = 16ull << 20, k4MiB = 4ull << 20;

}  // namespace

// Acceptance: a link down mid-all-reduce on a fabric with a spare path completes, and the
// extra time is explained. ib_leaf_spine.yaml takes the uplink leaf0-spine0 down 100 us
// into a 16 MiB ring all-reduce: the transaction on the wire is cut and lost, InfiniBand
// retransmits it end to end after the 100 us timeout, traffic queued for the link waits
// for the routes to be recomputed (10 us), and the other spine has the capacity. The extra
// time is at most those waits; near the end of the collective the retransmission is what
// the collective waits for (the ring has slack earlier: another chunk's steps fill it).
TEST(Faults, SparePathCompletesWithTheExtraTimeExplained) {
  const RunResult clean = run_with(kLeafSpine, {}, "null", "spare_clean");
  ASSERT_EQ(clean.exit_code, 0) << clean.err;
  const RunResult r = run_with(kLeafSpine, {}, "", "spare");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_balance(r.results);
  const double base = time_us(clean.results, k16MiB), t = time_us(r.results, k16MiB);
  const json& f = r.results["faults"];
  const json& e = f["events"][0];
  EXPECT_EQ(e["event"], "link_down leaf0.port[4]-spine0.port[0] at 100us, stays down");
  EXPECT_EQ(e["at_ps"].get<uint64_t>(), 100'000'000u);
  EXPECT_EQ(e["during"], "the 16MiB all_reduce");
  EXPECT_GE(e["cut_transactions"].get<uint64_t>(), 1u);
  EXPECT_GE(e["retransmitted_end_to_end"].get<uint64_t>(), 1u);
  EXPECT_EQ(e["lost_for_good"].get<uint64_t>(), 0u);
  EXPECT_EQ(e["traffic_wait_ps"].get<uint64_t>(), 10'000'000u);  // detection_time
  EXPECT_EQ(e["ceiling_busbw_GBps_after"].get<double>(), e["ceiling_busbw_GBps_before"].get<double>());
  EXPECT_EQ(f["route_recomputations"].get<uint64_t>(), 1u);
  EXPECT_EQ(f["lost_for_good"].get<uint64_t>(), 0u);
  // Slower, and by no more than the waits the report names.
  EXPECT_GT(t, base);
  EXPECT_LE(t - base, 10.0 + 100.0);
  // The explanation is printed under the table.
  EXPECT_NE(r.out.find("# fault 0: link_down leaf0.port[4]-spine0.port[0] at 100us, stays down, "
                       "during the 16MiB all_reduce: 1 transaction cut on the wire; 1 transaction "
                       "lost and retransmitted end to end after the 100us timeout; traffic for its "
                       "links waited 10.000 us"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("ceiling busbw unchanged with its links down"), std::string::npos);

  // Late in the collective the retransmission is on the critical path: the row ends about
  // one timeout after the failure.
  const RunResult late = run_with(kLeafSpine, {"faults.events[0].at=480us"}, "", "spare_late");
  ASSERT_EQ(late.exit_code, 0) << late.err;
  expect_balance(late.results);
  const double tl = time_us(late.results, k16MiB);
  EXPECT_GT(tl, 480.0 + 100.0);
  EXPECT_LT(tl, 480.0 + 100.0 + 10.0);
  EXPECT_GE(late.results["faults"]["events"][0]["retransmitted_end_to_end"].get<uint64_t>(), 1u);

  // A longer timeout moves the end by as much: the extra time is the retransmission's.
  const RunResult slow = run_with(kLeafSpine, {"faults.events[0].at=480us",
                                               "faults.retransmit_timeout=150us"}, "", "spare_rto");
  ASSERT_EQ(slow.exit_code, 0) << slow.err;
  EXPECT_NEAR(time_us(slow.results, k16MiB) - tl, 50.0, 1.0);
}

// Acceptance: on a fabric without a spare path the run stops with a clear message (exit 2)
// naming the cut: gpu0's only link.
TEST(Faults, NoSparePathStopsNamingTheCut) {
  const RunResult r =
      run_with(kLeafSpine, {"faults.events[0].link=gpu0.port[0]"}, "", "no_spare");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("ib_leaf_spine.yaml:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(": faults.events[0]: the workload cannot finish: gpu0 (rank 0) has no "
                       "path to gpu1 (rank 1) after link_down gpu0.port[0]-leaf0.port[0] at "
                       "100us, stays down (links down at the end: gpu0.port[0]-leaf0.port[0]); "
                       "give it an up_at, or a system with another path (0 of 1 sizes finished"),
            std::string::npos)
      << r.err;
  // The same cut healed in time: the collective completes.
  const RunResult healed = run_with(
      kLeafSpine, {"faults.events[0].link=gpu0.port[0]", "faults.events[0].up_at=150us"}, "",
      "no_spare_healed");
  ASSERT_EQ(healed.exit_code, 0) << healed.err;
  expect_balance(healed.results);

  // A GPU of two nodes joined by InfiniBand rails loses its NIC: its peers on the other
  // node cannot reach it (GPUs do not forward), exit 2 naming the cut.
  const RunResult nic = run_with("configs/2x_dgx_h100_ib.yaml",
                                 {"workload.min_bytes=4MiB", "workload.max_bytes=4MiB"},
                                 "{events: [{type: link_down, link: \"node0_gpu3.port[18]\", at: 20us}]}",
                                 "no_spare_nic");
  EXPECT_EQ(nic.exit_code, 2) << nic.err;
  EXPECT_NE(nic.err.find("faults.events[0]: the workload cannot finish: "), std::string::npos)
      << nic.err;
  EXPECT_NE(nic.err.find("after link_down node0_gpu3.port[18]-rail3.port[0] at 20us"),
            std::string::npos)
      << nic.err;
}

// A GPU of minimal.yaml (2 links into one switch) loses one link 100 us into a 4 MiB ring
// all-reduce: the rest of the collective runs at the ceiling of one link (half), and the
// report's estimate of the capacity's cost is the extra time measured; results stay exact.
TEST(Faults, LostCapacityExplainsTheExtraTime) {
  const std::vector<std::string> sets{"workload.min_bytes=4MiB", "workload.max_bytes=4MiB"};
  const RunResult clean = run_with("configs/minimal.yaml", sets, "", "capacity_clean");
  ASSERT_EQ(clean.exit_code, 0) << clean.err;
  const RunResult r = run_with("configs/minimal.yaml", sets,
                               "{events: [{type: link_down, link: \"gpu0.port[0]\", at: 100us}]}",
                               "capacity");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_exact_and_clean(r.results);  // NVLink replays what the cut held: nothing lost
  const json& e = r.results["faults"]["events"][0];
  EXPECT_EQ(e["ceiling_busbw_GBps_after"].get<double>() * 2, e["ceiling_busbw_GBps_before"].get<double>());
  EXPECT_GE(e["rerouted_after_detection"].get<uint64_t>(), 1u);  // the cut: on the other link
  EXPECT_EQ(e["lost_transactions"].get<uint64_t>(), 0u);
  const double extra = time_us(r.results, k4MiB) - time_us(clean.results, k4MiB);
  const double estimate = double(e["capacity_extra_ps_estimate"].get<uint64_t>()) * 1e-6;
  EXPECT_GT(extra, 40.0);
  EXPECT_NEAR(extra, estimate, 0.05 * estimate);
  EXPECT_NE(r.out.find("ceiling busbw with its links down 20.00 GB/s (was 40.00): the rest of "
                       "the row"),
            std::string::npos)
      << r.out;
  // Before the collective: all of it at half the ceiling.
  const RunResult early = run_with("configs/minimal.yaml", sets,
                                   "{events: [{type: link_down, link: \"gpu0.port[0]\", at: 0ns}]}",
                                   "capacity_early");
  ASSERT_EQ(early.exit_code, 0) << early.err;
  EXPECT_NEAR(time_us(early.results, k4MiB), 2 * time_us(clean.results, k4MiB),
              0.02 * time_us(clean.results, k4MiB));
}

// A link that comes back: NVLink replays what the cut held on the same link once it is up
// (an outage shorter than the detection time: routes never change); InfiniBand too.
TEST(Faults, LinkDownAndUpReplaysOnTheSameLink) {
  const RunResult r = run_with(
      "configs/minimal.yaml", {"workload.max_bytes=1MiB"},
      "{detection_time: 10us, events: [{type: link_down, link: \"sw0.port[3]\", at: 5us, up_at: 8us}]}",
      "down_up");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_exact_and_clean(r.results);
  const json& e = r.results["faults"]["events"][0];
  EXPECT_GE(e["cut_transactions"].get<uint64_t>(), 1u);
  EXPECT_EQ(e["replayed_after_link_up"].get<uint64_t>(), e["cut_transactions"].get<uint64_t>());
  EXPECT_EQ(e["rerouted_after_detection"].get<uint64_t>(), 0u);
  EXPECT_EQ(e["traffic_wait_ps"].get<uint64_t>(), 3'000'000u);  // down 3 us, up before detection
  // Two detections (down, up), both after the link was back.
  EXPECT_EQ(r.results["faults"]["route_recomputations"].get<uint64_t>(), 2u);
  // The port's statistics show the outage.
  const json& s = r.results["stats"]["sw0.port[3]"];
  EXPECT_EQ(s["down_ps"].get<uint64_t>(), 3'000'000u);
  EXPECT_EQ(s["cut_transactions"].get<uint64_t>() +
                r.results["stats"]["gpu1.port[1]"]["cut_transactions"].get<uint64_t>(),
            e["cut_transactions"].get<uint64_t>());
}

// port_down is link_down of the link on that port: the same run.
TEST(Faults, PortDownIsTheLinkOnIt) {
  const RunResult a = run_with("configs/minimal.yaml", {"workload.max_bytes=256KiB"},
                               "{events: [{type: link_down, link: \"gpu2.port[1]\", at: 4us, up_at: 30us}]}",
                               "port_a");
  const RunResult b = run_with("configs/minimal.yaml", {"workload.max_bytes=256KiB"},
                               "{events: [{type: port_down, port: \"sw0.port[5]\", at: 4us, up_at: 30us}]}",
                               "port_b");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(a.results["rows"], b.results["rows"]);
  EXPECT_EQ(a.results["faults"]["events"][0]["cut_transactions"],
            b.results["faults"]["events"][0]["cut_transactions"]);
}

// A flapping link: count outages, two route recomputations each (detection shorter than
// the outage), exact results, deterministic.
TEST(Faults, FlappingLinkIsExactAndDeterministic) {
  const std::string flap =
      "{detection_time: 1us, events: [{type: link_flap, link: \"gpu1.port[1]\", at: 5us, "
      "down_for: 2us, period: 5us, count: 8}]}";
  const RunResult a = run_with("configs/minimal.yaml", {"workload.max_bytes=1MiB"}, flap, "flap_a");
  const RunResult b = run_with("configs/minimal.yaml", {"workload.max_bytes=1MiB"}, flap, "flap_b");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  expect_exact_and_clean(a.results);
  EXPECT_EQ(a.results["rows"], b.results["rows"]);
  EXPECT_EQ(a.results["faults"], b.results["faults"]);
  const json& e = a.results["faults"]["events"][0];
  EXPECT_EQ(e["actions_played"].get<int>(), 16);
  EXPECT_EQ(a.results["faults"]["route_recomputations"].get<uint64_t>(), 16u);
  // Each outage: traffic waits until the detection (1 us) reroutes it.
  EXPECT_EQ(e["traffic_wait_ps"].get<uint64_t>(), 8 * 1'000'000u);
  EXPECT_NE(a.out.find("# fault 0: link_flap gpu1.port[1]-sw0.port[3] from 5us: 8 x down 2us "
                       "every 5us"),
            std::string::npos)
      << a.out;
}

// A switch fails: on InfiniBand what it held is retransmitted end to end and the routes go
// round it (the other spine); on NVLink what it held is gone (no end-to-end retransmission):
// exit 2 saying so.
TEST(Faults, SwitchDown) {
  const RunResult ib = run_with(
      kLeafSpine, {},
      "{events: [{type: switch_down, device: spine0, at: 100us, up_at: 300us}]}", "switch_ib");
  ASSERT_EQ(ib.exit_code, 0) << ib.err;
  expect_balance(ib.results);
  const json& e = ib.results["faults"]["events"][0];
  EXPECT_GE(e["lost_transactions"].get<uint64_t>(), 1u);
  EXPECT_EQ(e["retransmitted_end_to_end"], e["lost_transactions"]);
  EXPECT_EQ(ib.results["faults"]["route_recomputations"].get<uint64_t>(), 2u);

  const RunResult nvl = run_with("configs/minimal.yaml", {"workload.max_bytes=256KiB"},
                                 "{events: [{type: switch_down, device: sw0, at: 5us, up_at: 50us}]}",
                                 "switch_nvl");
  EXPECT_EQ(nvl.exit_code, 2) << nvl.err;
  EXPECT_NE(nvl.err.find("faults.events[0]: the workload cannot finish: "), std::string::npos)
      << nvl.err;
  EXPECT_NE(nvl.err.find("were lost for good, the first at sw0.port["), std::string::npos)
      << nvl.err;
  EXPECT_NE(nvl.err.find("switch_down sw0 at 5us, up at 50us"), std::string::npos) << nvl.err;
}

// A bit-error burst on a link without errors otherwise: CRC errors and replays happen
// during the burst only (the event's counts are the run's), results stay exact.
TEST(Faults, BitErrorBurst) {
  const RunResult r = run_with(
      "configs/minimal.yaml", {"workload.max_bytes=1MiB"},
      "{events: [{type: ber_burst, link: \"gpu1.port[1]\", at: 5us, duration: 50us, ber: 1e-5}]}",
      "ber");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_exact_and_clean(r.results);
  const json& e = r.results["faults"]["events"][0];
  const RetryTotals t = retry_totals(r.results);
  EXPECT_GT(t.crc_errors, 10u);
  EXPECT_EQ(e["crc_errors"].get<uint64_t>(), t.crc_errors);
  EXPECT_EQ(e["replays"].get<uint64_t>(), t.replays);
  EXPECT_EQ(e["retry_ps"].get<uint64_t>(), t.retry_ps);
  // Only that link's two ports saw errors.
  for (const auto& [name, s] : r.results["stats"].items()) {
    if (s.contains("crc_errors") && name != "gpu1.port[1]" && name != "sw0.port[3]") {
      EXPECT_EQ(s["crc_errors"].get<uint64_t>(), 0u) << name;
    }
  }
}

// Ethernet (Ultra Ethernet NICs on a 2-tier fat tree): a spine link or a spine switch goes
// down mid-permutation; what the failure drops is a packet-ledger drop its NIC transport
// retransmits; the ledger balances and every flow completes.
TEST(Faults, EthernetDropsAreRecoveredByTheTransport) {
  const std::vector<std::string> sets{"topology.tiers=2", "topology.radix=4",
                                      "topology.oversubscription=[1]",
                                      "workload={type: permutation, bytes: 2MB}"};
  for (const char* fault : {"{events: [{type: link_down, link: \"leaf0.port[2]\", at: 10us}]}",
                            "{events: [{type: switch_down, device: spine0, at: 10us, up_at: 40us}]}"}) {
    SCOPED_TRACE(fault);
    const RunResult r = run_with("configs/eth_fat_tree_128.yaml", sets, fault, "eth");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    expect_balance(r.results);
    const json& l = r.results["checks"]["packet_ledger"];
    uint64_t dropped = 0;
    for (const auto& [why, n] : l["dropped"].items()) dropped += n.get<uint64_t>();
    EXPECT_EQ(l["injected"].get<uint64_t>(), l["received"].get<uint64_t>() + dropped);
    const json& e = r.results["faults"]["events"][0];
    EXPECT_GT(e["dropped_for_transport"].get<uint64_t>(), 0u);
    EXPECT_EQ(e["lost_for_good"].get<uint64_t>(), 0u);
    EXPECT_GT(l["dropped"]["link_down"].get<uint64_t>() +
                  (l["dropped"].contains("switch_down") ? l["dropped"]["switch_down"].get<uint64_t>() : 0),
              0u);
  }
}

// Faults and training workloads: the report names the job a fault fell into; a fault after
// the workload is not played.
TEST(Faults, TrainingJobsAndLateFaults) {
  const RunResult r = run_with(
      "configs/minimal.yaml",
      {"simulation.functional=false",
       "workload={type: ddp_step, layers: 16, layer_params: [131072], forward_time: 5us, "
       "backward_time: 10us, bucket_bytes: 1MiB}"},
      "{events: [{type: link_down, link: \"gpu0.port[0]\", at: 50us}, "
      "{type: link_down, link: \"gpu1.port[0]\", at: 9s}]}",
      "training");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_balance(r.results);
  const json& ev = r.results["faults"]["events"];
  EXPECT_TRUE(ev[0]["played"].get<bool>());
  EXPECT_EQ(ev[0]["during"].get<std::string>().rfind("job ", 0), 0u) << ev[0];
  EXPECT_FALSE(ev[1]["played"].get<bool>());
  EXPECT_NE(r.out.find("# fault 1: link_down gpu1.port[0]-"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not played (the workload had finished)"), std::string::npos) << r.out;
}
