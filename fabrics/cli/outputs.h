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

// The per-row statistics of results.json: per row, its ports' statistics in natural order
// and its bottleneck; the whole run's ports and devices as structured lists.
nlohmann::json window_json(const Observation& obs, size_t window);

// results.json as written: `j` (results_json and what run adds) with its stats in natural
// order, each entry with its name, kind, device (and port index), and the per-row
// statistics: rows[i].stats for a size sweep, job_stats[i] for the jobs of a training run.
nlohmann::ordered_json structured_results(const nlohmann::json& j, const Observation& obs,
                                          bool training);

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
