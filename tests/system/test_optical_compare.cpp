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
