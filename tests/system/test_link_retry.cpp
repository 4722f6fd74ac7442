// Link-level retry through the whole tool (docs/models.md, "Link-level retry"): a bit error
// rate set with --set makes CRC errors and go-back-N replays, the collective still
// completes with exact results and every packet delivered, and the cost shows in the
// statistics and the run output.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/system/system_util.h"

using namespace fabricsim::systest;
using nlohmann::json;

// minimal.yaml (per-packet, 4 GPUs through a switch, functional) at ber 1e-6 against ber 0:
// exact sums, replays on the links, per-port counters adding up to the run summary, and
// every row slower or equal. Every CRC error costs one packet (160 B on the wire, or 48 B
// for an ack or flag) and one NAK round trip (2 x 25 ns + retry_latency 30 ns), so
// retry_ps = 80 ns x errors + 6.4 ns per replayed 160 B, exactly.
TEST(LinkRetrySystem, MinimalWithBerIsExactAndShowsReplays) {
  const std::vector<std::string> base{"run", source("configs/minimal.yaml"), "--set",
                                      "workload.max_bytes=1MiB"};
  RunResult clean = run_fabricsim(base, fresh_dir("retry_ber0"));
  ASSERT_EQ(clean.exit_code, 0) << clean.err;
  std::vector<std::string> args = base;
  args.insert(args.end(), {"--set", "link_types.nvl.ber=1e-6"});
  RunResult r = run_fabricsim(args, fresh_dir("retry_ber1e-6"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_exact_and_clean(r.results);

  const RetryTotals t = retry_totals(r.results);
  const json& lr = r.results["link_retry"];
  EXPECT_GT(t.crc_errors, 20u);  // ~6.3 MB of wire bits x 8 x 1e-6 = ~50 expected
  EXPECT_EQ(t.replays, t.crc_errors);
  EXPECT_EQ(lr["crc_errors"].get<uint64_t>(), t.crc_errors);
  EXPECT_EQ(lr["replay_wire_bytes"].get<uint64_t>(), t.replay_wire_bytes);
  EXPECT_EQ(t.retry_ps, t.crc_errors * 80'000 + t.replay_wire_bytes * 40);  // 40 ps per byte
  EXPECT_EQ(retry_totals(clean.results).crc_errors, 0u);
  EXPECT_EQ(clean.results["link_retry"]["crc_errors"].get<uint64_t>(), 0u);
  // The summary line appears only when something happened.
  EXPECT_NE(r.out.find("# link retry (all ports): " + std::to_string(t.crc_errors) +
                       " CRC errors"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(clean.out.find("# link retry"), std::string::npos);
  // The link-layer parameters are echoed in the resolved config.
  EXPECT_EQ(r.results["resolved_config"]["link_types"]["nvl"]["ber"].get<double>(), 1e-6);

  double slower = 0;
  for (size_t i = 0; i < r.results["rows"].size(); ++i) {
    const double a = clean.results["rows"][i]["time_us"].get<double>();
    const double b = r.results["rows"][i]["time_us"].get<double>();
    EXPECT_GE(b, a) << "row " << i;
    slower = std::max(slower, b / a);
  }
  EXPECT_GT(slower, 1.0);
}

// DGX H100 with aggregated transactions (16 KiB of 128 B packets, every message aggregated)
// and functional checking at ber 1e-6: replays restart inside transactions (replayed bytes
// are whole packets, not whole transactions) and the all-reduce stays exact.
TEST(LinkRetrySystem, DgxH100AggregatedAllReduceWithBerIsExact) {
  RunResult r = run_fabricsim(
      {"run", source("configs/dgx_h100.yaml"), "--set", "workload.min_bytes=4MiB", "--set",
       "workload.max_bytes=4MiB", "--set", "simulation.aggregate_min_message=0B", "--set",
       "simulation.functional=true", "--set", "link_types.nvlink4.ber=1e-6", "--quiet"},
      fresh_dir("retry_dgx"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_exact_and_clean(r.results);
  const RetryTotals t = retry_totals(r.results);
  EXPECT_GT(t.crc_errors, 500u);  // 147 MB of wire x 8 x 1e-6 = ~1180 expected
  // Each replay re-sends one packet: at most 160 B (a full data packet), at least 48 B.
  EXPECT_LE(t.replay_wire_bytes, t.crc_errors * 160);
  EXPECT_GE(t.replay_wire_bytes, t.crc_errors * 48);
  // Whole-transaction replay would re-send up to 20 KiB per error.
  EXPECT_LT(double(t.replay_wire_bytes) / double(t.crc_errors), 161.0);
}

// Bit errors come from each port's Rng(seed, port name): the same seed gives identical
// results (times, per-port error counts), another seed other errors.
TEST(LinkRetrySystem, BitErrorsFollowTheSeed) {
  const RunResult c = expect_errors_follow_the_seed(
      {"run", source("configs/minimal.yaml"), "--quiet", "--set", "workload.max_bytes=256KiB",
       "--set", "link_types.nvl.ber=1e-6"},
      "retry");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  expect_exact_and_clean(c.results);
}
