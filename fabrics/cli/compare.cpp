#include "fabrics/cli/compare.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "fabrics/cli/output.h"
#include "fabrics/cli/outputs.h"
#include "fabrics/cli/procs.h"
#include "fabrics/config/document.h"
#include "fabrics/systems/inventory.h"
#include "fabrics/systems/system_spec.h"
#include "fabrics/workloads/workload.h"
#include "models/core/errors.h"
#include "models/core/run_control.h"

namespace fabricsim {

using cfg::fail;

namespace {

const std::vector<std::string> kTopKeys{"version", "name", "sweep", "set", "systems"};
const std::vector<std::string> kSystemKeys{"config", "label", "set"};

void check_keys(const std::string& file, const YAML::Node& map, const std::string& path,
                const std::vector<std::string>& known) {
  for (const auto& kv : map) {
    const std::string k = cfg::key_name(file, kv.first, path);
    if (std::find(known.begin(), known.end(), k) == known.end()) {
      const std::string near = nearest(k, known);
      fail(file, kv.first, cfg::join_key(path, k), "unknown key '" + k + "'",
           (near.empty() ? "" : "did you mean '" + near + "'? ") + "known keys: " +
               join_list(known));
    }
  }
}

// A list of "key.path=value" strings.
std::vector<std::string> set_list(const std::string& file, const YAML::Node& n,
                                  const std::string& path) {
  std::vector<std::string> out;
  if (!n.IsDefined() || n.IsNull()) return out;
  if (!n.IsSequence())
    fail(file, n, path, "expected a list of key.path=value strings, found " + cfg::describe_node(n),
         "e.g. set: [\"simulation.aggregate_bytes=0B\"]");
  for (size_t i = 0; i < n.size(); ++i) {
    const std::string p = path + "[" + std::to_string(i) + "]";
    const std::string s =
        cfg::scalar(file, n[i], p, "a key.path=value string", "e.g. \"simulation.aggregate_bytes=0B\"");
    if (s.find('=') == std::string::npos || s.front() == '=')
      fail(file, n[i], p, "'" + s + "' is not key.path=value",
           "e.g. \"simulation.aggregate_bytes=0B\"");
    out.push_back(s);
  }
  return out;
}

// Every key a workload section may hold: the union of the workload types' parameters.
std::vector<std::string> workload_keys() {
  std::vector<std::string> keys{"type"};
  for (const WorkloadKind& w : workloads().entries())
    for (const ParamSpec& p : w.params)
      if (std::find(keys.begin(), keys.end(), p.key) == keys.end()) keys.push_back(p.key);
  return keys;
}

constexpr size_t kMaxLabel = 64;

// A label names a directory under --out/systems: no separator, no "..", nothing hidden.
bool safe_label(const std::string& s) {
  if (s.empty() || s.size() > kMaxLabel || !std::isalnum(static_cast<unsigned char>(s[0])))
    return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '+' &&
        c != '-')
      return false;
  return true;
}

// The time the run's optical circuit switch reconfigurations stopped transmitters, in
// picoseconds: per played ocs_reconfigure event, from its `at` to the new map lit (the
// drain plus the dark time). 0 without reconfigurations (every electrical fabric).
uint64_t reconfiguration_ps(const nlohmann::json& results) {
  uint64_t ps = 0;
  if (!results.contains("faults") || !results["faults"].contains("events")) return 0;
  for (const nlohmann::json& e : results["faults"]["events"])
    if (e.contains("dark_until_ps") && e.value("played", false))
      ps += e["dark_until_ps"].get<uint64_t>() - e["at_ps"].get<uint64_t>();
  return ps;
}

}  // namespace

bool is_compare_file(const std::string& file) {
  try {
    const YAML::Node root = cfg::load_yaml_file(file);
    return root["systems"].IsDefined() && !root["link_types"].IsDefined();
  } catch (const InputError&) {
    return false;
  }
}

CompareSpec load_compare(const std::string& file, const std::vector<std::string>& extra_sets) {
  YAML::Node root = cfg::load_yaml_file(file);
  // A system config given to compare: say so, instead of calling its keys unknown.
  for (const char* key : {"link_types", "device_types", "topology"})
    for (const auto& kv : root)
      if (kv.first.IsScalar() && kv.first.Scalar() == key)
        fail(file, kv.first, key, "this is a system config, not a compare file",
             "run it with `fabricsim run " + file + "`, or list it in a compare file: systems: "
             "[{config: " + std::filesystem::path(file).filename().string() + ", label: A}]");
  check_keys(file, root, "", kTopKeys);
  CompareSpec spec;
  spec.file = file;
  YAML::Node v = root["version"];
  if (v.IsDefined() && !(v.IsScalar() && v.Scalar() == "1"))
    fail(file, v, "version", "unsupported version " + cfg::describe_node(v),
         "only version 1 exists");
  spec.name = root["name"].IsDefined()
                  ? cfg::scalar(file, root["name"], "name", "a name", "e.g. name: scaleup")
                  : std::filesystem::path(file).stem().string();
  // sweep: {workload key: value} -> --set workload.key=value for every system.
  std::vector<std::string> common;
  YAML::Node sweep = root["sweep"];
  if (sweep.IsDefined() && !sweep.IsNull()) {
    if (!sweep.IsMap())
      fail(file, sweep, "sweep",
           "expected a map of workload keys, found " + cfg::describe_node(sweep),
           "e.g. sweep: {min_bytes: 1MiB, max_bytes: 1GiB}");
    const std::vector<std::string> keys = workload_keys();
    check_keys(file, sweep, "sweep", keys);
    for (const auto& kv : sweep) {
      const std::string k = kv.first.Scalar();
      common.push_back("workload." + k + "=" +
                       cfg::scalar(file, kv.second, "sweep." + k, "a value", "e.g. min_bytes: 1MiB"));
    }
  }
  const std::vector<std::string> top_sets = set_list(file, root["set"], "set");
  common.insert(common.end(), top_sets.begin(), top_sets.end());

  YAML::Node systems = root["systems"];
  if (!systems.IsDefined() || systems.IsNull())
    fail(file, root, "systems", "missing required key 'systems'",
         "list the systems: systems: [{config: dgx_h100.yaml, label: NVLink4}]");
  if (!systems.IsSequence() || systems.size() == 0)
    fail(file, systems, "systems",
         "expected a non-empty list of systems, found " + cfg::describe_node(systems),
         "e.g. systems: [{config: dgx_h100.yaml, label: NVLink4}]");
  const std::filesystem::path base = std::filesystem::path(file).parent_path();
  std::set<std::string> labels;
  for (size_t i = 0; i < systems.size(); ++i) {
    const YAML::Node s = systems[i];
    const std::string path = "systems[" + std::to_string(i) + "]";
    if (!s.IsMap())
      fail(file, s, path, "expected a map {config, label, set}, found " + cfg::describe_node(s),
           "e.g. - {config: dgx_h100.yaml, label: NVLink4}");
    check_keys(file, s, path, kSystemKeys);
    if (!s["config"].IsDefined() || s["config"].IsNull())
      fail(file, s, path, "missing required key 'config'",
           "give the config file, relative to this file's directory");
    CompareSystem cs;
    const std::string rel = cfg::scalar(file, s["config"], path + ".config", "a config file path",
                                   "e.g. config: dgx_h100.yaml");
    const std::filesystem::path p =
        std::filesystem::path(rel).is_absolute() ? std::filesystem::path(rel) : base / rel;
    cs.config = p.lexically_normal().string();
    std::error_code ec;
    if (!std::filesystem::is_regular_file(p, ec))
      fail(file, s["config"], path + ".config", "cannot read config '" + cs.config + "'",
           "paths are relative to the directory of " + file);
    cs.label = s["label"].IsDefined()
                   ? cfg::scalar(file, s["label"], path + ".label", "a label", "e.g. label: NVLink4")
                   : p.stem().string();
    if (!safe_label(cs.label))
      fail(file, s["label"].IsDefined() ? s["label"] : s["config"], path + ".label",
           "label '" + cs.label + "' is not a plain name",
           "a label is a table column and a directory name under the output directory: 1 to " +
               std::to_string(kMaxLabel) +
               " letters, digits, '.', '_', '+' or '-', starting with a letter or digit, e.g. "
               "NVLink4-H100");
    if (!labels.insert(cs.label).second)
      fail(file, s["label"].IsDefined() ? s["label"] : s, path + ".label",
           "label '" + cs.label + "' is used twice", "give each system its own label");
    cs.where = cfg::where(file, s);
    cs.sets = common;
    const std::vector<std::string> own = set_list(file, s["set"], path + ".set");
    cs.sets.insert(cs.sets.end(), own.begin(), own.end());
    cs.sets.insert(cs.sets.end(), extra_sets.begin(), extra_sets.end());
    // The config itself, with every override, is checked here, before anything runs.
    try {
      cs.inventory = inventory_json(count_inventory(load_system(cs.config, cs.sets, std::nullopt)));
    } catch (const InputError& e) {
      throw InputError(std::string(e.what()) + " [system '" + cs.label + "' of " + cs.where + "]");
    }
    spec.systems.push_back(cs);
  }
  return spec;
}

int run_compare(const CompareSpec& spec, const std::optional<std::string>& out_dir, bool quiet,
                const std::string& command_line, int jobs) {
  namespace fs = std::filesystem;
  fs::path dir;
  bool temporary = false;
  std::error_code ec;
  if (out_dir) {
    dir = *out_dir;
    fs::create_directories(dir / "systems", ec);
    if (ec) throw InputError("--out " + *out_dir + ": cannot create directory: " + ec.message());
  } else {
    char tmpl[] = "/tmp/fabricsim_compare.XXXXXX";
    if (!::mkdtemp(tmpl)) throw InputError("compare: cannot create a temporary directory in /tmp");
    dir = tmpl;
    temporary = true;
    fs::create_directories(dir / "systems", ec);
  }
  struct Cleanup {
    fs::path d;
    bool on;
    ~Cleanup() {
      std::error_code e;
      if (on) fs::remove_all(d, e);
    }
  } cleanup{dir, temporary};

  // Every system in its own process (`run CONFIG --set ... --out DIR --quiet`), `jobs` at
  // once; failures are reported in the file's order once all have ended.
  std::vector<Child> children;
  for (const CompareSystem& s : spec.systems) {
    Child c;
    c.args = {"run", s.config};
    for (const std::string& a : s.sets) c.args.insert(c.args.end(), {"--set", a});
    c.args.insert(c.args.end(), {"--out", (dir / "systems" / s.label).string(), "--quiet"});
    c.stderr_file = (dir / "systems" / (s.label + ".stderr")).string();
    children.push_back(c);
  }
  std::vector<int> codes(children.size(), 0);
  run_children(
      children, jobs,
      [&](size_t i) {
        if (!quiet)
          std::cerr << "# compare: running " << spec.systems[i].label << " ("
                    << spec.systems[i].config << ")\n";
      },
      [&](size_t i, int rc) { codes[i] = rc; });
  // A stop request went on to the children (run_children): they stopped cleanly, so do we.
  for (size_t i = 0; i < codes.size(); ++i)
    if (codes[i] == kExitInterrupted || stop_requested())
      throw Interrupted(std::string("stopped by ") +
                        stop_reason_name(stop_requested() ? stop_reason() : StopReason::kTerminate) +
                        " while system '" + spec.systems[i].label + "' ran; finished systems are in " +
                        (out_dir ? (dir / "systems").string() : std::string("no directory")) +
                        ", no merged results.json was written");
  std::vector<nlohmann::json> results;
  for (size_t i = 0; i < spec.systems.size(); ++i) {
    const CompareSystem& s = spec.systems[i];
    const fs::path sd = dir / "systems" / s.label;
    const fs::path err = dir / "systems" / (s.label + ".stderr");
    // Labels were checked to be plain names; nothing a child writes may leave `dir`.
    FABRICSIM_ASSERT(safe_label(s.label) && sd.parent_path() == dir / "systems",
                     "compare: label '" + s.label + "' is not a plain name");
    const int rc = codes[i];
    if (rc != 0) {
      std::string e = read_file(err.string());
      while (!e.empty() && e.back() == '\n') e.pop_back();
      const std::string msg = "system '" + s.label + "' (" + s.config + ", listed at " + s.where +
                              ") failed with exit " + std::to_string(rc) + ": " + e;
      if (rc == kExitBadInput) throw InputError(msg);
      throw InternalError(msg);
    }
    results.push_back(nlohmann::json::parse(read_file((sd / "results.json").string())));
  }

  // Sizes in the order they first appear.
  std::vector<uint64_t> sizes;
  for (const nlohmann::json& r : results)
    for (const nlohmann::json& row : r["rows"]) {
      const uint64_t b = row["size_bytes"].get<uint64_t>();
      if (std::find(sizes.begin(), sizes.end(), b) == sizes.end()) sizes.push_back(b);
    }
  std::sort(sizes.begin(), sizes.end());
  auto row_at = [](const nlohmann::json& r, uint64_t b) -> const nlohmann::json* {
    for (const nlohmann::json& row : r["rows"])
      if (row["size_bytes"].get<uint64_t>() == b) return &row;
    return nullptr;
  };

  nlohmann::json table = nlohmann::json::array();
  for (uint64_t b : sizes) {
    nlohmann::json row = {{"size_bytes", b}};
    for (size_t i = 0; i < results.size(); ++i)
      if (const nlohmann::json* x = row_at(results[i], b)) {
        const std::string& l = spec.systems[i].label;
        row["busbw_GBps"][l] = (*x)["busbw_GBps"];
        row["time_us"][l] = (*x)["time_us"];
        if (x->contains("energy")) row["energy_J"][l] = (*x)["energy"]["total_J"];
      }
    table.push_back(row);
  }

  if (!quiet) {
    std::ostringstream os;
    char buf[512];
    os << "# fabricsim compare: " << spec.name << " (" << spec.file << "), " << results.size()
       << " systems\n";
    os << "# busbw in GB/s (1e9 B/s), per direction, with each collective's nccl-tests factor; "
          "ceiling: analytic bound (docs/scaleup.md)\n#\n";
    std::vector<size_t> width;
    for (const CompareSystem& s : spec.systems) width.push_back(std::max<size_t>(10, s.label.size()));
    const int name_width = int(*std::max_element(width.begin(), width.end()));
    // One table: a column per system, a row per size, `get` of each system's row at that
    // size printed with `fmt` ("-" where the system has no such row).
    auto side_by_side = [&](const char* title, const char* unit_name, const char* fmt,
                            double (*get)(const nlohmann::json&)) {
      if (title) os << "# " << title << "\n";
      std::string h = "# ", u = "# ";
      std::snprintf(buf, sizeof buf, "%12s", "size");
      h += buf;
      std::snprintf(buf, sizeof buf, "%12s", "(B)");
      u += buf;
      for (size_t i = 0; i < results.size(); ++i) {
        std::snprintf(buf, sizeof buf, "  %*s", int(width[i]), spec.systems[i].label.c_str());
        h += buf;
        std::snprintf(buf, sizeof buf, "  %*s", int(width[i]), unit_name);
        u += buf;
      }
      os << h << "\n" << u << "\n";
      for (uint64_t b : sizes) {
        std::snprintf(buf, sizeof buf, "  %12llu", (unsigned long long)b);
        os << buf;
        for (size_t i = 0; i < results.size(); ++i) {
          const nlohmann::json* x = row_at(results[i], b);
          char num[64];
          if (x) std::snprintf(num, sizeof num, fmt, get(*x));
          std::snprintf(buf, sizeof buf, "  %*s", int(width[i]), x ? num : "-");
          os << buf;
        }
        os << "\n";
      }
    };
    side_by_side(nullptr, "busbw", "%.2f",
                 [](const nlohmann::json& row) { return row["busbw_GBps"].get<double>(); });
    std::snprintf(buf, sizeof buf, "# %12s", "ceiling");
    os << buf;
    for (size_t i = 0; i < results.size(); ++i) {
      std::snprintf(buf, sizeof buf, "  %*.2f", int(width[i]),
                    results[i]["ceiling"]["busbw_GBps"].get<double>());
      os << buf;
    }
    os << "\n#\n";
    // The same sizes: time and energy per row, side by side.
    side_by_side("time of each size in us (simulated)", "time_us", "%.2f",
                 [](const nlohmann::json& row) { return row["time_us"].get<double>(); });
    os << "#\n";
    side_by_side("energy of each size in J (rows[i].energy.total_J: links + devices + static)",
                 "energy_J", "%.4g", [](const nlohmann::json& row) {
                   return row.contains("energy") ? row["energy"]["total_J"].get<double>() : 0.0;
                 });
    os << "#\n";
    // The cost proxy and the reconfiguration time, one line per system.
    os << "# cost proxy (counted from the built system, docs/optical_vs_electrical.md) and "
          "reconfiguration\n";
    std::snprintf(buf, sizeof buf, "# %-*s  %8s  %8s  %6s  %8s  %9s  %9s  %8s  %12s\n",
                  name_width,
                  "system", "switches", "sw_ports", "nics", "ocs", "ocs_ports", "opt_links",
                  "xcvrs", "reconfig_us");
    os << buf;
    for (size_t i = 0; i < results.size(); ++i) {
      const nlohmann::json& inv = spec.systems[i].inventory;
      std::snprintf(buf, sizeof buf,
                    "  %-*s  %8lld  %8lld  %6lld  %8lld  %9lld  %9lld  %8lld  %12.3f\n",
                    name_width, spec.systems[i].label.c_str(), (long long)inv["packet_switches"].get<int64_t>(),
                    (long long)inv["switch_ports"].get<int64_t>(),
                    (long long)inv["nics"].get<int64_t>(),
                    (long long)inv["circuit_switches"].get<int64_t>(),
                    (long long)inv["ocs_ports"].get<int64_t>(),
                    (long long)inv["optical_links"].get<int64_t>(),
                    (long long)inv["transceivers"].get<int64_t>(),
                    double(reconfiguration_ps(results[i])) * 1e-6);
      os << buf;
    }
    os << "#\n";
    for (size_t i = 0; i < results.size(); ++i) {
      const nlohmann::json& r = results[i];
      os << "# " << spec.systems[i].label << ": " << spec.systems[i].config << " ("
         << r["resolved_config"]["name"].get<std::string>() << ", "
         << r["algorithm"].get<std::string>() << " " << r["collective"].get<std::string>() << ", "
         << r["rows"].size() << " sizes); ceiling limited by "
         << r["ceiling"]["limited_by"].get<std::string>() << "\n";
    }
    std::cout << os.str();
  }

  if (out_dir) {
    nlohmann::json j;
    j["schema_version"] = 2;  // 2: each system's results are results.json 2
    j["kind"] = "compare";
    j["fabricsim_version"] = FABRICSIM_VERSION;
    j["compare_file"] = spec.file;
    j["name"] = spec.name;
    j["command_line"] = command_line;
    j["units"] = {{"busbw_GBps", "GB/s (1e9 B/s), per direction, nccl-tests busbw"},
                  {"time_us", "microseconds of simulated time"},
                  {"energy_J", "joules (rows[i].energy.total_J)"},
                  {"reconfiguration_ps",
                   "picoseconds: per ocs_reconfigure event, at to the new map lit"},
                  {"inventory", "counts (docs/optical_vs_electrical.md, counting rules)"}};
    nlohmann::json sys = nlohmann::json::array();
    for (size_t i = 0; i < results.size(); ++i) {
      const CompareSystem& s = spec.systems[i];
      sys.push_back({{"label", s.label},
                     {"config", s.config},
                     {"sets", s.sets},
                     {"ceiling", results[i]["ceiling"]},
                     {"inventory", s.inventory},
                     {"reconfiguration_ps", reconfiguration_ps(results[i])},
                     {"rows", results[i]["rows"]},
                     {"results", results[i]}});
    }
    j["systems"] = sys;
    j["table"] = table;
    const fs::path file = dir / "results.json";
    write_file_atomic(file.string(), json_text(j));
    if (!quiet) std::cout << "# results: " << file.string() << "\n";
  }
  return kExitOk;
}

}  // namespace fabricsim
