// Optical circuit switching and energy, run end to end through the command line's own entry
// point: light through a circuit at the closed-form latency to the picosecond, and the
// energy of a row computed by hand.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fabrics/cli/app.h"

namespace fabricsim {
namespace {

std::string write(const std::string& name, const std::string& text) {
  const std::string file = "/tmp/fabricsim_optics_" + name + "_" + std::to_string(::getpid()) + ".yaml";
  std::ofstream(file) << text;
  return file;
}

nlohmann::json run(const std::string& config, const std::string& name) {
  const std::string out = "/tmp/fabricsim_optics_out_" + name + "_" + std::to_string(::getpid());
  EXPECT_EQ(app_main({"run", config, "--quiet", "--out", out}), 0);
  std::ifstream f(out + "/results.json");
  std::stringstream ss;
  ss << f.rdbuf();
  return nlohmann::json::parse(ss.str());
}

// `args` ("run", a config, its --set options) in a forked child, for a test that runs more
// than one simulation (SystemC elaborates once per process); the run's results.json.
nlohmann::json run_forked(std::vector<std::string> args, const std::string& tag) {
  const std::string out = "/tmp/fabricsim_optics_out_" + tag + "_" + std::to_string(::getpid());
  args.insert(args.end(), {"--quiet", "--out", out});
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(app_main(args));
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << tag;
  std::ifstream f(out + "/results.json");
  std::stringstream ss;
  ss << f.rdbuf();
  return nlohmann::json::parse(ss.str());
}

// Two chips joined by one circuit: 4 KiB each way is one 4096 B packet of 65 flits of
// 64 B (4160 wire bytes) at 400 Gb/s = 83.2 ns, then fibre 250 ns + mirrors 10 ns + fibre
// 250 ns: 593.2 ns exactly. The switch neither queues nor re-serialises: a store-and-forward
// hop would add another 83.2 ns, a missed fibre 250 ns.
const char* kPair = R"(name: pair
simulation: {aggregate_bytes: 0B}
link_types:
  fibre: {protocol: generic, lanes: 4, lane_rate: 100Gb/s, framing: flit, flit_bytes: 64B,
          overhead_flits: 1, packet_payload: 4KiB, latency: 250ns, rx_buffer: 64KiB,
          energy_per_bit: 10.0}
device_types:
  chip: {type: endpoint, protocol: generic, ports: 1, memory_bandwidth: 1000GB/s}
  ocs: {type: optical_circuit_switch, protocol: generic, ports: 136, pass_latency: 10ns,
        circuits: [0, 1], power_per_port_w: 0.5}
topology:
  type: explicit
  devices: {chip0: chip, chip1: chip, ocs0: ocs}
  links:
    - {a: "chip0.port[0]", b: "ocs0.port[0]", type: fibre}
    - {a: "chip1.port[0]", b: "ocs0.port[1]", type: fibre}
workload: {type: collective_sweep, collective: sendrecv, min_bytes: 4KiB, max_bytes: 4MiB,
           step_factor: 1024, datatype: float}
)";

TEST(Optics, LightCrossesACircuitAtTheClosedFormLatencyWithEndToEndCredits) {
  const nlohmann::json j = run(write("pair", kPair), "pair");
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_NEAR(j["rows"][0]["time_us"].get<double>() * 1e6, 593200.0, 0.5);  // ps
  // 4 MiB: 1024 packets back to back at 400 Gb/s (the 64 KiB receive buffer covers the
  // circuit's credit loop of 2 x 510 ns at 50 GB/s = 51 KB, so credits never stall it):
  // 1024 x 83.2 ns + 510 ns = 85.7068 us.
  EXPECT_NEAR(j["rows"][1]["time_us"].get<double>(), 1024 * 0.0832 + 0.510, 1e-6);
  const nlohmann::json& o = j["stats"]["ocs0"];
  EXPECT_EQ(o["circuits_lit"], 1);
  EXPECT_EQ(o["ports_used"], 2);
  EXPECT_EQ(o["passed_payload_bytes"].get<uint64_t>(), 2u * (4096 + 4 * 1048576));
  EXPECT_EQ(j["stats"]["chip1.port[0]"]["credit_stall_ps"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["checks"]["packets_outstanding"].get<uint64_t>(), 0u);
}

// Energy of a row by hand. Row 0 (4 KiB each way): each chip's transmitter sends one
// packet of 4160 wire bytes over its circuit, counted once at the fibre's 10 pJ/bit (the
// switch passes light: its ports send nothing): 2 x 4160 x 8 x 10 pJ = 665.6 nJ; static:
// 136 ports x 0.5 W = 68 W over the row's 593.2 ns = 40.3376 uJ; the chips (endpoints) draw
// nothing in this model.
TEST(Energy, RowEnergyIsWireBitsTimesPicojoulesPlusStaticPowerTimesTime) {
  const nlohmann::json j = run(write("energy", kPair), "energy");
  const nlohmann::json& e = j["rows"][0]["energy"];
  EXPECT_NEAR(e["links_J"].get<double>(), 2 * 4160 * 8 * 10e-12, 1e-15);
  EXPECT_EQ(e["devices_J"].get<double>(), 0.0);
  EXPECT_NEAR(e["static_J"].get<double>(), 68.0 * 593.2e-9, 1e-12);
  EXPECT_NEAR(e["total_J"].get<double>(), 2 * 4160 * 8 * 10e-12 + 68.0 * 593.2e-9, 1e-12);
}

// Through a switch: gpu0 -> sw -> gpu1 and back. 64 KiB each way = 512 packets of 128 B in
// 5 flits of 32 B (160 wire bytes): 81,920 wire bytes per direction per link. Links at
// 5 pJ/bit: 4 transmitters (2 GPUs, 2 switch ports) x 81,920 x 8 x 5 pJ; the switch's
// 2 pJ/bit on what it sends: 2 x 81,920 x 8 x 2 pJ; its 100 W over the row's time.
TEST(Energy, SwitchedRowCountsEveryHopAndTheSwitchsBitsAndStaticPower) {
  const std::string cfg = write("energy_sw", R"(name: energy_sw
simulation: {aggregate_bytes: 0B}
link_types:
  nv: {protocol: nvlink, lanes: 2, lane_rate: 100Gb/s, framing: flit, flit_bytes: 32B,
       overhead_flits: 1, packet_payload: 128B, latency: 20ns, rx_buffer: 16KiB, energy_per_bit: 5.0}
device_types:
  gpu: {type: endpoint, protocol: nvlink, ports: 1, memory_bandwidth: 2000GB/s}
  sw: {type: switch, protocol: nvlink, ports: 4, pipeline_latency: 100ns, egress_buffer: 8KiB,
       static_power: 100.0, energy_per_bit: 2.0}
topology:
  type: explicit
  devices: {gpu0: gpu, gpu1: gpu, sw0: sw}
  links:
    - {a: "gpu0.port[0]", b: "sw0.port[0]", type: nv}
    - {a: "gpu1.port[0]", b: "sw0.port[1]", type: nv}
workload: {type: collective_sweep, collective: sendrecv, min_bytes: 64KiB, max_bytes: 64KiB,
           datatype: float}
)");
  const nlohmann::json j = run(cfg, "energy_sw");
  const double t = j["rows"][0]["time_us"].get<double>() * 1e-6;
  const double wire_bits = 512.0 * 160 * 8;
  const nlohmann::json& e = j["rows"][0]["energy"];
  EXPECT_NEAR(e["links_J"].get<double>(), 4 * wire_bits * 5e-12, 1e-15);
  EXPECT_NEAR(e["devices_J"].get<double>(), 2 * wire_bits * 2e-12, 1e-15);
  EXPECT_NEAR(e["static_J"].get<double>(), 100.0 * t, 1e-12);
  EXPECT_NEAR(e["total_J"].get<double>(), 4 * wire_bits * 5e-12 + 2 * wire_bits * 2e-12 + 100.0 * t,
              1e-12);
  // The wire bytes behind it, from the ports themselves.
  EXPECT_EQ(j["stats"]["sw0.port[1]"]["tx_wire_bytes"].get<uint64_t>(), 81920u);
}

}  // namespace
}  // namespace fabricsim

namespace fabricsim {
namespace {

// The torus all-reduce on a ring of 4 chips whose wrap-around link is a circuit
// (tpu_pod, cube [4, 1, 1]): the halves ride + and - rings at once, so each direction of
// each link carries 2 (k-1)/k x S/2 = 0.75 S. 64 MiB at 50 GB/s x 512/544 (flit framing) =
// 47.06 GB/s: 1069.5 us. Within 1%: pipeline fill (3 steps of a 512 KiB piece) and hop
// latencies are below 0.5%; a ring in one direction takes twice as long (2139.5 us).
TEST(TorusAllReduce, BidirectionalRingThroughACircuitWithinOnePercentOfTheClosedForm) {
  const std::string cfg = write("torus1d", R"(name: torus1d
simulation: {aggregate_bytes: 16KiB, aggregate_min_message: 512KiB}
link_types:
  ici: {protocol: generic, lanes: 4, lane_rate: 100Gb/s, framing: flit, flit_bytes: 32B,
        overhead_flits: 1, packet_payload: 512B, latency: 20ns, rx_buffer: 64KiB}
  opt: {protocol: generic, lanes: 4, lane_rate: 100Gb/s, framing: flit, flit_bytes: 32B,
        overhead_flits: 1, packet_payload: 512B, latency: 125ns, rx_buffer: 64KiB}
  local: {protocol: generic, lanes: 8, lane_rate: 100Gb/s, framing: flit, flit_bytes: 32B,
          overhead_flits: 1, packet_payload: 512B, latency: 5ns, rx_buffer: 64KiB}
device_types:
  tpu: {type: endpoint, protocol: generic, ports: 6, memory_bandwidth: 1200GB/s}
  r: {type: switch, protocol: generic, ports: 12, pipeline_latency: 50ns, egress_buffer: 64KiB}
  o: {type: optical_circuit_switch, protocol: generic, ports: 8}
topology: {type: tpu_pod, cube: [4, 1, 1], cubes: 1, slice: [1, 1, 1], chip_type: tpu,
           router_type: r, ocs_type: o, local_links: 6, electrical_link_type: ici,
           optical_link_type: opt, local_link_type: local}
workload: {type: allreduce_sweep, algorithm: torus, min_bytes: 64MiB, max_bytes: 64MiB,
           datatype: float}
)");
  const nlohmann::json j = run(cfg, "torus1d");
  const double closed_us = 0.75 * 67108864.0 / (50e9 * 512.0 / 544.0) * 1e6;
  const double t = j["rows"][0]["time_us"].get<double>();
  EXPECT_NEAR(t / closed_us, 1.0, 0.01) << t << " us vs " << closed_us;
  EXPECT_EQ(j["stats"]["r0_0_0_0.port[0]"]["tx_payload_bytes"].get<uint64_t>(), 50331648u);
  EXPECT_EQ(j["stats"]["r0_0_0_0.port[1]"]["tx_payload_bytes"].get<uint64_t>(), 50331648u);
}

// Acceptance 4, the torus all-reduce on the shipped slice (configs/tpu_v4_slice.yaml) at
// 64 MiB: 4x4x4 (one cube, slice [1, 1, 1]) and 4x4x8 (two cubes, the config as
// shipped), against the phase-by-phase closed form: per dimension d of size k_d, each
// direction of its links carries 2 (k_d - 1)/k_d x D_d / 2 with D_x = S, D_y = S / n_x,
// D_z = S / (n_x n_y), stages one after the other (docs/optical.md, "Torus
// collectives"). B = 50 GB/s x 512/544 (flit framing) per direction. Within 2%: the
// hop latencies (20-260 ns per step) and each stage's pipeline fill (one 16 KiB
// transaction per hop) are below 1%; without the stage order (the dimensions'
// pieces mixed in the chip's DMA queue) it was 19% and 15% above.
double torus_stage_sum_us(std::vector<int> dims, double bytes) {
  const double b = 50e9 * 512.0 / 544.0;
  double t = 0, share = bytes;
  for (int k : dims) {
    t += 2.0 * (k - 1) / k * share / 2.0 / b;
    share /= k;
  }
  return t * 1e6;
}

nlohmann::json run_slice(std::vector<std::string> args, const std::string& name) {
  const std::string out = "/tmp/fabricsim_optics_out_" + name + "_" + std::to_string(::getpid());
  args.insert(args.begin(), {"run", std::string(FABRICSIM_SOURCE_DIR) + "/configs/tpu_v4_slice.yaml"});
  args.insert(args.end(), {"--set", "workload.min_bytes=64MiB", "--quiet", "--out", out});
  EXPECT_EQ(app_main(args), 0);
  std::ifstream f(out + "/results.json");
  std::stringstream ss;
  ss << f.rdbuf();
  return nlohmann::json::parse(ss.str());
}

void expect_torus_stage_sum(const nlohmann::json& j, std::vector<int> dims) {
  ASSERT_EQ(j["rows"].size(), 1u);
  const double closed = torus_stage_sum_us(dims, 67108864.0);
  const double t = j["rows"][0]["time_us"].get<double>();
  EXPECT_NEAR(t / closed, 1.0, 0.02) << t << " us vs " << closed << " us";
  EXPECT_GE(t, closed) << "faster than the links allow";
  // Every byte the closed form counts, on the wire: chip (0,0,0)'s router sends
  // 2 (k_d - 1)/k_d x D_d / 2 on each of its six ports.
  double share = 67108864.0;
  for (size_t d = 0; d < dims.size(); ++d) {
    const double per_dir = 2.0 * (dims[d] - 1) / dims[d] * share / 2.0;
    share /= dims[d];
    for (int s = 0; s < 2; ++s) {
      const std::string port = "r0_0_0_0.port[" + std::to_string(2 * d + size_t(s)) + "]";
      EXPECT_EQ(j["stats"][port]["tx_payload_bytes"].get<double>(), per_dir) << port;
    }
  }
}

TEST(TorusAllReduce, On4x4x4WithinTwoPercentOfThePhaseByPhaseClosedForm) {
  expect_torus_stage_sum(run_slice({"--set", "topology.slice=[1,1,1]"}, "torus444"), {4, 4, 4});
}

TEST(TorusAllReduce, On4x4x8WithinTwoPercentOfThePhaseByPhaseClosedForm) {
  expect_torus_stage_sum(run_slice({}, "torus448"), {4, 4, 8});
}

// ---- Reconfiguration (configs/ocs_reconfigure.yaml): two switches joined by circuits 0-2
// and 1-3 exchange 32 MiB each way; at 100 us the map becomes [0, 2, 1, 4].

nlohmann::json run_args(std::vector<std::string> args, const std::string& name) {
  const std::string out = "/tmp/fabricsim_optics_out_" + name + "_" + std::to_string(::getpid());
  args.insert(args.begin(), {"run", std::string(FABRICSIM_SOURCE_DIR) + "/configs/ocs_reconfigure.yaml"});
  args.insert(args.end(), {"--quiet", "--out", out});
  EXPECT_EQ(app_main(args), 0);
  std::ifstream f(out + "/results.json");
  std::stringstream ss;
  ss << f.rdbuf();
  return nlohmann::json::parse(ss.str());
}

// Payload per direction of one circuit: 400 Gb/s x 4096/4160 (64 B flits, one overhead flit).
constexpr double kCircuitBps = 50e9 * 4096.0 / 4160.0;
constexpr double kBytes = 33554432.0;

void expect_nothing_lost(const nlohmann::json& j) {
  const nlohmann::json& c = j["checks"];
  EXPECT_EQ(c["packets_outstanding"].get<uint64_t>(), 0u);
  EXPECT_EQ(c["payload_bytes_lost"].get<uint64_t>(), 0u);
  EXPECT_EQ(c["payload_bytes_sent"].get<uint64_t>(), c["payload_bytes_delivered"].get<uint64_t>());
  EXPECT_EQ(c["payload_bytes_delivered"].get<uint64_t>(), 2 * 33554432u);
  const nlohmann::json& f = j["faults"];
  EXPECT_EQ(f["cut_transactions"].get<uint64_t>(), 0u);
  EXPECT_EQ(f["lost_transactions"].get<uint64_t>(), 0u);
}

// Acceptance: a changed circuit is dark for exactly reconfiguration_time (to the
// picosecond, at the 100 us, us and ns scales: one run per test, SystemC elaborates once
// per process), the transmitters on it are stopped for the drain plus exactly that,
// nothing in flight is lost (every credit back: the end-of-run checks, exit 0), and the
// unchanged circuit carries the traffic at its full rate throughout.
void check_reconfiguration(uint64_t dark_ps) {
  {
    const std::string tag = "reconf_" + std::to_string(dark_ps);
    const nlohmann::json j = run_args(
        {"--set", "device_types.ocs.reconfiguration_time=" + std::to_string(dark_ps) + "ps"}, tag);
    SCOPED_TRACE(tag);
    expect_nothing_lost(j);
    const nlohmann::json& e = j["faults"]["events"][0];
    EXPECT_EQ(e["at_ps"].get<uint64_t>(), 100'000'000u);
    EXPECT_EQ(e["changed_ports"].get<int>(), 3);  // 1, 3 (now dark) and 4
    const uint64_t from = e["dark_from_ps"].get<uint64_t>(), until = e["dark_until_ps"].get<uint64_t>();
    EXPECT_EQ(until - from, dark_ps);
    // The drain: the rest of the transaction being serialised (at most one 4160 B packet,
    // 83.2 ns) and the 250 ns fibre to the mirrors.
    EXPECT_EQ(e["drain_ps"].get<uint64_t>(), from - 100'000'000u);
    EXPECT_GE(e["drain_ps"].get<uint64_t>(), 250'000u);
    EXPECT_LE(e["drain_ps"].get<uint64_t>(), 250'000u + 83'200u);
    // The transmitters into the changed circuits: stopped from `at` to the new map.
    for (const char* port : {"sw0.port[3]", "sw1.port[3]", "sw1.port[4]"})
      EXPECT_EQ(j["stats"][port]["down_ps"].get<uint64_t>(), until - 100'000'000u) << port;
    for (const char* port : {"sw0.port[2]", "sw1.port[2]"})
      EXPECT_EQ(j["stats"][port]["down_ps"].get<uint64_t>(), 0u) << port;
    // The unchanged circuit 0-2 ran at its full rate both ways from `at` to the new map
    // (light is counted as a packet starts into the switch: within two 4 KiB packets per
    // direction at either end of the window).
    const double expect = 2 * kCircuitBps * double(until - 100'000'000u) * 1e-12;
    EXPECT_NEAR(e["unchanged_circuits_passed_payload_bytes"].get<double>(), expect, 4 * 4096.0);
    // After it the routes follow the new map: sw1 sends over 1-4, and nothing more over
    // port 3 (dark): sw1's fibres carry everything chip1 sent.
    const uint64_t p2 = j["stats"]["sw1.port[2]"]["tx_payload_bytes"].get<uint64_t>();
    const uint64_t p3 = j["stats"]["sw1.port[3]"]["tx_payload_bytes"].get<uint64_t>();
    const uint64_t p4 = j["stats"]["sw1.port[4]"]["tx_payload_bytes"].get<uint64_t>();
    EXPECT_GT(p4, 0u);
    EXPECT_EQ(p2 + p3 + p4, 33554432u);
    EXPECT_LE(double(p3), kCircuitBps * 100e-6 * 1.01);  // only before `at`
    EXPECT_EQ(j["stats"]["ocs0"]["reconfigurations"].get<int>(), 1);
    // The time: both circuits until `at`, one until the new map, both again after.
    const double at = 100e-6, lit = double(until) * 1e-12, b2 = 2 * kCircuitBps;
    const double closed =
        (lit + (kBytes - b2 * at - kCircuitBps * (lit - at)) / b2) * 1e6;
    EXPECT_NEAR(j["rows"][0]["time_us"].get<double>() / closed, 1.0, 0.005) << closed;
  }
}

TEST(OcsReconfigure, ChangedCircuitsDarkForExactly100us) { check_reconfiguration(100'000'000); }
TEST(OcsReconfigure, ChangedCircuitsDarkForExactly1us) { check_reconfiguration(1'000'000); }
TEST(OcsReconfigure, ChangedCircuitsDarkForExactly20ns) { check_reconfiguration(20'000); }
TEST(OcsReconfigure, ChangedCircuitsDarkForZero) { check_reconfiguration(0); }

// Every circuit changes ([0, 4, 1, 2]): no path between the switches while the mirrors move,
// the traffic in flight drains and the rest waits, then goes over the new circuits.
TEST(OcsReconfigure, WhenEveryCircuitChangesTrafficWaitsAndFollowsTheNewMap) {
  const nlohmann::json j = run_args(
      {"--set", "faults.events[0].circuits=[0, 4, 1, 2]"}, "reconf_all");
  expect_nothing_lost(j);
  const nlohmann::json& e = j["faults"]["events"][0];
  EXPECT_EQ(e["changed_ports"].get<int>(), 5);
  EXPECT_EQ(e["unchanged_circuits_passed_payload_bytes"].get<uint64_t>(), 0u);
  const uint64_t until = e["dark_until_ps"].get<uint64_t>();
  EXPECT_EQ(until - e["dark_from_ps"].get<uint64_t>(), 100'000'000u);
  const double at = 100e-6, lit = double(until) * 1e-12, b2 = 2 * kCircuitBps;
  const double closed = (lit + (kBytes - b2 * at) / b2) * 1e6;
  EXPECT_NEAR(j["rows"][0]["time_us"].get<double>() / closed, 1.0, 0.005) << closed;
  // sw0 now reaches sw1 over 0-4 and 1-2.
  EXPECT_GT(j["stats"]["sw1.port[4]"]["rx_payload_bytes"].get<uint64_t>(), 0u);
  EXPECT_GT(j["stats"]["sw1.port[2]"]["rx_payload_bytes"].get<uint64_t>(), 0u);
}

// The immediate-switch option against drain-then-switch (the tests above): the same
// reconfiguration on links with link-level replay (nvlink). The mirrors move at `at`, not
// after the drain: the changed circuits are dark from exactly 100 us (drain mode: 100.27
// us, the fibre plus the packet being serialised) for exactly 100 us. What the two
// stopped senders had put into their circuits and had not passed the mirrors is cut: per
// direction the packet being serialised plus those whose tails left in the last 250 ns
// (fibre to the mirrors), 250 / 83.2 ns -> 3 or 4 packets; 4 KiB each. Each is taken from
// the far receiver's arrivals, its credits go back, the replay hands it back to its
// switch, which sends it over the unchanged circuit: nothing is lost, every byte is
// delivered exactly once, every credit is back (the end-of-run checks, exit 0). The
// resend costs time: the sendrecv takes longer than with drain-then-switch (391.87 us)
// although its circuits are lit 0.27 us sooner.
TEST(OcsReconfigure, ImmediateSwitchCutsWhatHadNotPassedTheMirrorsAndLosesNothing) {
  std::vector<std::string> args = {"--set", "device_types.ocs.reconfiguration_mode=immediate"};
  for (const char* k : {"link_types.fibre", "link_types.local", "device_types.chip",
                        "device_types.router", "device_types.ocs"})
    args.insert(args.end(), {"--set", std::string(k) + ".protocol=nvlink"});
  const nlohmann::json j = run_args(args, "reconf_immediate");
  const nlohmann::json& c = j["checks"];
  EXPECT_EQ(c["packets_outstanding"].get<uint64_t>(), 0u);
  EXPECT_EQ(c["payload_bytes_lost"].get<uint64_t>(), 0u);
  EXPECT_EQ(c["payload_bytes_sent"].get<uint64_t>(), 2 * 33554432u);
  EXPECT_EQ(c["payload_bytes_delivered"].get<uint64_t>(), 2 * 33554432u);
  const nlohmann::json& e = j["faults"]["events"][0];
  EXPECT_EQ(e["drain_ps"].get<uint64_t>(), 0u);
  EXPECT_EQ(e["dark_from_ps"].get<uint64_t>(), 100'000'000u);
  EXPECT_EQ(e["dark_until_ps"].get<uint64_t>(), 200'000'000u);
  const uint64_t cut = e["cut_transactions"].get<uint64_t>();
  EXPECT_GE(cut, 2 * 3u);
  EXPECT_LE(cut, 2 * 4u);
  EXPECT_EQ(e["cut_payload_bytes"].get<uint64_t>(), cut * 4096);
  EXPECT_EQ(e["rerouted_after_detection"].get<uint64_t>(), cut);  // sent again, other route
  EXPECT_EQ(e["lost_transactions"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["faults"]["cut_transactions"].get<uint64_t>(), cut);
  const double t = j["rows"][0]["time_us"].get<double>();
  EXPECT_GT(t, 391.87);
  // The closed form of the drain test with the new map lit at 200 us, plus the cut bytes
  // sent again over one circuit: within 0.5%.
  const double at = 100e-6, lit = 200e-6, b2 = 2 * kCircuitBps;
  const double closed = (lit + (kBytes - b2 * at - kCircuitBps * (lit - at)) / b2) * 1e6 +
                        double(cut) * 4096 / kCircuitBps * 1e6 / 2;
  EXPECT_NEAR(t / closed, 1.0, 0.005) << closed;
}

// With generic links (no link-level replay, no end-to-end retransmission) what an
// immediate switch cuts is lost for good: the run stops with exit 2 and says so.
TEST(OcsReconfigure, ImmediateSwitchOnGenericLinksLosesTheCutForGoodAndSaysSo) {
  testing::internal::CaptureStderr();
  const int rc = app_main({"run", std::string(FABRICSIM_SOURCE_DIR) + "/configs/ocs_reconfigure.yaml",
                           "--set", "device_types.ocs.reconfiguration_mode=immediate", "--quiet"});
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 2);
  EXPECT_NE(err.find("were lost for good"), std::string::npos) << err;
  EXPECT_NE(err.find("link to ocs0.port[1] down"), std::string::npos) << err;
}

// Acceptance 4, the watchdog option: the torus's routers route shortest paths with no
// dimension order, datelines or virtual channels, so an all-to-all on 4x4x4 closes credit
// cycles round the rings and deadlocks; the run stops with exit 3 naming the ports waiting
// for credits and the torus routing as the cause.
TEST(TorusRouting, AllToAllWithoutDatelinesDeadlocksAndTheWatchdogSaysWhy) {
  testing::internal::CaptureStderr();
  const int rc = app_main({"run", std::string(FABRICSIM_SOURCE_DIR) + "/configs/tpu_v4_slice.yaml",
                           "--set", "topology.slice=[1,1,1]", "--set", "workload.type=collective_sweep",
                           "--set", "workload.collective=alltoall", "--set", "workload.algorithm=direct",
                           "--set", "workload.min_bytes=4MiB", "--set", "workload.max_bytes=4MiB",
                           "--quiet"});
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 3) << err;
  EXPECT_NE(err.find("(deadlock)"), std::string::npos) << err;
  EXPECT_NE(err.find("waiting for credits: r0_"), std::string::npos) << err;
  EXPECT_NE(err.find("the ranks form a torus whose routes"), std::string::npos) << err;
}

// Acceptance 4, the deadlock-free side: the same all-to-all with the routers set to
// torus_routing: dimension_order (x, then y, then z; bubble flow control on each ring)
// finishes. 4 MiB per rank, 64 KiB to each of the 64 ranks. Per ring of 4 a rank sends
// 16 destinations each at distance 1 (+), 2 (the tie: +) and 1 (-): 3 x 16 x 64 KiB = 3 MiB
// over + links per rank and dimension, the same on every + link: 3 MiB / 47.06 GB/s =
// 66.8 us is the bound no schedule beats on these routes. Measured 135.9 us (2.03x): the
// direct all-to-all's DMA serves its 63 messages oldest first in order of rank distance
// (r + 1, r + 2, ...), so at any time every rank sends at the same offset, which in torus
// order (x fastest) is mostly one direction of one dimension while the other links idle.
// Within 2.5x of the bound; a deadlock never finishes (the test above).
TEST(TorusRouting, DimensionOrderWithBubbleFlowControlFinishesTheAllToAll) {
  const std::string out = "/tmp/fabricsim_optics_out_dor_" + std::to_string(::getpid());
  const int rc = app_main({"run", std::string(FABRICSIM_SOURCE_DIR) + "/configs/tpu_v4_slice.yaml",
                           "--set", "topology.slice=[1,1,1]",
                           "--set", "device_types.ici_router.torus_routing=dimension_order",
                           "--set", "workload.type=collective_sweep",
                           "--set", "workload.collective=alltoall", "--set", "workload.algorithm=direct",
                           "--set", "workload.min_bytes=4MiB", "--set", "workload.max_bytes=4MiB",
                           "--quiet", "--out", out});
  ASSERT_EQ(rc, 0);
  std::ifstream f(out + "/results.json");
  std::stringstream ss;
  ss << f.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(ss.str());
  const double bound_us = 3.0 * 1048576.0 / (50e9 * 512.0 / 544.0) * 1e6;
  const double t = j["rows"][0]["time_us"].get<double>();
  EXPECT_GE(t, bound_us);
  EXPECT_LE(t, 2.5 * bound_us) << t << " us vs the link bound " << bound_us << " us";
  // Dimension order: the + x port of chip (0,0,0)'s router carries its own traffic to
  // x = 1 and x = 2 and what passes through from x = 3 to x = 1 (16 destinations each,
  // 64 KiB): 3 x 16 x 64 KiB; its - x port only its own to x = 3.
  EXPECT_EQ(j["stats"]["r0_0_0_0.port[0]"]["tx_payload_bytes"].get<uint64_t>(), 3u * 16 * 65536);
  EXPECT_EQ(j["stats"]["r0_0_0_0.port[1]"]["tx_payload_bytes"].get<uint64_t>(), 16u * 65536);
  EXPECT_EQ(j["checks"]["payload_bytes_delivered"].get<uint64_t>(), 64u * 63 * 65536);
  EXPECT_EQ(j["stats"]["r0_0_0_0"]["torus_routing"]["routing"].get<std::string>(), "dimension_order");
}


// Twisted tori (topology.twisted: true): on 4x4x8 the wraparounds of x and y land 4 further
// on in z. The same all-to-all (direct, 4 MiB per rank: 32 KiB to each of 127 ranks,
// aggregated in 16 KiB transactions) with dimension-order routing on the regular and on the
// twisted slice. Both finish (the rings of the twisted torus are the x and y rings of 8,
// each two short rings joined by the twist, and the z rings of 8: bubble flow control holds
// on each, and no route returns to a lower dimension; docs/optical.md, "Twisted tori") and
// deliver every byte. The routes are minimal dimension-order ones on each graph: chip
// (0,0,0)'s router sends, per port +x -x +y -y +z -z, the messages an independent count of
// those routes gives (regular 96 32 96 32 160 96, twisted 108 44 88 56 72 72; the +z links
// of the regular torus carry 160, the twisted torus's busiest 108). So the link-load bound
// predicts 160/108 = 1.48x, and the bisection (32 links across the z cut regular, 64 across
// the worst cut twisted) at most 2x; measured 1.70x here (1.83x per packet, docs/optical.md,
// "Twisted tori"). Asserted: between 1.3x and 2x.
// The slice's direct all-to-all of 4 MiB per chip under dimension-order routing, regular or
// twisted, with `aggregation` (a simulation.* setting) and any further --set options.
std::vector<std::string> slice_alltoall_args(bool twisted, const std::string& aggregation) {
  return {"run", std::string(FABRICSIM_SOURCE_DIR) + "/configs/tpu_v4_slice.yaml",
          "--set", std::string("topology.twisted=") + (twisted ? "true" : "false"),
          "--set", "device_types.ici_router.torus_routing=dimension_order",
          "--set", "workload.type=collective_sweep",
          "--set", "workload.collective=alltoall", "--set", "workload.algorithm=direct",
          "--set", "workload.min_bytes=4MiB", "--set", "workload.max_bytes=4MiB",
          "--set", aggregation};
}

TEST(TwistedTorus, DimensionOrderAllToAllIsDeadlockFreeAndFasterThanOnTheRegularTorus) {
  auto run = [](bool twisted) {
    return run_forked(slice_alltoall_args(twisted, "simulation.aggregate_min_message=16KiB"),
                      "twisted_" + std::to_string(twisted));
  };
  const nlohmann::json reg = run(false), tw = run(true);
  const uint64_t msg = 32768;
  const std::vector<uint64_t> reg_ports{96, 32, 96, 32, 160, 96}, tw_ports{108, 44, 88, 56, 72, 72};
  for (int p = 0; p < 6; ++p) {
    const std::string port = "r0_0_0_0.port[" + std::to_string(p) + "]";
    EXPECT_EQ(reg["stats"][port]["tx_payload_bytes"].get<uint64_t>(), reg_ports[size_t(p)] * msg) << port;
    EXPECT_EQ(tw["stats"][port]["tx_payload_bytes"].get<uint64_t>(), tw_ports[size_t(p)] * msg) << port;
  }
  for (const nlohmann::json* j : {&reg, &tw}) {
    EXPECT_EQ((*j)["checks"]["payload_bytes_delivered"].get<uint64_t>(), 128u * 127 * msg);
    EXPECT_EQ((*j)["checks"]["payload_bytes_sent"].get<uint64_t>(), 128u * 127 * msg);
    EXPECT_EQ((*j)["checks"]["packets_outstanding"].get<uint64_t>(), 0u);
  }
  const double b = 50e9 * 512.0 / 544.0;  // payload bytes/s per direction of a link
  const double t_reg = reg["rows"][0]["time_us"].get<double>(), t_tw = tw["rows"][0]["time_us"].get<double>();
  EXPECT_GE(t_reg, 160.0 * msg / b * 1e6);
  EXPECT_GE(t_tw, 108.0 * msg / b * 1e6);
  EXPECT_GE(t_reg / t_tw, 1.3) << t_reg << " us regular, " << t_tw << " us twisted";
  EXPECT_LE(t_reg / t_tw, 2.0) << t_reg << " us regular, " << t_tw << " us twisted";
}

// The twisted torus's aggregated all-to-all against per packet (docs/optical.md, "Twisted
// tori"). In 16 KiB transactions it is slow by a bias: +6.4% on the mean of five ICI
// latencies, +6.4% on the mean of the two used here (18 and 22 ns). The routers' crossbar
// at speedup 1, which matches whole transactions where per packet it matches again after
// every packet, makes it: at speedup 2 the same two latencies agree at -0.67% on their
// mean (single points there: -1.0% to +3.8%, so a mean of two and a 2% bound). The
// routers' 100 GB/s links toward their chips are also held by transactions that cut
// through from the 50 GB/s ICI links (busy 1.7-1.9x as long as per packet for the same
// bytes), at either speedup: so that is not what makes the time's bias. If the transaction
// level learns to match at packet boundaries, the first assertion fails: then the docs'
// figures and this test move together.
TEST(TwistedTorus, AggregatedAllToAllIsSlowOnlyThroughTheSpeedupOneCrossbar) {
  auto run = [](bool per_packet, bool speedup2, int latency_ns) {
    std::vector<std::string> args = slice_alltoall_args(
        true, per_packet ? "simulation.aggregate_bytes=0B" : "simulation.aggregate_min_message=16KiB");
    args.insert(args.end(), {"--set", "link_types.ici.latency=" + std::to_string(latency_ns) + "ns"});
    if (speedup2) args.insert(args.end(), {"--set", "device_types.ici_router.speedup=2"});
    const nlohmann::json j = run_forked(args, std::string("twagg_") + (per_packet ? "pp" : "agg") +
                                                  (speedup2 ? "_s2_" : "_s1_") + std::to_string(latency_ns));
    EXPECT_EQ(j["checks"]["payload_bytes_delivered"].get<uint64_t>(), 128u * 127 * 32768);
    EXPECT_EQ(j["checks"]["packets_outstanding"].get<uint64_t>(), 0u);
    return j;
  };
  // Mean busy time of the routers' ports toward their chips (the `local` links' router
  // ends: ports 6-11 of each router).
  auto local_busy_us = [](const nlohmann::json& j) {
    double sum = 0;
    int n = 0;
    for (auto it = j["stats"].begin(); it != j["stats"].end(); ++it) {
      const std::string& name = it.key();
      if (name.rfind("r", 0) != 0) continue;
      const size_t b = name.find(".port[");
      if (b == std::string::npos) continue;
      if (std::stoi(name.substr(b + 6)) < 6) continue;
      sum += (*it)["busy_ps"].get<double>() / 1e6;
      ++n;
    }
    EXPECT_EQ(n, 128 * 6);
    return n ? sum / n : 0.0;
  };
  auto time_us = [](const nlohmann::json& j) { return j["rows"][0]["time_us"].get<double>(); };
  for (const bool speedup2 : {false, true}) {
    double agg = 0, pp = 0;
    for (const int latency_ns : {18, 22}) {
      const nlohmann::json a = run(false, speedup2, latency_ns), p = run(true, speedup2, latency_ns);
      agg += time_us(a);
      pp += time_us(p);
      EXPECT_GT(local_busy_us(a) / local_busy_us(p), 1.5) << "speedup2 " << speedup2 << ", " << latency_ns << " ns";
    }
    if (speedup2)
      EXPECT_NEAR(agg / pp, 1.0, 0.02) << agg / 2 << " us aggregated, " << pp / 2 << " us per packet";
    else
      EXPECT_GT(agg / pp, 1.04) << agg / 2 << " us aggregated, " << pp / 2 << " us per packet";
  }
}

// Failure bypass (configs/tpu_v4_failover.yaml): a slice of 2 cubes (4x4x8) in a pod of 3;
// cube 1 fails 20 us into a 1 MiB torus all-reduce (functional: every element checked at
// the end). The job stops, the failure is detected 30 us later, all 48 switches take maps
// that put spare cube 2 in cube 1's place, their changed circuits are dark for 100 us, and
// 10 us after they are lit the all-reduce runs again from its inputs on the spare's chips.
// The downtime is exactly 30 + 100 + 10 us (the fabric is quiet by detection: no drain
// wait, no mirror drain), the maps are the expected ones, nothing is lost unaccounted.
TEST(FailureBypass, SpareCubeReplacesTheFailedOneAndTheAllReduceCompletesCorrectly) {
  const std::string out = "/tmp/fabricsim_optics_out_bypass_" + std::to_string(::getpid());
  ASSERT_EQ(app_main({"run", std::string(FABRICSIM_SOURCE_DIR) + "/configs/tpu_v4_failover.yaml",
                      "--set", "simulation.functional=true", "--set", "workload.min_bytes=1MiB",
                      "--set", "workload.max_bytes=1MiB", "--quiet", "--out", out}),
            0);  // exit 0: the functional check passed (exit 3 otherwise)
  std::ifstream f(out + "/results.json");
  std::stringstream ss;
  ss << f.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(ss.str());
  const nlohmann::json& c = j["checks"];
  EXPECT_TRUE(c["functional"].get<bool>());
  EXPECT_EQ(c["packets_outstanding"].get<uint64_t>(), 0u);
  EXPECT_EQ(c["payload_bytes_lost"].get<uint64_t>(), 0u);
  EXPECT_EQ(c["payload_bytes_sent"].get<uint64_t>(), c["payload_bytes_delivered"].get<uint64_t>());
  const nlohmann::json& e = j["faults"]["events"][0];
  EXPECT_EQ(e["at_ps"].get<uint64_t>(), 20'000'000u);
  const nlohmann::json& b = e["bypass"];
  EXPECT_EQ(b["failed_cube"].get<int>(), 1);
  EXPECT_EQ(b["spare_cube"].get<int>(), 2);
  EXPECT_TRUE(b["halted_a_collective"].get<bool>());
  EXPECT_EQ(b["detected_ps"].get<uint64_t>(), 50'000'000u);
  EXPECT_EQ(b["drain_wait_ps"].get<uint64_t>(), 0u);
  EXPECT_EQ(b["dark_from_ps"].get<uint64_t>(), 50'000'000u);   // nothing left to drain
  EXPECT_EQ(b["dark_until_ps"].get<uint64_t>(), 150'000'000u);
  EXPECT_EQ(b["resumed_ps"].get<uint64_t>(), 160'000'000u);
  EXPECT_EQ(b["downtime_ps"].get<uint64_t>(), 140'000'000u);    // 30 + 100 + 10 us, exactly
  // The job had queued data (abandoned) and data on the wire (drained, discarded).
  EXPECT_GT(b["abandoned_payload_bytes"].get<uint64_t>(), 0u);
  EXPECT_GT(b["drained_payload_bytes"].get<uint64_t>(), 0u);
  // The new maps: z switches join cube 0 and cube 2 both ways round (0+ <-> 2-, 2+ <->
  // 0-), x and y switches loop cube 2's faces to each other (a cube one long in x and y);
  // cube 1's ports are dark. Changed ports: x, y: 2, 3 (dark) and 4, 5 (lit); z: also 0 and
  // 1 (new partners): 16 x 4 + 16 x 4 + 16 x 6.
  EXPECT_EQ(b["switches_reconfigured"].get<int>(), 48);
  EXPECT_EQ(b["changed_ports"].get<int>(), 16 * 4 + 16 * 4 + 16 * 6);
  const nlohmann::json& maps = b["new_circuits"];
  ASSERT_EQ(maps.size(), 48u);
  for (const auto& [name, pairs] : maps.items()) {
    const nlohmann::json want = name[4] == 'z' ? nlohmann::json::parse("[[0, 5], [1, 4]]")
                                               : nlohmann::json::parse("[[0, 1], [4, 5]]");
    EXPECT_EQ(pairs, want) << name;
  }
  EXPECT_EQ(b["moved_endpoints"].size(), 64u);
  // The spare's chips carried the rerun; the failed cube's chips sent nothing after the
  // failure (less than cube 0's chips, which sent before and after).
  const uint64_t spare = j["stats"]["t2_2_1_3"]["bytes_sent"].get<uint64_t>();
  const uint64_t failed = j["stats"]["t1_2_1_3"]["bytes_sent"].get<uint64_t>();
  const uint64_t kept = j["stats"]["t0_2_1_3"]["bytes_sent"].get<uint64_t>();
  EXPECT_GT(spare, 0u);
  EXPECT_EQ(kept, spare + failed);  // the same rank's share: before (failed) + after (spare)
  // After the restart the all-reduce runs as it does without the failure: 30.357 us (the
  // same command with --set faults=null prints 30.36; the spare's chips are in the same
  // places of an identical cube), within 0.1%.
  const double rerun_us = j["rows"][0]["time_us"].get<double>() - 160.0;
  EXPECT_NEAR(rerun_us / 30.35672, 1.0, 0.001) << rerun_us;
  // What was in flight: the DMAs' queued bytes abandoned, the rest drained and discarded;
  // every byte sent was delivered (above) and the rerun's bytes are the whole all-reduce.
  EXPECT_EQ(b["abandoned_payload_bytes"].get<uint64_t>() > 0, true);
}

// Reconfiguration at workload phase boundaries (configs/ocs_phases.yaml): phase A (a ring
// all-reduce of 4 MiB) on circuit map `ring`, phase B (an alltoall of 4 MiB) on map `cross`;
// every circuit but none of the data changes at a boundary. SystemC elaborates once per
// process, so each run is a forked child of the test.
nlohmann::json run_phases(const std::vector<std::string>& sets, const std::string& tag) {
  std::vector<std::string> args{"run", std::string(FABRICSIM_SOURCE_DIR) + "/configs/ocs_phases.yaml"};
  for (const std::string& x : sets) args.insert(args.end(), {"--set", x});
  return run_forked(args, "phases_" + tag);
}

uint64_t row_ps(const nlohmann::json& j, const char* phase, const char* key) {
  for (const nlohmann::json& r : j["rows"])
    if (r["phase"] == phase) return r[key].get<uint64_t>();
  ADD_FAILURE() << "no row " << phase;
  return 0;
}

// Per step both ranks send 4 MiB for the all-reduce (2 x (n-1)/n x S each) and 2 MiB for
// the alltoall ((n-1)/n x S each): 12 MiB.
void expect_phases_delivered(const nlohmann::json& j, int steps) {
  const nlohmann::json& c = j["checks"];
  EXPECT_EQ(c["packets_outstanding"].get<uint64_t>(), 0u);
  EXPECT_EQ(c["payload_bytes_lost"].get<uint64_t>(), 0u);
  EXPECT_EQ(c["payload_bytes_sent"].get<uint64_t>(), uint64_t(steps) * 12u * 1048576u);
  EXPECT_EQ(c["payload_bytes_delivered"].get<uint64_t>(), uint64_t(steps) * 12u * 1048576u);
  EXPECT_EQ(j["faults"]["lost_transactions"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["faults"]["cut_transactions"].get<uint64_t>(), 0u);
}

// Acceptance: a two-phase run takes phase A + the reconfiguration time + phase B, to the
// picosecond, where A and B are each measured on their own circuits without any
// reconfiguration; the changed circuits are dark for exactly the reconfiguration time,
// starting the instant A ends (nothing is in flight then: no drain), and nothing is lost.
TEST(OcsPhases, TwoPhaseRunIsPhaseAPlusTheReconfigurationTimePlusPhaseBToThePicosecond) {
  const uint64_t dark = 1'234'567;  // ps: not a multiple of anything in the model
  const nlohmann::json j = run_phases(
      {"workload.steps=1", "device_types.ocs.reconfiguration_time=" + std::to_string(dark) + "ps"},
      "two");
  const nlohmann::json a_alone = run_phases({"workload.steps=1", "faults=null"}, "a_alone");
  const nlohmann::json b_alone = run_phases(
      {"workload.steps=1", "faults=null", "device_types.ocs.circuits=[0,4,1,2]"}, "b_alone");
  const uint64_t a = row_ps(a_alone, "A", "phase_ps");  // on map ring
  const uint64_t b = row_ps(b_alone, "B", "phase_ps");  // on map cross
  EXPECT_GT(a, 0u);
  EXPECT_GT(b, 0u);
  EXPECT_EQ(row_ps(j, "job", "end_ps"), a + dark + b);
  EXPECT_EQ(row_ps(j, "A", "phase_ps"), a);
  EXPECT_EQ(row_ps(j, "B", "phase_ps"), b);
  EXPECT_EQ(row_ps(j, "A", "wait_ps"), 0u);  // map ring is in force at the start
  EXPECT_EQ(row_ps(j, "B", "wait_ps"), dark);
  const nlohmann::json& ea = j["faults"]["events"][0];
  const nlohmann::json& eb = j["faults"]["events"][1];
  EXPECT_EQ(ea["requests"].get<int>(), 1);
  EXPECT_EQ(ea["switch_reconfigurations"].get<int>(), 0);
  EXPECT_EQ(eb["requests"].get<int>(), 1);
  EXPECT_EQ(eb["switch_reconfigurations"].get<int>(), 1);
  EXPECT_EQ(eb["changed_ports"].get<int>(), 5);  // 0-2, 1-3 -> 0-4, 1-2: ports 0..4
  EXPECT_EQ(eb["first_dark_from_ps"].get<uint64_t>(), a);
  EXPECT_EQ(eb["first_dark_until_ps"].get<uint64_t>(), a + dark);
  EXPECT_EQ(eb["job_wait_ps"].get<uint64_t>(), dark);
  EXPECT_EQ(j["stats"]["ocs0"]["reconfigurations"].get<int>(), 1);
  expect_phases_delivered(j, 1);
  // Each phase ran on its own circuits, split evenly over the two: chip1 sends 4 MiB in
  // phase A (over sw1's fibres 2 and 3: circuits 2-0 and 3-1) and 2 MiB in phase B (over
  // fibres 2 and 4: circuits 2-1 and 4-0). Fibre 3 is dark in B, fibre 4 in A.
  EXPECT_EQ(j["stats"]["sw1.port[2]"]["tx_payload_bytes"].get<uint64_t>(), 3u * 1048576u);
  EXPECT_EQ(j["stats"]["sw1.port[3]"]["tx_payload_bytes"].get<uint64_t>(), 2u * 1048576u);
  EXPECT_EQ(j["stats"]["sw1.port[4]"]["tx_payload_bytes"].get<uint64_t>(), 1u * 1048576u);
}

// Every boundary after the first costs exactly the dark time at ns, us and ms scales: four
// steps are 8 phases with 7 reconfigurations (the first phase A finds its map in force),
// and the phases themselves take what they take without any.
TEST(OcsPhases, EveryBoundaryCostsExactlyTheDarkTimeAtNsUsAndMsScales) {
  const nlohmann::json none = run_phases({"faults=null"}, "none");
  const uint64_t phases = row_ps(none, "job", "phase_ps");
  EXPECT_EQ(row_ps(none, "job", "end_ps"), phases);
  for (uint64_t dark : {20'000ull, 10'000'000ull, 10'000'000'000ull}) {
    SCOPED_TRACE(dark);
    const nlohmann::json j = run_phases(
        {"device_types.ocs.reconfiguration_time=" + std::to_string(dark) + "ps"},
        "steps_" + std::to_string(dark));
    EXPECT_EQ(row_ps(j, "job", "phase_ps"), phases);
    EXPECT_EQ(row_ps(j, "job", "wait_ps"), 7 * dark);
    EXPECT_EQ(row_ps(j, "job", "end_ps"), phases + 7 * dark);
    EXPECT_EQ(j["faults"]["events"][0]["switch_reconfigurations"].get<int>(), 3);
    EXPECT_EQ(j["faults"]["events"][1]["switch_reconfigurations"].get<int>(), 4);
    EXPECT_EQ(j["stats"]["ocs0"]["reconfigurations"].get<int>(), 7);
    expect_phases_delivered(j, 4);
  }
}

}  // namespace
}  // namespace fabricsim
