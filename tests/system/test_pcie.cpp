// System tests for the PCIe host path and the compare command: the fabricsim binary on
// the shipped PCIe configs, checked against the analytic host-path ceiling and against
// DGX H100, and `fabricsim compare` checked against individual runs.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "tests/system/system_util.h"

using namespace fabricsim::systest;
using nlohmann::json;

namespace {

double busbw_at(const json& results, uint64_t bytes) {
  for (const json& r : results["rows"])
    if (r["size_bytes"].get<uint64_t>() == bytes) return r["busbw_GBps"].get<double>();
  throw std::runtime_error("no row for size " + std::to_string(bytes));
}

}  // namespace

// Acceptance (issue #4): PCIe-only 8 GPUs, all-reduce busbw bounded by the host path.
// Ceiling: every bounced byte is written to and read from host memory, and 8 GPUs each
// send busbw bytes/s, so 2 x 8 x busbw <= 460.8 GB/s (12 x DDR5-4800): busbw <= 28.8 GB/s
// (the x16 link alone would allow 56.41). Tolerance: at most 0.05% above the ceiling
// (rounding of integer-ps service times), at least 97% of it at 64 MiB (measured 99.97%;
// the memory is kept busy by 16 channels, so only the pipeline fill is lost). And DGX
// H100 NVLink on the same size is >= 3x faster (measured ~12x).
TEST(Pcie, HostBounceAllReduceIsBoundedByHostMemoryAndFarBelowNvlink) {
  const std::vector<std::string> size = {"--set", "workload.min_bytes=64MiB", "--set",
                                         "workload.max_bytes=64MiB", "--quiet"};
  std::vector<std::string> pa = {"run", source("configs/pcie_8gpu.yaml")};
  pa.insert(pa.end(), size.begin(), size.end());
  RunResult p = run_fabricsim(pa, fresh_dir("pcie_bounce"));
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const double ceiling = p.results["ceiling"]["busbw_GBps"].get<double>();
  EXPECT_NEAR(ceiling, 460.8 / (2 * 8), 1e-9);
  EXPECT_EQ(p.results["ceiling"]["limited_by"], "rc0 host memory");
  const double busbw = busbw_at(p.results, 64ull << 20);
  RecordProperty("pcie_busbw_GBps", std::to_string(busbw));
  EXPECT_LE(busbw, ceiling * 1.0005);
  EXPECT_GE(busbw, ceiling * 0.97);
  // By mechanism: host memory moved every byte twice and was the busiest resource.
  const json& hp = p.results["stats"]["rc0"]["host_path"];
  uint64_t sent = 0;
  for (int g = 0; g < 8; ++g)
    sent += p.results["stats"]["gpu" + std::to_string(g) + ".port[0]"]["tx_payload_bytes"]
                .get<uint64_t>();
  EXPECT_EQ(hp["memory_bytes_written"].get<uint64_t>(), sent);
  EXPECT_EQ(hp["memory_bytes_read"].get<uint64_t>(), sent);
  EXPECT_GT(hp["memory_utilisation"].get<double>(), 0.95);
  EXPECT_LT(p.results["stats"]["gpu0.port[0]"]["utilisation"].get<double>(), 0.6);

  std::vector<std::string> na = {"run", source("configs/dgx_h100.yaml")};
  na.insert(na.end(), size.begin(), size.end());
  RunResult n = run_fabricsim(na, fresh_dir("pcie_vs_h100"));
  ASSERT_EQ(n.exit_code, 0) << n.err;
  const double nvlink = busbw_at(n.results, 64ull << 20);
  EXPECT_GE(nvlink / busbw, 3.0);
  EXPECT_NEAR(n.results["ceiling"]["busbw_GBps"].get<double>(), 360.0, 1e-6);
}

// With peer-to-peer under two PCIe switches the host memory is out of the path: the
// ring is bounded by each GPU's x16 link, 63.02 GB/s x 256/286 = 56.41 GB/s of payload.
// 4 MiB (per packet) and 64 MiB (aggregated 16 KiB transactions): within 3% below the
// ceiling (measured 55.51 and 56.34 GB/s). The 64 MiB row guards the crossbar-hold fix:
// before it, aggregated transactions on this two-level path starved the write acks and
// 64 MiB gave 47.88 GB/s (85%; docs/scaleup.md).
TEST(Pcie, P2pUnderSwitchesIsBoundedByTheX16Link) {
  RunResult r = run_fabricsim(
      {"run", source("configs/pcie_8gpu_p2p.yaml"), "--set", "workload.min_bytes=4MiB", "--set",
       "workload.max_bytes=64MiB", "--set", "workload.step_factor=16", "--quiet",
       // the x16 link's bound alone: the idealised transport (no GPU protocol: fences and
       // flags per step cost the 4 MiB row 5%), no kernel launch and completion
       "--set", "workload.sync=data",
       "--set", "workload.launch_latency=0ns", "--set", "workload.completion_latency=0ns"},
      fresh_dir("pcie_p2p"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const double ceiling = r.results["ceiling"]["busbw_GBps"].get<double>();
  EXPECT_NEAR(ceiling, 16 * 32e9 * 0.98461538 / 8e9 * 256.0 / 286.0, 1e-6);
  for (uint64_t size : {4ull << 20, 64ull << 20}) {
    const double busbw = busbw_at(r.results, size);
    EXPECT_LE(busbw, ceiling * 1.0005) << size;
    EXPECT_GE(busbw, ceiling * 0.97) << size;
  }
  EXPECT_EQ(r.results["stats"]["rc0"]["host_path"]["memory_bytes_written"].get<uint64_t>(), 0u);
  EXPECT_GT(r.results["stats"]["rc0"]["host_path"]["bytes_forwarded"].get<uint64_t>(), 0u);
}

// `fabricsim compare` on two small systems: the table has one row per size with a number
// for each system, and each number is byte-identical to the busbw of the same config run
// alone with the same overrides (each system runs in its own process, deterministically).
TEST(Compare, TableMatchesIndividualRuns) {
  const std::string dir = fresh_dir("compare");
  std::system(("mkdir -p '" + dir + "'").c_str());
  const std::string file = dir + "/cmp.yaml";
  {
    std::ofstream f(file);
    f << "version: 1\nname: two\nsweep: {min_bytes: 256KiB, max_bytes: 1MiB, step_factor: 4}\n"
      << "systems:\n"
      << "  - {config: " << source("configs/minimal.yaml") << ", label: minimal}\n"
      << "  - {config: " << source("configs/pcie_8gpu.yaml") << ", label: pcie}\n";
  }
  const std::string out = dir + "/out";
  RunResult c = run_fabricsim({"compare", file, "--out", out});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const json merged = json::parse(slurp(out + "/results.json"));
  ASSERT_EQ(merged["systems"].size(), 2u);
  ASSERT_EQ(merged["table"].size(), 2u);  // 256 KiB, 1 MiB
  const std::vector<std::pair<std::string, std::string>> systems = {
      {"minimal", "configs/minimal.yaml"}, {"pcie", "configs/pcie_8gpu.yaml"}};
  for (size_t i = 0; i < systems.size(); ++i) {
    RunResult alone = run_fabricsim(
        {"run", source(systems[i].second), "--set", "workload.min_bytes=256KiB", "--set",
         "workload.max_bytes=1MiB", "--set", "workload.step_factor=4", "--quiet"},
        fresh_dir("alone" + std::to_string(i)));
    ASSERT_EQ(alone.exit_code, 0) << alone.err;
    for (const json& row : merged["table"]) {
      const uint64_t b = row["size_bytes"].get<uint64_t>();
      const double x = row["busbw_GBps"][systems[i].first].get<double>();
      EXPECT_EQ(x, busbw_at(alone.results, b)) << systems[i].first << " " << b;
      // The printed table shows it with two decimals on the size's line.
      char cell[64];
      std::snprintf(cell, sizeof cell, "%.2f", x);
      const size_t line = c.out.find(std::to_string(b) + " ");
      ASSERT_NE(line, std::string::npos) << c.out;
      const std::string text = c.out.substr(line, c.out.find('\n', line) - line);
      EXPECT_NE(text.find(cell), std::string::npos) << text;
    }
    EXPECT_EQ(merged["systems"][i]["ceiling"], alone.results["ceiling"]);
  }
  EXPECT_NE(c.out.find("ceiling"), std::string::npos);
}

// A broken config listed in a compare file is reported with its own file:line:col, exit 2,
// before anything runs.
TEST(Compare, ErrorInAListedConfigIsLocated) {
  const std::string dir = fresh_dir("compare_bad");
  std::system(("mkdir -p '" + dir + "'").c_str());
  {
    std::ofstream f(dir + "/broken.yaml");
    std::ifstream in(source("configs/minimal.yaml"));
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    text.replace(text.find("latency: 25ns"), 13, "latncy: 25ns");
    f << text;
  }
  {
    std::ofstream f(dir + "/cmp.yaml");
    f << "systems:\n  - config: broken.yaml\n";
  }
  RunResult c = run_fabricsim({"compare", dir + "/cmp.yaml"});
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_NE(c.err.find(dir + "/broken.yaml:21:5: link_types.nvl.latncy: unknown key"),
            std::string::npos)
      << c.err;
  EXPECT_NE(c.err.find("cmp.yaml:2:5"), std::string::npos) << c.err;
}
