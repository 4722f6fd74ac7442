// `fabricsim compare FILE`: the same workload sweep on several systems, one table side by
// side. A SystemC kernel can be elaborated only once per process, so every system runs in
// its own child process (this binary, /proc/self/exe, `run CONFIG --set ... --out DIR
// --quiet`); the parent validates everything first, then merges the children's
// results.json files.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fabricsim {

struct CompareSystem {
  std::string label;              // column name
  std::string config;             // path, resolved against the compare file's directory
  std::vector<std::string> sets;  // --set assignments for this system (sweep, set, CLI)
  std::string where;              // "FILE:LINE:COL" of its entry, for messages
  nlohmann::json inventory;       // the built system counted (fabrics/systems/inventory.h)
};

struct CompareSpec {
  std::string file;
  std::string name;
  std::vector<CompareSystem> systems;
};

// True if `file` is a compare file: a YAML map with `systems` and no `link_types` (so
// `fabricsim check` validates it as one). False for anything else, including unreadable
// files, which the config loader then reports.
bool is_compare_file(const std::string& file);

// Parses and validates a compare file; `extra_sets` (command-line --set) are applied to
// every system after the file's. Every listed config is loaded and checked as
// `fabricsim check` would. Bad input throws InputError ("file:line:col: key: problem;
// hint").
CompareSpec load_compare(const std::string& file, const std::vector<std::string>& extra_sets);

// Runs every system (`jobs` processes at once), prints the side-by-side table (unless quiet) and, with out_dir,
// writes out_dir/results.json (the merged results) and keeps each system's own
// results.json under out_dir/systems/. Returns the exit code.
int run_compare(const CompareSpec& spec, const std::optional<std::string>& out_dir, bool quiet,
                const std::string& command_line, int jobs = 1);

}  // namespace fabricsim
