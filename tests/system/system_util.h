// Helpers for system tests: run the fabricsim binary as a user would and read its
// results.json.
#pragma once
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

namespace fabricsim::systest {

struct RunResult {
  int exit_code = -1;
  std::string out, err;
  nlohmann::json results;  // results.json when --out was given and the run succeeded
};

inline std::string source(const std::string& rel) {
  return std::string(FABRICSIM_SOURCE_DIR) + "/" + rel;
}

inline std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Runs `fabricsim ARGS` (each arg single-quoted for the shell); with `out_dir` adds
// --out and parses results.json.
inline RunResult run_fabricsim(const std::vector<std::string>& args,
                               const std::string& out_dir = "") {
  std::string cmd = std::string("'") + FABRICSIM_BINARY + "'";
  for (const auto& a : args) cmd += " '" + a + "'";
  if (!out_dir.empty()) cmd += " --out '" + out_dir + "'";
  const std::string tag = std::to_string(::getpid());
  const std::string o = "/tmp/fabricsim_systest_" + tag + ".out";
  const std::string e = "/tmp/fabricsim_systest_" + tag + ".err";
  cmd += " >'" + o + "' 2>'" + e + "' </dev/null";
  RunResult r;
  const int status = std::system(cmd.c_str());
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(o);
  r.err = slurp(e);
  std::remove(o.c_str());
  std::remove(e.c_str());
  if (!out_dir.empty() && r.exit_code == 0)
    r.results = nlohmann::json::parse(slurp(out_dir + "/results.json"));
  return r;
}

inline std::string fresh_dir(const std::string& name) {
  const std::string d = "/tmp/fabricsim_systest_" + name + "_" + std::to_string(::getpid());
  std::system(("rm -rf '" + d + "'").c_str());
  return d;
}

// The results.json row of one message size; throws if the run has none.
inline const nlohmann::json& row_of(const nlohmann::json& results, uint64_t bytes) {
  for (const nlohmann::json& r : results["rows"])
    if (r["size_bytes"].get<uint64_t>() == bytes) return r;
  throw std::runtime_error("no row for size " + std::to_string(bytes));
}

// `run` of configs/16x_dgx_h100_ib.yaml cut to two nodes on their rails (no spines), with
// hierarchical_nvls at one size (e.g. "16MiB"): NVLS inside each node, every NVLink port
// carrying only NVLS traffic, the rail rings over InfiniBand.
inline std::vector<std::string> two_ib_nodes_hierarchical_nvls(const std::string& size) {
  return {"run",   source("configs/16x_dgx_h100_ib.yaml"),
          "--quiet",
          "--set", "workload.algorithm=hierarchical_nvls",
          "--set", "topology.nodes=2",
          "--set", "topology.spines=0",
          "--set", "topology.uplinks_per_rail=0",
          "--set", "workload.min_bytes=" + size,
          "--set", "workload.max_bytes=" + size};
}

// Runs `args` per packet (simulation.aggregate_bytes=0B) and then as given, each into a
// fresh --out directory named after `tag`. Returns {per packet, as given}.
inline std::pair<RunResult, RunResult> run_per_packet_and_as_given(
    const std::vector<std::string>& args, const std::string& tag) {
  std::vector<std::string> pp = args;
  pp.insert(pp.end(), {"--set", "simulation.aggregate_bytes=0B"});
  RunResult per_packet = run_fabricsim(pp, fresh_dir(tag + "_pp"));
  RunResult given = run_fabricsim(args, fresh_dir(tag + "_agg"));
  return {std::move(per_packet), std::move(given)};
}

// Nothing lost, nothing left over: the pool is empty and payload sent = delivered (> 0).
inline void expect_accounting_clean(const nlohmann::json& results) {
  const nlohmann::json& c = results["checks"];
  EXPECT_EQ(c["packets_outstanding"].get<uint64_t>(), 0u);
  EXPECT_EQ(c["payload_bytes_sent"].get<uint64_t>(), c["payload_bytes_delivered"].get<uint64_t>());
  EXPECT_GT(c["payload_bytes_sent"].get<uint64_t>(), 0u);
}

// Link-level retry counters summed over every port of a run (endpoints and switches have
// none).
struct RetryTotals {
  uint64_t crc_errors = 0, replays = 0, replay_wire_bytes = 0, retry_ps = 0;
};

inline RetryTotals retry_totals(const nlohmann::json& results) {
  RetryTotals t;
  for (const auto& [name, s] : results["stats"].items()) {
    if (!s.contains("crc_errors")) continue;
    t.crc_errors += s["crc_errors"].get<uint64_t>();
    t.replays += s["replays"].get<uint64_t>();
    t.replay_wire_bytes += s["replay_wire_bytes"].get<uint64_t>();
    t.retry_ps += s["retry_ps"].get<uint64_t>();
  }
  return t;
}

// A functional run: every row exact, nothing lost or left over.
inline void expect_exact_and_clean(const nlohmann::json& results) {
  ASSERT_TRUE(results["checks"]["functional"].get<bool>());
  for (const nlohmann::json& r : results["rows"]) EXPECT_EQ(r["wrong"].get<uint64_t>(), 0u);
  const nlohmann::json& c = results["checks"];
  EXPECT_EQ(c["packets_outstanding"].get<uint64_t>(), 0u);
  EXPECT_EQ(c["payload_bytes_sent"].get<uint64_t>(), c["payload_bytes_delivered"].get<uint64_t>());
}

// Runs `args` with --seed 1 twice and --seed 2 once: the same seed must give byte-identical
// rows and statistics with CRC errors in them, another seed other per-port error counts.
// Returns the seed-2 run.
inline RunResult expect_errors_follow_the_seed(const std::vector<std::string>& args,
                                               const std::string& tag) {
  auto run = [&](const std::string& seed, const std::string& name) {
    std::vector<std::string> a = args;
    a.insert(a.end(), {"--seed", seed});
    return run_fabricsim(a, fresh_dir(tag + name));
  };
  RunResult a = run("1", "_seed1a"), b = run("1", "_seed1b"), c = run("2", "_seed2");
  EXPECT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(c.exit_code, 0) << c.err;
  if (a.exit_code != 0 || b.exit_code != 0 || c.exit_code != 0) return c;
  EXPECT_EQ(a.results["rows"], b.results["rows"]);
  EXPECT_EQ(a.results["stats"], b.results["stats"]);
  EXPECT_GT(retry_totals(a.results).crc_errors, 0u);
  std::vector<uint64_t> ea, ec;
  for (const auto& [name, s] : a.results["stats"].items())
    if (s.contains("crc_errors")) ea.push_back(s["crc_errors"].get<uint64_t>());
  for (const auto& [name, s] : c.results["stats"].items())
    if (s.contains("crc_errors")) ec.push_back(s["crc_errors"].get<uint64_t>());
  EXPECT_NE(ea, ec);
  return c;
}

}  // namespace fabricsim::systest
