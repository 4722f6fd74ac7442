// Results of a run: the nccl-tests style table and results.json.
#pragma once
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fabrics/systems/system_spec.h"
#include "models/collectives/sweep.h"

namespace fabricsim {

// 2: stats entries carry name, kind, device and port index and are written in natural
// order (devices in graph order, each one's ports by index); rows carry their own stats
// (training runs: job_stats).
constexpr int kResultsSchemaVersion = 2;

struct RowResult {
  uint64_t bytes = 0, count = 0;
  std::string type, redop, algorithm;
  double time_us = 0;
  double algbw_GBps = 0;  // bytes / time, GB/s = 1e9 B/s, per direction
  double busbw_GBps = 0;  // algbw x 2(n-1)/n (all-reduce)
  uint64_t wrong = 0;
  bool checked = false;
};

struct RunCost {
  double wall_s = 0;
  uint64_t kernel_events = 0;       // SC_METHOD activations
  uint64_t delta_cycles = 0;
  uint64_t transaction_hops = 0;    // simulated transactions x links crossed
  uint64_t packet_hops = 0;         // protocol packets x links crossed
  uint64_t payload_bytes_moved = 0; // payload bytes x links crossed
  uint64_t peak_rss_kib = 0;
  double auto_cost_cpu_s = -1;      // CPU seconds of auto's cost model (-1: no auto)
  // User CPU seconds of the simulation itself (the kernel's run: the packets or flows and
  // the schedules built as rows start), without loading, elaboration, the cost model and
  // the outputs written after it (-1: not measured).
  double simulate_cpu_s = -1;
  // What the checks estimated (fabrics/systems/estimate.h) and the limits they applied.
  double estimated_memory_bytes = 0, estimated_transaction_hops = 0, estimated_wall_s = 0;
  uint64_t memory_limit = 0, wall_limit_ps = 0;
};

// This process's peak resident set (KiB) and user CPU time (s), for RunCost.
uint64_t peak_rss_kib();
double user_cpu_s();

std::vector<RowResult> make_rows(const SystemSpec& spec, const std::vector<SweepRow>& rows);
void print_table(std::ostream& os, const SystemSpec& spec, const std::vector<RowResult>& rows);
void print_cost(std::ostream& os, const RunCost& cost);
// The rows as the published-figure comparison sees them (fabrics/systems/references.h).
std::vector<ComparedRow> compared_rows(const std::vector<RowResult>& rows);
// "# published: SOURCE" and a line per point: simulated vs published, error, tolerance band.
void print_published(std::ostream& os, const nlohmann::json& published);
nlohmann::json results_json(const SystemSpec& spec, const std::vector<RowResult>& rows,
                            const nlohmann::json& stats, const nlohmann::json& checks,
                            const RunCost& cost, const std::string& command_line);

}  // namespace fabricsim
