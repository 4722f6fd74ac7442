// algorithm: auto above 256 ranks (models/collectives/cost.h, "Rank classes"): the cost
// model no longer builds every rank's schedule, so auto picks and runs on NVL576, and its
// cost computation stays within a stated time and memory.
#include <string>
#include <vector>

#include "tests/system/system_util.h"

namespace fabricsim::systest {
namespace {

// NVL576 (configs/nvl576_two_tier.yaml, 576 ranks) at flow level, 1 MiB, auto over the
// ring and the tree with every protocol: the run picks one of them and runs it to the end;
// the cost model takes well under 20 CPU s (~0.3-0.6 s: the ring is costed on one class of
// 36 ranks, docs/collectives.md "Rank classes") and the whole run stays under 4 GiB peak
// RSS (the reason for that bound is at its assertion).
TEST(AutoScale, Nvl576PicksAndRunsAtFlowLevel) {
  const std::string out = fresh_dir("auto576");
  const RunResult r = run_fabricsim(
      {"run", source("configs/nvl576_two_tier.yaml"), "--quiet", "--set",
       "workload.algorithm=auto", "--set", "workload.min_bytes=1MiB", "--set",
       "workload.max_bytes=1MiB", "--set", "simulation.fidelity=flow"},
      out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json& row = row_of(r.results, 1u << 20);
  const std::string algo = row["algorithm"].get<std::string>();
  EXPECT_TRUE(algo.rfind("ring/", 0) == 0 || algo.rfind("tree/", 0) == 0) << algo;
  const nlohmann::json& model = r.results["auto_cost_model"];
  EXPECT_TRUE(model.contains("ring/simple"));
  EXPECT_TRUE(model.contains("tree/simple"));
  EXPECT_TRUE(model.contains(algo)) << algo;
  EXPECT_GT(row["time_us"].get<double>(), 0.0);
  const nlohmann::json& cost = r.results["run_cost"];
  EXPECT_GE(cost["auto_cost_cpu_s"].get<double>(), 0.0);
  EXPECT_LT(cost["auto_cost_cpu_s"].get<double>(), 20.0);
  // The model now picks ring/ll here (its chain terms, docs/collectives.md): the ring's
  // schedule of 576 ranks x 1,150 steps is most of the run's memory, 2.86 GiB measured
  // (the tree it took before ran in ~0.4 GiB). Before rank classes the cost model alone
  // passed 14 GB: 4 GiB still catches that.
  EXPECT_LT(cost["peak_rss_kib"].get<double>(), 4.0 * 1024.0 * 1024.0);
}

}  // namespace
}  // namespace fabricsim::systest
