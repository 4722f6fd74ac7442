// Independent rows on every fabric family (docs/models.md "Sweep", docs/validation.md
// "Independent rows"): a row of a collective sweep gives the same time alone, first, last
// or in the middle of any sweep, on the device families and switch features the DGX and
// Ethernet tests (test_protocols.cpp, test_ethernet.cpp) do not reach: the PCIe root
// complex (its host path), NVLS reduce-scatter and all-gather, UALink, the torus routers
// with dimension-order routing, the dragonfly's Valiant and UGAL routing, and light
// through an optical circuit switch. Exact: the simulation is deterministic, so "the same
// measurement" means the same picosecond.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/system/system_util.h"

using namespace fabricsim::systest;
using nlohmann::json;

namespace {

std::vector<std::string> sweep(const std::string& lo, const std::string& hi,
                               const std::string& step = "4") {
  return {"workload.min_bytes=" + lo, "workload.max_bytes=" + hi, "workload.step_factor=" + step};
}

// The row's span in integer picoseconds (results.json rows[].stats start_ps / end_ps).
uint64_t row_ps(const json& results, uint64_t bytes) {
  const json& s = row_of(results, bytes)["stats"];
  return s["end_ps"].get<uint64_t>() - s["start_ps"].get<uint64_t>();
}

// Runs `config` with `sets` and each sweep in turn; the `bytes` row of every sweep must
// take exactly as long as in the first (the row alone). Returns the row alone (ps).
uint64_t expect_same_row(const std::string& config, const std::vector<std::string>& sets,
                         uint64_t bytes, const std::vector<std::vector<std::string>>& sweeps,
                         const std::string& name) {
  std::vector<uint64_t> got;
  for (size_t i = 0; i < sweeps.size(); ++i) {
    std::vector<std::string> a = {"run", source(config), "--quiet"};
    for (const std::string& s : sets) a.insert(a.end(), {"--set", s});
    for (const std::string& s : sweeps[i]) a.insert(a.end(), {"--set", s});
    const RunResult r = run_fabricsim(a, fresh_dir(name + std::to_string(i)));
    if (r.exit_code != 0) {
      ADD_FAILURE() << name << ": sweep " << i << " failed: " << r.err;
      return 0;
    }
    expect_accounting_clean(r.results);
    got.push_back(row_ps(r.results, bytes));
  }
  for (size_t i = 1; i < got.size(); ++i)
    EXPECT_EQ(got[i], got[0]) << name << ": " << bytes << " B row, sweep " << i
                              << " against the row alone";
  ::testing::Test::RecordProperty(name + "_row_ps", std::to_string(got.empty() ? 0 : got[0]));
  return got.empty() ? 0 : got[0];
}

}  // namespace

// PCIe root complex (configs/pcie_8gpu.yaml, p2p off: every byte goes up, through host
// memory and down). The host path's three stages carry their serialisation remainders
// from one transaction to the next (at 512 GB/s and 460.8 GB/s a byte is not a whole
// number of picoseconds); they are reset between rows (RootComplex::reset_dynamic_state). Before: the
// 1 MiB ring row took 108,740,550 ps alone, 108,740,551 after a 256 KiB row and
// 108,740,549 after a 64 KiB and a 256 KiB row.
TEST(IndependentRowsFamilies, PcieRootComplexHostBounce) {
  const uint64_t t = expect_same_row(
      "configs/pcie_8gpu.yaml", {}, 1ull << 20,
      {sweep("1MiB", "1MiB"), sweep("256KiB", "1MiB"), sweep("1MiB", "4MiB"),
       sweep("64KiB", "4MiB")},
      "rows_pcie");
  EXPECT_GT(t, 0u);
}

// The same with peer-to-peer through the root complex (configs/pcie_8gpu_p2p.yaml: up and
// down, no memory).
TEST(IndependentRowsFamilies, PcieRootComplexPeerToPeer) {
  expect_same_row("configs/pcie_8gpu_p2p.yaml", {}, 1ull << 20,
                  {sweep("1MiB", "1MiB"), sweep("64KiB", "1MiB"), sweep("1MiB", "4MiB")},
                  "rows_pcie_p2p");
}

// NVLS reduce-scatter and all-gather on DGX H100: the switches' reduction and multicast
// engines and their reduction contexts between rows.
TEST(IndependentRowsFamilies, NvlsReduceScatterAndAllGather) {
  for (const char* coll : {"reduce_scatter", "all_gather"}) {
    expect_same_row("configs/dgx_h100.yaml",
                    {std::string("workload={type: collective_sweep, collective: ") + coll +
                     ", algorithm: nvls}"},
                    4ull << 20,
                    {sweep("4MiB", "4MiB"), sweep("256KiB", "4MiB"), sweep("4MiB", "16MiB")},
                    std::string("rows_nvls_") + coll);
  }
}

// UALink (configs/ualink_pod8.yaml): the DL flit stream of every port (its open codeword
// and carried wire bytes) between rows; ring all-reduce and all-to-all.
TEST(IndependentRowsFamilies, UalinkPod) {
  expect_same_row("configs/ualink_pod8.yaml", {}, 1ull << 20,
                  {sweep("1MiB", "1MiB"), sweep("64KiB", "1MiB"), sweep("1MiB", "4MiB")},
                  "rows_ualink_ring");
  expect_same_row("configs/ualink_pod8.yaml",
                  {"workload={type: collective_sweep, collective: alltoall}"}, 1ull << 20,
                  {sweep("1MiB", "1MiB"), sweep("64KiB", "1MiB")}, "rows_ualink_a2a");
}

// Torus routers with dimension-order routing and bubble flow control
// (configs/tpu_v4_slice.yaml, 64 chips over optical circuits): an all-to-all, whose
// traffic crosses several dimensions and turns between them.
TEST(IndependentRowsFamilies, TorusDimensionOrderThroughCircuits) {
  expect_same_row("configs/tpu_v4_slice.yaml",
                  {"device_types.ici_router.torus_routing=dimension_order",
                   "workload={type: collective_sweep, collective: alltoall}"},
                  64ull << 10, {sweep("64KiB", "64KiB"), sweep("4KiB", "64KiB")},
                  "rows_torus_dor");
}

// Dragonfly (configs/eth_dragonfly_1056.yaml cut to 5 groups of 2 routers, 20 hosts) with
// Valiant and UGAL routing over UEC NICs: the routers' intermediate-group streams, the
// switches' ECN streams and the NICs' transports between rows.
TEST(IndependentRowsFamilies, DragonflyValiantAndUgal) {
  for (const char* routing : {"valiant", "ugal"}) {
    expect_same_row("configs/eth_dragonfly_1056.yaml",
                    {"topology.groups=5", "topology.routers=2", "topology.hosts=2",
                     "topology.global_links=2", std::string("device_types.router.routing=") + routing,
                     "workload={type: collective_sweep, collective: alltoall}"},
                    1ull << 20,
                    {sweep("1MiB", "1MiB"), sweep("64KiB", "1MiB"), sweep("1MiB", "4MiB")},
                    std::string("rows_dragonfly_") + routing);
  }
}

// Light through an optical circuit switch (configs/ocs_pair.yaml): the credits that
// travel back through the circuits between rows.
TEST(IndependentRowsFamilies, OpticalCircuitSwitch) {
  expect_same_row("configs/ocs_pair.yaml", {}, 1ull << 20,
                  {sweep("1MiB", "1MiB"), sweep("16KiB", "1MiB"), sweep("1MiB", "16MiB")},
                  "rows_ocs");
}
