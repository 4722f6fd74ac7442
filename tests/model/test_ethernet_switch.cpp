// The Ethernet switch's mechanisms one at a time, on a star of hosts behind NICs around one
// switch, run end to end in process (app_main: one run per test, one SystemC kernel per
// process) and read back from results.json: PFC pause frames and paused time, ECN marking
// on dequeue, trimming. Comparisons of two runs (strict vs DWRR, ECMP vs spraying) are
// system tests (tests/system/test_ethernet.cpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fabrics/cli/app.h"

namespace fabricsim {
namespace {

// Hosts h0..h3 (NICs uec or roce), one switch `sw`; extra device-type keys appended.
std::string star(const std::string& sw_keys, const std::string& nic_keys,
                 const std::string& workload, const std::string& nic = "uec_nic") {
  std::ostringstream y;
  y << "name: star\nseed: 1\nsimulation: {aggregate_bytes: 0B, time_limit: 100ms}\n"
    << "link_types:\n"
    << "  eth: {protocol: ethernet, lanes: 4, lane_rate: 100Gb/s, framing: frame, header_bytes: "
       "86B, min_frame_bytes: 64B, gap_bytes: 20B, packet_payload: 4032B, latency: 200ns, "
       "rx_buffer: 1MiB}\n"
    << "  pcie: {protocol: pcie, lanes: 16, lane_rate: 32Gb/s, framing: frame, header_bytes: 24B,"
       " packet_payload: 4096B, latency: 100ns, rx_buffer: 64KiB}\n"
    << "device_types:\n"
    << "  gpu: {type: endpoint, protocol: pcie, ports: 1, memory_bandwidth: 3000GB/s}\n"
    << "  nic: {type: " << nic << nic_keys << "}\n"
    << "  esw: {type: ethernet_switch, ports: 8, pipeline_latency: 300ns" << sw_keys << "}\n"
    << "topology: {type: fat_tree, tiers: 2, radix: 8, oversubscription: [1], hosts: 4, "
       "endpoint_type: gpu, nic_type: nic, host_link_type: pcie, switch_type: esw, link_type: "
       "eth}\n"
    << "workload: " << workload << "\n";
  return y.str();
}

nlohmann::json run(const std::string& yaml, std::vector<std::string> extra = {}) {
  const std::string dir = "/tmp/fabricsim_esw_" + std::to_string(::getpid());
  const std::string file = dir + ".yaml";
  std::ofstream(file) << yaml;
  std::vector<std::string> args{"run", file, "--quiet", "--out", dir};
  args.insert(args.end(), extra.begin(), extra.end());
  EXPECT_EQ(app_main(args), 0);
  std::ifstream f(dir + "/results.json");
  nlohmann::json j;
  f >> j;
  return j;
}

// Two RoCE senders into one receiver over PFC with a low XOFF: the switch pauses both
// ingress ports (real frames, counted at the switch and received by the NICs, whose paused
// time on class 3 is positive), resumes them, and drops nothing.
TEST(EthernetSwitch, PfcPausesUpstreamAndLosesNothing) {
  const nlohmann::json j =
      run(star(", pfc: true, pfc_xoff: 64KiB, pfc_xon: 32KiB", ", dcqcn: false",
               "{type: incast, senders: 2, receiver: 0, bytes: 1MB}", "roce_nic"));
  const nlohmann::json& sw = j["stats"]["leaf0"];
  EXPECT_GT(sw["pause_frames_sent"].get<uint64_t>(), 0u);
  EXPECT_GT(sw["resume_frames_sent"].get<uint64_t>(), 0u);
  EXPECT_EQ(sw["drop_bytes"].get<uint64_t>(), 0u);
  for (const char* port : {"nic1.port[1]", "nic2.port[1]"}) {
    const nlohmann::json& p = j["stats"][port];
    ASSERT_TRUE(p.contains("pause_frames_rx")) << port;
    EXPECT_GT(p["paused_ps"]["3"].get<uint64_t>(), 0u) << port;
  }
  EXPECT_TRUE(j["checks"]["packet_ledger"]["dropped"].empty());
  // Two senders at 400G into one: the receiver's port stays busy (PFC holds the excess).
  EXPECT_GE(j["traffic"]["goodput_GBps"].get<double>(), 44.0);
}

// ECN marking happens on dequeue at the congested port, counted per switch and per port,
// and reaches the sender as ECN echoes.
TEST(EthernetSwitch, EcnMarksAtTheCongestedPortAndIsEchoed) {
  const nlohmann::json j = run(star(", ecn: true, ecn_kmin: 20KB, ecn_kmax: 200KB, ecn_pmax: 0.5",
                                    "", "{type: incast, senders: 3, receiver: 0, bytes: 1MB}"));
  const nlohmann::json& sw = j["stats"]["leaf0"];
  EXPECT_GT(sw["ecn_marks"].get<uint64_t>(), 0u);
  EXPECT_EQ(sw["ports"]["0"]["ecn_marks"].get<uint64_t>(), sw["ecn_marks"].get<uint64_t>());
  uint64_t echoes = 0;
  for (const char* n : {"nic1", "nic2", "nic3"})
    echoes += j["stats"][n]["uec"]["ecn_echoes_received"].get<uint64_t>();
  EXPECT_GT(echoes, 0u);
}

// Trimming: every trim comes back as a NACK and a retransmission; the trimmed-off payload
// is absorbed by the switch and the header's by the receiving NIC, so bytes balance.
TEST(EthernetSwitch, TrimsBecomeNacksAndRetransmissions) {
  const nlohmann::json j = run(star(", trimming: true, trim_threshold: 64KiB, trim_bytes: 0B",
                                    ", cc: none",
                                    "{type: incast, senders: 3, receiver: 0, bytes: 1MB}"));
  const uint64_t trims = j["stats"]["leaf0"]["trims"].get<uint64_t>();
  EXPECT_GT(trims, 0u);
  EXPECT_EQ(j["stats"]["nic0"]["uec"]["nacks_sent"].get<uint64_t>(), trims);
  EXPECT_EQ(j["checks"]["packet_ledger"]["retransmitted"]["trim_nack"].get<uint64_t>(), trims);
  EXPECT_EQ(j["checks"]["payload_bytes_sent"], j["checks"]["payload_bytes_delivered"]);
}

}  // namespace
}  // namespace fabricsim
