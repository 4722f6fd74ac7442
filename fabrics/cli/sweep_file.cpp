#include "fabrics/cli/sweep_file.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "fabrics/config/document.h"
#include "fabrics/systems/system_spec.h"
#include "models/core/errors.h"

namespace fabricsim {

using cfg::fail;

namespace {

const std::vector<std::string> kTopKeys{"version", "name", "config", "set", "grid", "zip"};

std::string value_text(const YAML::Node& n) {
  if (n.IsScalar()) return n.Scalar();
  YAML::Emitter e;
  e.SetSeqFormat(YAML::Flow);
  e.SetMapFormat(YAML::Flow);
  e << n;
  return e.c_str();
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

struct Axis {
  std::vector<std::string> keys;                     // one key (grid) or several (zip)
  std::vector<std::vector<std::string>> values;      // per step, one value per key
  std::vector<std::vector<YAML::Node>> nodes;        // for messages
};

// One axis per grid key; the zip is one axis of several keys.
std::vector<Axis> read_axes(const std::string& file, const YAML::Node& root,
                            std::vector<std::string>& keys) {
  std::vector<Axis> axes;
  auto list = [&](const YAML::Node& v, const std::string& path) {
    if (!v.IsSequence() || v.size() == 0)
      fail(file, v, path, "expected a non-empty list of values, found " + cfg::describe_node(v),
           "e.g. " + path + ": [ring, tree]");
  };
  auto add_key = [&](const YAML::Node& k, const std::string& path) {
    const std::string key = cfg::key_name(file, k, path);
    if (key.empty() || key.find('=') != std::string::npos || key.front() == '.' ||
        key.back() == '.')
      fail(file, k, path, "'" + key + "' is not a config key path",
           "e.g. workload.algorithm or device_types.nvswitch3.speedup, or config");
    if (std::find(keys.begin(), keys.end(), key) != keys.end())
      fail(file, k, path, "key '" + key + "' is swept twice", "sweep each key in one place");
    keys.push_back(key);
    return key;
  };
  const YAML::Node grid = root["grid"];
  if (grid.IsDefined() && !grid.IsNull()) {
    if (!grid.IsMap() || grid.size() == 0)
      fail(file, grid, "grid", "expected a map of key: [values], found " + cfg::describe_node(grid),
           "e.g. grid: {workload.algorithm: [ring, tree]}");
    for (const auto& kv : grid) {
      const std::string key = add_key(kv.first, "grid");
      list(kv.second, "grid." + key);
      Axis a;
      a.keys = {key};
      for (const YAML::Node& v : kv.second) {
        a.values.push_back({value_text(v)});
        a.nodes.push_back({v});
      }
      axes.push_back(a);
    }
  }
  const YAML::Node zip = root["zip"];
  if (zip.IsDefined() && !zip.IsNull()) {
    if (!zip.IsMap() || zip.size() == 0)
      fail(file, zip, "zip", "expected a map of key: [values], found " + cfg::describe_node(zip),
           "e.g. zip: {workload.min_bytes: [1MiB, 4MiB], workload.max_bytes: [1MiB, 4MiB]}");
    Axis a;
    size_t n = 0;
    for (const auto& kv : zip) {
      const std::string key = add_key(kv.first, "zip");
      list(kv.second, "zip." + key);
      if (a.keys.empty()) {
        n = kv.second.size();
        a.values.resize(n);
        a.nodes.resize(n);
      } else if (kv.second.size() != n) {
        fail(file, kv.second, "zip." + key,
             "has " + std::to_string(kv.second.size()) + " values but zip." + a.keys.front() +
                 " has " + std::to_string(n),
             "zipped lists are walked together: give them equal lengths");
      }
      a.keys.push_back(key);
      for (size_t i = 0; i < n; ++i) {
        a.values[i].push_back(value_text(kv.second[i]));
        a.nodes[i].push_back(kv.second[i]);
      }
    }
    axes.push_back(a);
  }
  return axes;
}

std::string resolve_config(const std::string& file, const YAML::Node& at, const std::string& path,
                           const std::string& rel) {
  namespace fs = std::filesystem;
  const fs::path p = fs::path(rel).is_absolute() ? fs::path(rel)
                                                 : fs::path(file).parent_path() / rel;
  std::error_code ec;
  if (!fs::is_regular_file(p, ec))
    fail(file, at, path, "cannot read config '" + p.lexically_normal().string() + "'",
         "paths are relative to the directory of " + file);
  return p.lexically_normal().string();
}

}  // namespace

bool is_sweep_file(const std::string& file) {
  try {
    const YAML::Node root = cfg::load_yaml_file(file);
    return (root["grid"].IsDefined() || root["zip"].IsDefined()) && !root["link_types"].IsDefined();
  } catch (const InputError&) {
    return false;
  }
}

SweepSpec load_sweep(const std::string& file, const std::vector<std::string>& extra_sets) {
  const YAML::Node root = cfg::load_yaml_file(file);
  for (const auto& kv : root) {
    const std::string k = cfg::key_name(file, kv.first, "");
    if (std::find(kTopKeys.begin(), kTopKeys.end(), k) == kTopKeys.end()) {
      const std::string near = nearest(k, kTopKeys);
      fail(file, kv.first, k, "unknown key '" + k + "'",
           (near.empty() ? "" : "did you mean '" + near + "'? ") + "known keys: " +
               join_list(kTopKeys));
    }
  }
  const YAML::Node v = root["version"];
  if (v.IsDefined() && !(v.IsScalar() && v.Scalar() == "1"))
    fail(file, v, "version", "unsupported version " + cfg::describe_node(v), "only version 1 exists");
  SweepSpec spec;
  spec.file = file;
  spec.name = root["name"].IsDefined()
                  ? cfg::scalar(file, root["name"], "name", "a name", "e.g. name: speedup")
                  : std::filesystem::path(file).stem().string();
  if (spec.name.find_first_of("/ \t") != std::string::npos)
    fail(file, root["name"], "name", "'" + spec.name + "' has a space or a slash",
         "the name is a directory name: e.g. speedup_grid");
  std::vector<std::string> common;
  const YAML::Node set = root["set"];
  if (set.IsDefined() && !set.IsNull()) {
    if (!set.IsSequence())
      fail(file, set, "set", "expected a list of key.path=value strings, found " +
                                 cfg::describe_node(set),
           "e.g. set: [\"workload.max_bytes=4MiB\"]");
    for (size_t i = 0; i < set.size(); ++i) {
      const std::string p = "set[" + std::to_string(i) + "]";
      const std::string s = cfg::scalar(file, set[i], p, "a key.path=value string",
                                        "e.g. \"workload.max_bytes=4MiB\"");
      if (s.find('=') == std::string::npos || s.front() == '=')
        fail(file, set[i], p, "'" + s + "' is not key.path=value", "e.g. \"workload.max_bytes=4MiB\"");
      common.push_back(s);
    }
  }
  if (!root["grid"].IsDefined() && !root["zip"].IsDefined())
    fail(file, root, "grid", "a sweep needs a grid or a zip",
         "e.g. grid: {workload.algorithm: [ring, tree]}");
  const std::vector<Axis> axes = read_axes(file, root, spec.keys);
  const bool swept_config = std::find(spec.keys.begin(), spec.keys.end(), "config") != spec.keys.end();
  std::string base;
  if (root["config"].IsDefined()) {
    if (swept_config)
      fail(file, root["config"], "config", "config is given and also swept",
           "give either config: FILE or config: [...] in grid or zip");
    base = resolve_config(file, root["config"], "config",
                          cfg::scalar(file, root["config"], "config", "a config file path",
                                      "e.g. config: dgx_h100.yaml"));
  } else if (!swept_config) {
    fail(file, root, "config", "missing required key 'config'",
         "name the base config (relative to this file), or sweep config in grid or zip");
  }

  // The points: the product of the axes, the first axis varying slowest.
  size_t total = 1;
  for (const Axis& a : axes) total *= a.values.size();
  if (total > 100000)
    fail(file, root, "grid", std::to_string(total) + " points", "at most 100000 per sweep file");
  for (size_t idx = 0; idx < total; ++idx) {
    SweepPoint pt;
    pt.index = idx;
    pt.config = base;
    pt.sets = common;
    size_t rest = idx;
    std::vector<size_t> step(axes.size());
    for (size_t a = axes.size(); a-- > 0;) {
      step[a] = rest % axes[a].values.size();
      rest /= axes[a].values.size();
    }
    std::string where_msg;
    for (size_t a = 0; a < axes.size(); ++a)
      for (size_t k = 0; k < axes[a].keys.size(); ++k) {
        const std::string& key = axes[a].keys[k];
        const std::string& val = axes[a].values[step[a]][k];
        pt.values.emplace_back(key, val);
        if (key == "config")
          pt.config = resolve_config(file, axes[a].nodes[step[a]][k], key, val);
        else
          pt.sets.push_back(key + "=" + val);
        where_msg += (where_msg.empty() ? "" : ", ") + key + "=" + val;
      }
    pt.sets.insert(pt.sets.end(), extra_sets.begin(), extra_sets.end());
    std::string key_text = pt.config;
    for (const std::string& s : pt.sets) key_text += "\n" + s;
    char id[32];
    std::snprintf(id, sizeof id, "%04zu-%08llx", idx,
                  (unsigned long long)(fnv1a(key_text) & 0xffffffffull));
    pt.id = id;
    try {
      (void)load_system(pt.config, pt.sets, std::nullopt);
    } catch (const InputError& e) {
      throw InputError(std::string(e.what()) + " [point " + std::to_string(idx) + " of " + file +
                       ": " + where_msg + "]");
    }
    spec.points.push_back(std::move(pt));
  }
  return spec;
}

}  // namespace fabricsim
