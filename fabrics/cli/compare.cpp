#include "fabrics/cli/compare.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "fabrics/cli/outputs.h"
#include "fabrics/cli/procs.h"
#include "fabrics/config/document.h"
#include "fabrics/systems/system_spec.h"
#include "fabrics/workloads/workload.h"
#include "models/core/errors.h"

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
    if (cs.label.empty() || cs.label.find_first_of(" \t") != std::string::npos)
      fail(file, s["label"], path + ".label", "label '" + cs.label + "' is empty or has spaces",
           "labels are table column names: e.g. NVLink4-H100");
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
      (void)load_system(cs.config, cs.sets, std::nullopt);
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
  std::vector<nlohmann::json> results;
  for (size_t i = 0; i < spec.systems.size(); ++i) {
    const CompareSystem& s = spec.systems[i];
    const fs::path sd = dir / "systems" / s.label;
    const fs::path err = dir / "systems" / (s.label + ".stderr");
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
  auto busbw_at = [](const nlohmann::json& r, uint64_t b) -> const nlohmann::json* {
    for (const nlohmann::json& row : r["rows"])
      if (row["size_bytes"].get<uint64_t>() == b) return &row["busbw_GBps"];
    return nullptr;
  };

  nlohmann::json table = nlohmann::json::array();
  for (uint64_t b : sizes) {
    nlohmann::json row = {{"size_bytes", b}};
    for (size_t i = 0; i < results.size(); ++i)
      if (const nlohmann::json* x = busbw_at(results[i], b))
        row["busbw_GBps"][spec.systems[i].label] = *x;
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
    std::string head = "# ", unit = "# ";
    std::snprintf(buf, sizeof buf, "%12s", "size");
    head += buf;
    std::snprintf(buf, sizeof buf, "%12s", "(B)");
    unit += buf;
    for (const CompareSystem& s : spec.systems) {
      width.push_back(std::max<size_t>(10, s.label.size()));
      std::snprintf(buf, sizeof buf, "  %*s", int(width.back()), s.label.c_str());
      head += buf;
      std::snprintf(buf, sizeof buf, "  %*s", int(width.back()), "busbw");
      unit += buf;
    }
    os << head << "\n" << unit << "\n";
    for (uint64_t b : sizes) {
      std::snprintf(buf, sizeof buf, "  %12llu", (unsigned long long)b);
      os << buf;
      for (size_t i = 0; i < results.size(); ++i) {
        const nlohmann::json* x = busbw_at(results[i], b);
        if (x)
          std::snprintf(buf, sizeof buf, "  %*.2f", int(width[i]), x->get<double>());
        else
          std::snprintf(buf, sizeof buf, "  %*s", int(width[i]), "-");
        os << buf;
      }
      os << "\n";
    }
    std::snprintf(buf, sizeof buf, "# %12s", "ceiling");
    os << buf;
    for (size_t i = 0; i < results.size(); ++i) {
      std::snprintf(buf, sizeof buf, "  %*.2f", int(width[i]),
                    results[i]["ceiling"]["busbw_GBps"].get<double>());
      os << buf;
    }
    os << "\n#\n";
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
    j["units"] = {{"busbw_GBps", "GB/s (1e9 B/s), per direction, nccl-tests busbw"}};
    nlohmann::json sys = nlohmann::json::array();
    for (size_t i = 0; i < results.size(); ++i) {
      const CompareSystem& s = spec.systems[i];
      sys.push_back({{"label", s.label},
                     {"config", s.config},
                     {"sets", s.sets},
                     {"ceiling", results[i]["ceiling"]},
                     {"rows", results[i]["rows"]},
                     {"results", results[i]}});
    }
    j["systems"] = sys;
    j["table"] = table;
    const fs::path file = dir / "results.json";
    std::ofstream f(file);
    f << j.dump(2) << "\n";
    if (!f) throw InputError("--out: cannot write " + file.string());
    if (!quiet) std::cout << "# results: " << file.string() << "\n";
  }
  return kExitOk;
}

}  // namespace fabricsim
