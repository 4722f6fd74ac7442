// Sweep files: a base config (or several) and the values to run it with, as a grid
// (cartesian product) and/or a zip (lists walked together), over any config key and over
// config files (the key `config`). Plain C++; every problem is an InputError located at
// the sweep file's line and column.
//
//   version: 1
//   name: speedup            # optional; default the file's stem
//   config: dgx_h100.yaml    # relative to this file; or swept as `config` in grid/zip
//   set: ["workload.max_bytes=4MiB"]           # applied to every point
//   grid:                                      # first key varies slowest
//     workload.algorithm: [ring, tree]
//     device_types.nvswitch3.speedup: [1.0, 2.0]
//   zip:                                       # equal lengths; crossed with the grid
//     workload.min_bytes: [1MiB, 4MiB]
//     workload.max_bytes: [1MiB, 4MiB]
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fabricsim {

struct SweepPoint {
  size_t index = 0;
  std::string id;      // "0003-1a2b3c4d": index and a hash of config + values (resume key)
  std::string config;  // resolved path
  std::vector<std::pair<std::string, std::string>> values;  // swept key -> value text
  std::vector<std::string> sets;                            // every --set of the point
};

struct SweepSpec {
  std::string file;
  std::string name;
  std::vector<std::string> keys;  // swept keys in column order ("config" if swept)
  std::vector<SweepPoint> points;
};

// Parses and validates a sweep file; `extra_sets` (command-line --set) apply to every
// point after the file's. Every point's config is loaded and checked before anything
// runs, so a bad value fails at once with its point named.
SweepSpec load_sweep(const std::string& file, const std::vector<std::string>& extra_sets);

// True if `file` is a sweep file (a YAML map with `grid` or `zip` and no `link_types`).
bool is_sweep_file(const std::string& file);

}  // namespace fabricsim
