// `fabricsim compare` on optical and electrical systems: the time, energy, cost proxy and
// reconfiguration columns (docs/optical_vs_electrical.md).
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "tests/system/system_util.h"

using namespace fabricsim::systest;
using nlohmann::json;

namespace {

const json* system_of(const json& r, const std::string& label) {
  for (const json& s : r["systems"])
    if (s["label"] == label) return &s;
  return nullptr;
}

// Three systems: the reconfiguration example (one circuit dark for 100 us, from `at` to
// lit again 100.2698 us), and 2 racks x 2 GPUs with an OCS spine and with an electrical one.
TEST(OpticalCompare, PrintsTimeEnergyCostProxyAndReconfigurationTime) {
  const std::string dir = fresh_dir("optical_compare");
  std::system(("mkdir -p '" + dir + "'").c_str());
  const std::string file = dir + "/compare.yaml";
  {
    std::ofstream f(file);
    f << "version: 1\nname: optical_compare\nsystems:\n"
      << "  - {config: " << source("configs/ocs_reconfigure.yaml") << ", label: Reconf}\n"
      << "  - {config: " << source("configs/rack_spine_ocs.yaml") << ", label: OCS, set: "
      << "[topology.racks=2, topology.endpoints_per_rack=2, topology.uplinks=1, "
         "workload.min_bytes=4MiB, workload.max_bytes=4MiB]}\n"
      << "  - {config: " << source("configs/rack_spine_ocs.yaml") << ", label: Elec, set: "
      << "[topology.racks=2, topology.endpoints_per_rack=2, topology.uplinks=1, "
         "workload.min_bytes=4MiB, workload.max_bytes=4MiB, topology.spine_type=spine_switch]}\n";
  }
  RunResult r = run_fabricsim({"compare", file}, dir + "/out");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json* rc = system_of(r.results, "Reconf");
  const json* o = system_of(r.results, "OCS");
  const json* e = system_of(r.results, "Elec");
  ASSERT_TRUE(rc && o && e);
  // Reconfiguration: at 100 us -> lit at 200.2698 us (drain 0.2698 + dark 100 us).
  EXPECT_EQ((*rc)["reconfiguration_ps"].get<uint64_t>(), 100269800u);
  EXPECT_EQ((*o)["reconfiguration_ps"].get<uint64_t>(), 0u);
  EXPECT_EQ((*e)["reconfiguration_ps"].get<uint64_t>(), 0u);
  // The cost proxy by hand (as tests/unit/test_inventory.cpp): OCS spine 2 transceivers,
  // 6 switch ports; electrical 4 and 8.
  EXPECT_EQ((*o)["inventory"]["transceivers"].get<int>(), 2);
  EXPECT_EQ((*o)["inventory"]["switch_ports"].get<int>(), 6);
  EXPECT_EQ((*o)["inventory"]["ocs_ports"].get<int>(), 2);
  EXPECT_EQ((*e)["inventory"]["transceivers"].get<int>(), 4);
  EXPECT_EQ((*e)["inventory"]["switch_ports"].get<int>(), 8);
  EXPECT_EQ((*rc)["inventory"]["transceivers"].get<int>(), 5);  // 5 fibres to the OCS
  // The table: time and energy per size per system, as the rows say.
  const json& row = r.results["table"][0];
  EXPECT_EQ(row["time_us"]["OCS"], (*o)["rows"][0]["time_us"]);
  EXPECT_EQ(row["energy_J"]["Elec"], (*e)["rows"][0]["energy"]["total_J"]);
  // The ring crosses the spine once each way: the circuit is one link of the same rate, so
  // the times agree within 1%; the OCS spine sends each spine bit over one fibre instead of
  // two and has no spine switch, so its energy is lower.
  const double to = (*o)["rows"][0]["time_us"].get<double>();
  const double te = (*e)["rows"][0]["time_us"].get<double>();
  EXPECT_NEAR(to / te, 1.0, 0.01);
  EXPECT_LT((*o)["rows"][0]["energy"]["total_J"].get<double>(),
            (*e)["rows"][0]["energy"]["total_J"].get<double>());
  EXPECT_NE(r.out.find("reconfig_us"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("100.270"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("xcvrs"), std::string::npos) << r.out;
}

}  // namespace

namespace {

// The TPU comparison at a small size (one 4x4x4 cube on 48 OCSes of 2 used ports vs 64
// chips on a six-plane fat tree): the cost proxy by hand and the OCS energy as its static
// power x the row's time (no per-bit energy is set here).
TEST(OpticalCompare, TpuCubeOnOcsAndOnAFatTreeCountedByHand) {
  const std::string dir = fresh_dir("optical_compare_tpu");
  std::system(("mkdir -p '" + dir + "'").c_str());
  const std::string file = dir + "/compare.yaml";
  {
    std::ofstream f(file);
    f << "version: 1\nname: tpu_small\nsweep: {min_bytes: 4MiB, max_bytes: 4MiB}\nsystems:\n"
      << "  - {config: " << source("configs/tpu_v4_slice.yaml") << ", label: OCS, set: "
      << "[\"topology.slice=[1,1,1]\", topology.cubes=1, device_types.palomar.ports=2]}\n"
      << "  - {config: " << source("configs/tpu_v4_fat_tree.yaml") << ", label: FT, set: "
      << "[topology.endpoints=64, topology.racks=4]}\n";
  }
  RunResult r = run_fabricsim({"compare", file}, dir + "/out");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json* o = system_of(r.results, "OCS");
  const json* e = system_of(r.results, "FT");
  ASSERT_TRUE(o && e);
  // One cube: 6 faces x 16 chips = 96 fibres, one per used OCS port, a transceiver at the
  // router end only; 64 routers of 12 ports are the chips' own (on die).
  EXPECT_EQ((*o)["inventory"]["circuit_switches"].get<int>(), 48);
  EXPECT_EQ((*o)["inventory"]["ocs_ports"].get<int>(), 96);
  EXPECT_EQ((*o)["inventory"]["optical_links"].get<int>(), 96);
  EXPECT_EQ((*o)["inventory"]["transceivers"].get<int>(), 96);
  EXPECT_EQ((*o)["inventory"]["switch_ports"].get<int>(), 64 * 12);
  // Fat tree: 6 planes x (4 leaves + 8 spines); 384 copper chip links; per plane 4 x 16
  // fibres = 384 fibres with two transceivers each; ports 6 x (4 x 32 + 8 x 8).
  EXPECT_EQ((*e)["inventory"]["packet_switches"].get<int>(), 72);
  EXPECT_EQ((*e)["inventory"]["electrical_links"].get<int>(), 384);
  EXPECT_EQ((*e)["inventory"]["optical_links"].get<int>(), 384);
  EXPECT_EQ((*e)["inventory"]["transceivers"].get<int>(), 768);
  EXPECT_EQ((*e)["inventory"]["switch_ports"].get<int>(), 6 * (4 * 32 + 8 * 8));
  // Energy: 48 switches x 2 ports x 0.79 W over the row's time; nothing else is set.
  const json& row = (*o)["rows"][0];
  const double seconds = row["time_us"].get<double>() * 1e-6;
  EXPECT_NEAR(row["energy"]["static_J"].get<double>(), 48 * 2 * 0.79 * seconds,
              1e-9 + 48 * 2 * 0.79 * 1e-12);  // time_us is printed to the picosecond
  EXPECT_EQ(row["energy"]["links_J"].get<double>(), 0.0);
}


// The phase plan's messages (configs/ocs_phases.yaml). With map `ring` at both phase
// boundaries nothing ever changes (ring is in force from the start): the `# fault` lines say
// so instead of a dark window from 0 to 0. A time limit that falls while the job waits for
// its circuits (the first reconfiguration is dark from 75.554 to 85.554 us) says the job
// was waiting, not running.
TEST(OcsPlanMessages, NoChangeAndWaitingForCircuitsAreSaidAsSuch) {
  RunResult same = run_fabricsim({"run", source("configs/ocs_phases.yaml"), "--set",
                                  "faults.events[1].map=ring"});
  ASSERT_EQ(same.exit_code, 0) << same.err;
  EXPECT_NE(same.out.find("# fault 1: ocs_phase_map ring at every start of phase B, during job 1: "
                          "4 requests, no circuit changed (the map was in force each time): the "
                          "job did not wait"),
            std::string::npos)
      << same.out;
  EXPECT_EQ(same.out.find("dark from 0.000 us to 0.000 us"), std::string::npos) << same.out;
  RunResult limit = run_fabricsim({"run", source("configs/ocs_phases.yaml"), "--set",
                                   "simulation.time_limit=80us"});
  EXPECT_EQ(limit.exit_code, 2) << limit.err;
  EXPECT_NE(limit.err.find("2 of 8 jobs finished; job 3 was waiting to start (for the circuits it "
                           "needs)"),
            std::string::npos)
      << limit.err;
  EXPECT_EQ(limit.err.find("was running"), std::string::npos) << limit.err;
}

// ocs_circuit_map: the whole-system map at a time. configs/ocs_reconfigure.yaml's change
// (ocs0 to [0, 2, 1, 4] at 100 us, 100 us dark) given as a named map at 100 us instead of a
// per-switch ocs_reconfigure: the same switch reconfiguration, so the same dark window to
// the picosecond and the same sendrecv time; the map is lit 100 us + the drain after the
// request. A second request for the same map at 150 us (while the first is dark) waits for
// it and then changes nothing.
TEST(OcsPlanMessages, TimedWholeSystemMapIsDarkForExactlyTheReconfigurationTime) {
  const std::string d1 = fresh_dir("ocs_timed_ref"), d2 = fresh_dir("ocs_timed_map");
  RunResult ref = run_fabricsim({"run", source("configs/ocs_reconfigure.yaml")}, d1);
  ASSERT_EQ(ref.exit_code, 0) << ref.err;
  RunResult map = run_fabricsim(
      {"run", source("configs/ocs_reconfigure.yaml"), "--set",
       "faults.circuit_maps={alt: {ocs0: [0, 2, 1, 4]}}", "--set",
       "faults.events=[{type: ocs_circuit_map, at: 100us, map: alt}, "
       "{type: ocs_circuit_map, at: 150us, map: alt}]"},
      d2);
  ASSERT_EQ(map.exit_code, 0) << map.err;
  const json& r = ref.results["faults"]["events"][0];
  const json& m = map.results["faults"]["events"][0];
  EXPECT_EQ(m["switch_reconfigurations"].get<uint64_t>(), 1u);
  EXPECT_EQ(m["changed_ports"].get<uint64_t>(), r["changed_ports"].get<uint64_t>());
  EXPECT_EQ(m["requested_ps"].get<uint64_t>(), 100'000'000u);
  EXPECT_EQ(m["first_dark_from_ps"].get<uint64_t>(), r["dark_from_ps"].get<uint64_t>());
  EXPECT_EQ(m["first_dark_until_ps"].get<uint64_t>(), r["dark_until_ps"].get<uint64_t>());
  EXPECT_EQ(m["first_dark_until_ps"].get<uint64_t>() - m["first_dark_from_ps"].get<uint64_t>(),
            100'000'000u);
  EXPECT_EQ(m["all_lit_after_ps"].get<uint64_t>(), r["dark_until_ps"].get<uint64_t>() - 100'000'000u);
  EXPECT_EQ(map.results["rows"][0]["time_us"], ref.results["rows"][0]["time_us"]);
  const json& m2 = map.results["faults"]["events"][1];
  EXPECT_EQ(m2["requests"].get<uint64_t>(), 1u);
  EXPECT_EQ(m2["switch_reconfigurations"].get<uint64_t>(), 0u);
  EXPECT_EQ(m2["requested_ps"].get<uint64_t>(), r["dark_until_ps"].get<uint64_t>());  // waited
  EXPECT_NE(map.out.find("# fault 0: ocs_circuit_map alt at 100us"), std::string::npos) << map.out;
  EXPECT_NE(map.out.find("# fault 1: ocs_circuit_map alt at 150us"), std::string::npos) << map.out;
  EXPECT_NE(map.out.find("no circuit changed (the map was in force)"), std::string::npos) << map.out;
  EXPECT_EQ(map.results["checks"]["payload_bytes_sent"], map.results["checks"]["payload_bytes_delivered"]);
}

}  // namespace
