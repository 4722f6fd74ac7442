#include "fabrics/cli/results.h"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "models/collectives/algorithms.h"
#include "models/core/units.h"

namespace fabricsim {

namespace {
bool has_redop(const std::string& c) {
  return c == "all_reduce" || c == "reduce_scatter" || c == "reduce";
}
std::string busbw_rule(const std::string& c) {
  if (c == "all_reduce") return "algbw x 2(n-1)/n";
  if (c == "broadcast" || c == "reduce" || c == "sendrecv") return "algbw x 1";
  return "algbw x (n-1)/n";
}
}  // namespace

std::vector<RowResult> make_rows(const SystemSpec& spec, const std::vector<SweepRow>& rows) {
  const int n = int(spec.ranks.size());
  // The factor depends on the collective only (also for algorithm: auto).
  const double factor = coll::busbw_factor(
      coll::algo_info(spec.workload.collective, coll::algorithms_for(spec.workload.collective).front()),
      n);
  std::vector<RowResult> out;
  for (const SweepRow& r : rows) {
    RowResult x;
    x.bytes = r.bytes;
    x.count = r.count;
    x.type = spec.workload.datatype;
    x.redop = has_redop(spec.workload.collective) ? "sum" : "none";
    x.algorithm = r.algorithm;
    const double t_s = double(r.end_ps - r.start_ps) * 1e-12;
    x.time_us = t_s * 1e6;
    x.algbw_GBps = t_s > 0 ? double(r.bytes) / t_s / 1e9 : 0.0;
    x.busbw_GBps = x.algbw_GBps * factor;
    x.wrong = r.wrong;
    x.checked = r.checked;
    out.push_back(x);
  }
  return out;
}

void print_table(std::ostream& os, const SystemSpec& spec, const std::vector<RowResult>& rows) {
  char buf[256];
  os << "# fabricsim: " << spec.name << ", " << spec.workload.algorithm << " "
     << spec.workload.collective << ", " << spec.ranks.size() << " ranks, seed " << spec.seed
     << "\n";
  if (spec.workload.channels_auto) os << "# " << spec.workload.channels_rule << "\n";
  os << "# algbw = size / time; busbw = " << busbw_rule(spec.workload.collective)
     << " (nccl-tests); GB/s = 1e9 B/s, per direction\n#\n";
  std::snprintf(buf, sizeof buf, "# %12s %12s %8s %6s %10s %12s %9s %9s %7s\n", "size", "count",
                "type", "redop", "algo", "time", "algbw", "busbw", "#wrong");
  os << buf;
  std::snprintf(buf, sizeof buf, "# %12s %12s %8s %6s %10s %12s %9s %9s %7s\n", "(B)",
                "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "");
  os << buf;
  double sum_busbw = 0;
  for (const RowResult& r : rows) {
    std::snprintf(buf, sizeof buf, "  %12llu %12llu %8s %6s %10s %12.2f %9.2f %9.2f %7s\n",
                  (unsigned long long)r.bytes, (unsigned long long)r.count, r.type.c_str(),
                  r.redop.c_str(), r.algorithm.c_str(), r.time_us, r.algbw_GBps, r.busbw_GBps,
                  r.checked ? std::to_string(r.wrong).c_str() : "N/A");
    os << buf;
    sum_busbw += r.busbw_GBps;
  }
  if (!rows.empty()) {
    std::snprintf(buf, sizeof buf, "# Avg bus bandwidth    : %.2f GB/s\n",
                  sum_busbw / double(rows.size()));
    os << buf;
  }
}

uint64_t peak_rss_kib() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return uint64_t(ru.ru_maxrss);
}

double user_cpu_s() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_utime.tv_sec) + 1e-6 * double(ru.ru_utime.tv_usec);
}

void print_cost(std::ostream& os, const RunCost& c) {
  char buf[512];
  const double w = c.wall_s > 0 ? c.wall_s : 1e-9;
  std::snprintf(buf, sizeof buf,
                "# run cost: wall %.2f s, %llu kernel events, %llu transaction-hops "
                "(%.2f M/s), %llu packet-hops (%.2f M/s), %.2f GB simulated payload per wall "
                "second, peak RSS %.1f MiB\n",
                c.wall_s, (unsigned long long)c.kernel_events,
                (unsigned long long)c.transaction_hops, double(c.transaction_hops) / w / 1e6,
                (unsigned long long)c.packet_hops, double(c.packet_hops) / w / 1e6,
                double(c.payload_bytes_moved) / w / 1e9, double(c.peak_rss_kib) / 1024.0);
  std::string line = buf;
  if (c.auto_cost_cpu_s >= 0) {  // before the newline: one run-cost line
    std::snprintf(buf, sizeof buf, ", auto cost model %.2f s CPU", c.auto_cost_cpu_s);
    line.insert(line.size() - 1, buf);
  }
  if (c.simulate_cpu_s >= 0) {
    std::snprintf(buf, sizeof buf, ", simulation %.2f s CPU", c.simulate_cpu_s);
    line.insert(line.size() - 1, buf);
  }
  os << line;
}

std::vector<ComparedRow> compared_rows(const std::vector<RowResult>& rows) {
  std::vector<ComparedRow> out;
  for (const RowResult& r : rows) out.push_back({r.bytes, r.algorithm, r.busbw_GBps, r.time_us});
  return out;
}

void print_published(std::ostream& os, const nlohmann::json& published) {
  char line[256];
  for (const nlohmann::json& c : published) {
    // Only points that a row of this run matches (the JSON keeps them all).
    const auto matched = [](const nlohmann::json& p) {
      return (p.contains("simulated_busbw_GBps") && !p["simulated_busbw_GBps"].is_null()) ||
             (p.contains("simulated_time_us") && !p["simulated_time_us"].is_null());
    };
    if (std::none_of(c["points"].begin(), c["points"].end(), matched)) continue;
    os << "# published: " << c["source"].get<std::string>()
       << (c["algorithm"].is_null() ? "" : " (" + c["algorithm"].get<std::string>() + " rows)") << "\n";
    for (const nlohmann::json& p : c["points"]) {
      const std::string size = format_bytes(p["size_bytes"].get<uint64_t>());
      for (const auto& [key, sim, error, unit] :
           {std::tuple{"busbw_GBps", "simulated_busbw_GBps", "busbw_error_pct", "GB/s busbw"},
            std::tuple{"time_us", "simulated_time_us", "time_error_pct", "us"}}) {
        if (!p.contains(key)) continue;
        if (p[sim].is_null()) continue;
        {
          const double e = p[error].get<double>();
          std::string band;
          if (!c["tolerance_pct"].is_null()) {
            const double t = c["tolerance_pct"].get<double>();
            char b[64];
            std::snprintf(b, sizeof b, ", %s %g%%", p.value("within_tolerance", true) ? "within" : "OUTSIDE", t);
            band = b;
          }
          std::snprintf(line, sizeof line, "#   %8s  simulated %10.2f vs published %10.2f %s (%+.1f%%%s)\n",
                        size.c_str(), p[sim].get<double>(), p[key].get<double>(), unit, e, band.c_str());
        }
        os << line;
      }
    }
  }
}

nlohmann::json results_json(const SystemSpec& spec, const std::vector<RowResult>& rows,
                            const nlohmann::json& stats, const nlohmann::json& checks,
                            const RunCost& c, const std::string& command_line) {
  nlohmann::json j;
  j["schema_version"] = kResultsSchemaVersion;
  j["fabricsim_version"] = FABRICSIM_VERSION;
  j["config_file"] = spec.file;
  j["command_line"] = command_line;
  j["seed"] = spec.seed;
  j["resolved_config"] = spec.resolved;
  j["collective"] = spec.workload.collective;
  j["algorithm"] = spec.workload.algorithm;
  j["units"] = {{"time", "us"},
                {"algbw", "GB/s (1e9 B/s), per direction"},
                {"busbw", "GB/s (1e9 B/s), per direction, " + busbw_rule(spec.workload.collective)},
                {"ps", "picoseconds"},
                {"bytes", "bytes"}};
  nlohmann::json jr = nlohmann::json::array();
  for (const RowResult& r : rows) {
    nlohmann::json x = {{"size_bytes", r.bytes},     {"count", r.count},
                        {"type", r.type},            {"redop", r.redop},
                        {"algorithm", r.algorithm},  {"time_us", r.time_us},
                        {"algbw_GBps", r.algbw_GBps}, {"busbw_GBps", r.busbw_GBps}};
    if (r.checked) x["wrong"] = r.wrong;
    jr.push_back(x);
  }
  j["rows"] = jr;
  j["published"] = compare_published(spec.published, spec.workload.collective, compared_rows(rows));
  nlohmann::json ja = nlohmann::json::array();
  for (const Assumption& a : spec.assumptions) ja.push_back({{"key", a.key}, {"why", a.why}});
  j["assumptions"] = ja;
  j["checks"] = checks;
  j["stats"] = stats;
  // Everything that varies between identical runs lives here and only here.
  j["run_cost"] = {{"wall_s", c.wall_s},
                   {"kernel_events", c.kernel_events},
                   {"delta_cycles", c.delta_cycles},
                   {"transaction_hops", c.transaction_hops},
                   {"transaction_hops_per_s", double(c.transaction_hops) / (c.wall_s > 0 ? c.wall_s : 1e-9)},
                   {"packet_hops", c.packet_hops},
                   {"packet_hops_per_s", double(c.packet_hops) / (c.wall_s > 0 ? c.wall_s : 1e-9)},
                   {"payload_bytes_moved", c.payload_bytes_moved},
                   {"simulated_bytes_per_wall_s",
                    double(c.payload_bytes_moved) / (c.wall_s > 0 ? c.wall_s : 1e-9)},
                   {"peak_rss_kib", c.peak_rss_kib},
                   {"auto_cost_cpu_s", c.auto_cost_cpu_s},
                   {"simulate_cpu_s", c.simulate_cpu_s},
                   {"packet_hops_per_simulate_cpu_s",
                    c.simulate_cpu_s > 0 ? double(c.packet_hops) / c.simulate_cpu_s : 0.0},
                   {"estimate",
                    {{"memory_bytes", c.estimated_memory_bytes},
                     {"transaction_hops", c.estimated_transaction_hops},
                     {"wall_s", c.estimated_wall_s}}},
                   {"memory_limit_bytes", c.memory_limit},
                   {"wall_limit_s", double(c.wall_limit_ps) * 1e-12}};
  return j;
}

}  // namespace fabricsim
