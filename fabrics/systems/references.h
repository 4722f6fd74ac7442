// The `published:` and `assumptions:` sections of a config: what a design review compares
// the run against, and which parameters are the modeller's guesses rather than facts.
//
//   published:                       # measured figures of the real system, with a source
//     - source: "nccl-tests on DGX H100, ring all-reduce (NVIDIA/nccl-tests#212)"
//       collective: all_reduce       # what was measured: only runs of it compare
//       algorithm: ring              # optional: only rows of this algorithm compare
//       tolerance: 5%                # optional: the band a row must fall in
//       busbw_GBps: {8GiB: 367.5}    # size -> busbw, and/or
//       time_us: {1MiB: 27.76}       # size -> time
//   assumptions:                     # key path -> why it is an assumption
//     device_types.nvswitch3.speedup: "not public; ..."
//
// Rows of a run of the curve's collective are matched to points by size (and algorithm
// when given); results.json gets each
// point with the simulated value and the error, the report plots and tabulates them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

namespace fabricsim {

struct PublishedPoint {
  uint64_t bytes = 0;
  double busbw_GBps = -1;  // < 0: not given
  double time_us = -1;     // < 0: not given
};
struct PublishedCurve {
  std::string source;
  std::string collective;    // nccl-tests name: all_reduce, all_gather, ...
  std::string algorithm;     // empty: any
  double tolerance_pct = 0;  // 0: none stated
  std::vector<PublishedPoint> points;  // by size
};
struct Assumption {
  std::string key;  // a key path of the resolved config
  std::string why;
};

// Parses the sections (absent or null: none). Assumptions name key paths that must exist
// in `resolved` (the resolved config): a typo is a located error with the nearest key.
std::vector<PublishedCurve> parse_published(const std::string& file, const YAML::Node& n);
std::vector<Assumption> parse_assumptions(const std::string& file, const YAML::Node& n,
                                          const nlohmann::json& resolved);

// One simulated row as the comparison sees it.
struct ComparedRow {
  uint64_t bytes = 0;
  std::string algorithm;
  double busbw_GBps = 0, time_us = 0;
};
// results.json's `published`: every curve with, per point, the published and simulated
// values and the error (simulated / published - 1, in %); a point with no row of its size
// (and algorithm) has null simulated values.
// Curves of another collective than `collective` (the run's) match no row.
nlohmann::json compare_published(const std::vector<PublishedCurve>& curves,
                                 const std::string& collective,
                                 const std::vector<ComparedRow>& rows);

}  // namespace fabricsim
