// The run's outputs beyond the table and results.json: per-row statistics, the tidy CSV
// tables, time series, the trace, progress. Options are parsed here so that the command
// line (app.cpp) only forwards them.
#pragma once
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fabrics/cli/results.h"
#include "fabrics/sim/observe.h"
#include "models/core/stats.h"

namespace fabricsim {

struct OutputOptions {
  ObserveOptions observe;
  std::optional<std::string> trace;  // --trace FILE: Chrome trace-event JSON
  double progress_s = 0;             // --progress[=SECONDS]: plain lines; 0: terminal only
};

// If args[i] is one of the output options of `run`, stores it (advancing i past its
// value) and returns true. Bad values throw InputError ("command line: --series: ...").
bool parse_output_option(const std::vector<std::string>& args, size_t& i, OutputOptions& o);

// The observation a run needs for its outputs (per-row statistics with --out, series,
// histograms, trace), attached to the system's ports and engine; nullptr when none is.
std::unique_ptr<Observation> make_observation(System& sys, const SystemSpec& spec,
                                              const OutputOptions& o, bool has_out);

// CSV: rows.csv (the table), ports.csv (one line per row and port), series.csv (with
// --series); `training_rows` replaces `rows` for training workloads.
void write_tables(const std::filesystem::path& dir, const std::vector<RowResult>& rows,
                  const nlohmann::json* training_rows,
                  const Observation& obs);

// results.json's text, as json_text of the whole tree would write it: `j` (results_json
// and what run adds, its "stats" an empty object) with the whole run's statistics in
// natural order (each device in graph order, then its ports; each entry with its name,
// kind, device and port index), and the per-row statistics: rows[i].stats for a size
// sweep, job_stats[i] for the jobs of a training run (each: label, span, bottleneck, its
// ports' and devices' statistics). The statistics are written one port at a time from
// `stats` and `obs`, never held as one tree (41,472 ports on NVL576: ~0.4 GiB as a tree).
std::string results_text(const nlohmann::json& j, const StatsRegistry& stats, uint64_t now_ps,
                         const Observation& obs, bool training);

// The energy of window `w` (docs/optical.md, "Energy"), in joules: every port's wire bits
// at its link type's energy_per_bit (links_J), the same bits at their device's
// energy_per_bit (devices_J), every device's static power over the window (static_J), and
// their sum (total_J).
nlohmann::json energy_json(const SystemSpec& spec, const Observation& obs, size_t w);

// Writes `text` to `path` through a temporary file and a rename, so that a reader never
// sees half a file. Throws InputError naming the path on failure.
void write_file(const std::filesystem::path& path, const std::string& text);

// The whole text of a file ("" if it cannot be read).
std::string read_file(const std::filesystem::path& path);

// A CSV field: quoted when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& s);

}  // namespace fabricsim
