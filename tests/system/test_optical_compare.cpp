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

}  // namespace
