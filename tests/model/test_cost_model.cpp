// The cost model's view of a loaded system (fabrics/systems/cost_model.h): the in-switch (NVLS)
// terms derived from the config, and which algorithms `auto` considers. Pure C++, but it
// lives in model_tests because fabrics/ pulls in SystemC (see test_results.cpp).
#include "fabrics/systems/cost_model.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/core/errors.h"

namespace fabricsim {
namespace {

// configs/minimal.yaml with 4 GPUs, each with one 25 GB/s NVLink-style link (2 flits of
// 16 B overhead per packet, 128 B payload, 25 ns) to each of 2 switches (100 ns
// pipeline), `extra` overrides on top.
SystemSpec two_switch_system(std::vector<std::string> extra) {
  std::vector<std::string> sets{"topology.switches=2", "topology.links_per_switch=[1, 1]",
                                "device_types.sw.ports=4", "workload.algorithm=auto",
                                "simulation.functional=false"};
  sets.insert(sets.end(), extra.begin(), extra.end());
  return load_system(std::string(FABRICSIM_SOURCE_DIR) + "/configs/minimal.yaml", sets,
                     std::nullopt);
}

std::vector<std::string> labels(const AutoChooser& a) {
  std::vector<std::string> v;
  for (size_t i = 0; i < a.names.size(); ++i) v.push_back(a.label(i));
  return v;
}

bool has(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Hand-worked from the config: a header-only packet is 2 flits = 32 B, a data packet
// 128 + 32 = 160 B, one 1 B packet (sync: data, the "small packet" of every alpha) 3 flits
// = 48 B; 25 GB/s per link. A rank's NVLS group is its 2 links: 2 x 25 x 128/160 = 40 GB/s
// of payload; each switch takes half of its traffic.
//   reduce alpha = request (1.28 ns + 25 + 100) + read (1.28 + 25) + answer (1.92 + 25 + 100)
//                  + engine (1 B / R) + result (1.92 + 25)
//   store alpha  = store (1.92 + 25 + 100) + replica (1.92 + 25)
// All-reduce nvls per byte of S, n = 4: down = 32/160 reads + 1/4 result + 1 replicas
// = 1.45 (up: 1 + 1.2/4 = 1.3) at 40 GB/s; engines: 4 S of input, half per switch, at R.
TEST(CostModel, NvlsTermsFromTheConfigAreTheClosedForm) {
  const SystemSpec spec = two_switch_system(
      {"device_types.sw.nvls=true", "device_types.sw.nvls_reduce_bandwidth=400GB/s"});
  const coll::FabricCosts f = fabric_costs(spec);
  ASSERT_EQ(f.nvls.size(), 4u);
  ASSERT_EQ(f.nvls_switches.size(), 2u);
  for (int r = 0; r < 4; ++r) {
    const coll::NvlsPath& p = f.nvls[size_t(r)];
    EXPECT_EQ(p.group, f.path(r, (r + 1) % 4).group);  // the links its peers are reached by
    EXPECT_DOUBLE_EQ(f.group_Bps(r, p.group), 40e9);
    EXPECT_DOUBLE_EQ(p.req_bytes, 0.2);
    EXPECT_DOUBLE_EQ(p.read_bytes, 0.2);
    EXPECT_DOUBLE_EQ(p.reduce_alpha_s,
                     (1.28 + 125 + 1.28 + 25 + 1.92 + 125 + 1.92 + 25) * 1e-9 + 1.0 / 400e9);
    EXPECT_DOUBLE_EQ(p.store_alpha_s, (1.92 + 125 + 1.92 + 25) * 1e-9);
    ASSERT_EQ(p.switches.size(), 2u);
    EXPECT_DOUBLE_EQ(p.switches[0].second, 0.5);
    EXPECT_DOUBLE_EQ(p.switches[1].second, 0.5);
  }
  EXPECT_DOUBLE_EQ(f.nvls_switches[0].reduce_Bps, 400e9);
  EXPECT_EQ(f.nvls_switches[0].multicast_Bps, 0.0);
  const coll::AlgoCost c = coll::schedule_cost("all_reduce", "nvls", 1, 4, 0, f);
  EXPECT_DOUBLE_EQ(c.s_per_byte, 1.45 / 40e9);  // engine: 0.5 x 4 / 400e9 = 0.5e-11
  EXPECT_DOUBLE_EQ(c.latency_s, f.nvls[0].reduce_alpha_s + f.nvls[0].store_alpha_s);

  // A slow engine is the bound: 0.5 x 4 S / 20 GB/s, algbw 10 GB/s.
  const SystemSpec slow = two_switch_system(
      {"device_types.sw.nvls=true", "device_types.sw.nvls_reduce_bandwidth=20GB/s"});
  EXPECT_DOUBLE_EQ(coll::schedule_cost("all_reduce", "nvls", 1, 4, 0, fabric_costs(slow))
                       .s_per_byte,
                   2.0 / 20e9);
}

// auto considers nvls exactly where naming it passes the checks: NVLS switches linked to
// every rank and the datatype reduced by them; elsewhere it is not a candidate, and no
// error. hierarchical_nvls on one domain is nvls's schedule and is left to nvls.
TEST(CostModel, AutoConsidersNvlsExactlyWhereTheSystemRunsIt) {
  const std::vector<std::string> on{"device_types.sw.nvls=true",
                                    "device_types.sw.nvls_reduce_bandwidth=400GB/s"};
  std::vector<std::string> l = labels(make_auto_chooser(two_switch_system(on)));
  EXPECT_TRUE(has(l, "nvls"));
  EXPECT_FALSE(has(l, "hierarchical_nvls"));
  EXPECT_TRUE(has(l, "ring"));
  // No NVLS switches.
  l = labels(make_auto_chooser(two_switch_system({})));
  EXPECT_FALSE(has(l, "nvls"));
  // A datatype the engines do not reduce.
  std::vector<std::string> dbl = on;
  dbl.push_back("workload.datatype=double");
  l = labels(make_auto_chooser(two_switch_system(dbl)));
  EXPECT_FALSE(has(l, "nvls"));
  EXPECT_TRUE(has(l, "ring"));
  // Naming it there is an error, with the same check.
  dbl.push_back("workload.algorithm=nvls");
  EXPECT_THROW(two_switch_system(dbl), InputError);
  // reduce_scatter and all_gather: ring and nvls.
  for (const char* coll : {"reduce_scatter", "all_gather"}) {
    std::vector<std::string> s = on;
    s.push_back("workload.type=collective_sweep");
    s.push_back(std::string("workload.collective=") + coll);
    EXPECT_EQ(labels(make_auto_chooser(two_switch_system(s))),
              (std::vector<std::string>{"ring", "nvls"}))
        << coll;
  }
}

}  // namespace
}  // namespace fabricsim
