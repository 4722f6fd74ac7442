#include "fabrics/systems/references.h"

#include <algorithm>
#include <cmath>

#include "fabrics/config/document.h"
#include "models/core/text.h"
#include "models/core/units.h"

namespace fabricsim {

using cfg::fail;
using cfg::join_key;

namespace {

double positive_real(const std::string& file, const YAML::Node& n, const std::string& path,
                     const std::string& what) {
  const std::string text = cfg::scalar(file, n, path, what, "e.g. 367.5");
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !std::isfinite(v) || v <= 0)
    fail(file, n, path, "expected " + what + ", found '" + text + "'",
         "a positive number without a unit (the unit is in the key's name)");
  return v;
}

// {SIZE: value} into points, merged by size.
void points(const std::string& file, const YAML::Node& n, const std::string& path,
            std::vector<PublishedPoint>& out, double PublishedPoint::*field, const std::string& what) {
  if (!n.IsMap() || n.size() == 0)
    fail(file, n, path, "expected a map of size -> " + what + ", found " + cfg::describe_node(n),
         "e.g. {8GiB: 367.5, 1MiB: 66.1}");
  for (const auto& kv : n) {
    const std::string key = cfg::key_name(file, kv.first, path);
    uint64_t bytes = 0;
    try {
      bytes = parse_bytes(key);
    } catch (const UnitError& e) {
      fail(file, kv.first, join_key(path, key), e.problem(), e.hint());
    }
    if (bytes == 0) fail(file, kv.first, join_key(path, key), "a size of 0 B", "sizes are positive");
    const double v = positive_real(file, kv.second, join_key(path, key), what);
    auto it = std::find_if(out.begin(), out.end(), [&](const PublishedPoint& p) { return p.bytes == bytes; });
    if (it == out.end()) {
      out.push_back(PublishedPoint{bytes});
      it = out.end() - 1;
    }
    if ((*it).*field >= 0)
      fail(file, kv.first, join_key(path, key), "size " + format_bytes(bytes) + " given twice",
           "write each size once (1MiB and 1048576B are the same size)");
    (*it).*field = v;
  }
}

// Every leaf key path of the resolved config.
void leaves(const nlohmann::json& j, const std::string& path, std::vector<std::string>& out) {
  if (j.is_object() && !j.empty()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      leaves(it.value(), path.empty() ? it.key() : path + "." + it.key(), out);
  } else if (!path.empty()) {
    out.push_back(path);
  }
}

// "did you mean 'x'?" without the list of every parameter (there are hundreds).
std::string nearest_hint(const std::string& key, const std::vector<std::string>& known) {
  std::string h = did_you_mean(key, known);
  const size_t q = h.find('?');
  h = q == std::string::npos ? std::string() : h.substr(0, q + 1) + " ";
  return h + "keys are parameter paths as in results.json's resolved_config, e.g. "
             "device_types.NAME.speedup";
}

}  // namespace

std::vector<PublishedCurve> parse_published(const std::string& file, const YAML::Node& n) {
  std::vector<PublishedCurve> curves;
  if (!n.IsDefined() || n.IsNull()) return curves;
  if (!n.IsSequence())
    fail(file, n, "published", "expected a list of published curves, found " + cfg::describe_node(n),
         "e.g. [{source: \"nccl-tests#212\", busbw_GBps: {8GiB: 367.5}}]");
  const std::vector<std::string> keys{"source",    "collective", "algorithm",
                                      "tolerance", "busbw_GBps", "time_us"};
  // nccl-tests' names, as workload.collective takes them.
  const std::vector<std::string> collectives{"all_reduce", "reduce_scatter", "all_gather", "broadcast",
                                             "reduce",     "alltoall",       "sendrecv"};
  for (size_t i = 0; i < n.size(); ++i) {
    const YAML::Node c = n[i];
    const std::string path = "published[" + std::to_string(i) + "]";
    if (!c.IsMap())
      fail(file, c, path, "expected a map, found " + cfg::describe_node(c),
           "keys: " + join_list(keys));
    cfg::check_unique_keys(file, c, path);
    for (const auto& kv : c) {
      const std::string key = cfg::key_name(file, kv.first, path);
      if (std::find(keys.begin(), keys.end(), key) == keys.end())
        fail(file, kv.first, join_key(path, key), "unknown key '" + key + "'", did_you_mean(key, keys));
    }
    PublishedCurve curve;
    if (!c["source"].IsDefined())
      fail(file, c, join_key(path, "source"), "missing: where the figures were published",
           "add source: \"a paper, an issue number or a vendor page\"");
    curve.source = cfg::scalar(file, c["source"], join_key(path, "source"), "the figure's source",
                               "where it was published: a paper, an issue number, a vendor page");
    if (!c["collective"].IsDefined())
      fail(file, c, join_key(path, "collective"), "missing: the collective that was measured",
           "add collective: " + join_list(collectives));
    curve.collective = cfg::scalar(file, c["collective"], join_key(path, "collective"),
                                   "a collective", "one of " + join_list(collectives));
    if (std::find(collectives.begin(), collectives.end(), curve.collective) == collectives.end())
      fail(file, c["collective"], join_key(path, "collective"),
           "unknown collective '" + curve.collective + "'", did_you_mean(curve.collective, collectives));
    if (c["algorithm"].IsDefined() && !c["algorithm"].IsNull())
      curve.algorithm = cfg::scalar(file, c["algorithm"], join_key(path, "algorithm"),
                                    "an algorithm name", "e.g. ring, as in the rows' algo column");
    if (c["tolerance"].IsDefined() && !c["tolerance"].IsNull()) {
      const std::string t = cfg::scalar(file, c["tolerance"], join_key(path, "tolerance"),
                                        "a percentage", "e.g. 5%");
      char* end = nullptr;
      const double v = std::strtod(t.c_str(), &end);
      if (end == t.c_str() || std::string(end) != "%" || !(v > 0 && v <= 100))
        fail(file, c["tolerance"], join_key(path, "tolerance"),
             "expected a percentage in (0%, 100%], found '" + t + "'", "e.g. 5%");
      curve.tolerance_pct = v;
    }
    if (c["busbw_GBps"].IsDefined())
      points(file, c["busbw_GBps"], join_key(path, "busbw_GBps"), curve.points,
             &PublishedPoint::busbw_GBps, "a busbw in GB/s");
    if (c["time_us"].IsDefined())
      points(file, c["time_us"], join_key(path, "time_us"), curve.points, &PublishedPoint::time_us,
             "a time in us");
    if (curve.points.empty())
      fail(file, c, path, "no published values", "give busbw_GBps: {SIZE: GB/s} or time_us: {SIZE: us}");
    std::sort(curve.points.begin(), curve.points.end(),
              [](const PublishedPoint& a, const PublishedPoint& b) { return a.bytes < b.bytes; });
    curves.push_back(std::move(curve));
  }
  return curves;
}

std::vector<Assumption> parse_assumptions(const std::string& file, const YAML::Node& n,
                                          const nlohmann::json& resolved) {
  std::vector<Assumption> out;
  if (!n.IsDefined() || n.IsNull()) return out;
  if (!n.IsMap())
    fail(file, n, "assumptions", "expected a map of key path -> why, found " + cfg::describe_node(n),
         "e.g. {device_types.nvswitch3.speedup: \"not public\"}");
  cfg::check_unique_keys(file, n, "assumptions");
  std::vector<std::string> known;
  leaves(resolved, "", known);
  for (const auto& kv : n) {
    const std::string key = cfg::key_name(file, kv.first, "assumptions");
    if (std::find(known.begin(), known.end(), key) == known.end())
      fail(file, kv.first, join_key("assumptions", key),
           "'" + key + "' is not a parameter of this config", nearest_hint(key, known));
    out.push_back({key, cfg::scalar(file, kv.second, join_key("assumptions", key),
                                    "why it is an assumption", "one line: what is not public and what was assumed")});
  }
  return out;
}

nlohmann::json compare_published(const std::vector<PublishedCurve>& curves,
                                 const std::string& collective,
                                 const std::vector<ComparedRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  const auto err = [](double sim, double pub) { return 100.0 * (sim / pub - 1.0); };
  for (const PublishedCurve& c : curves) {
    nlohmann::json pts = nlohmann::json::array();
    for (const PublishedPoint& p : c.points) {
      const auto row = std::find_if(rows.begin(), rows.end(), [&](const ComparedRow& r) {
        // A row's algo column may carry its protocol and slices ("ring/simple"): the curve's
        // algorithm names the part before the first '/'.
        return c.collective == collective && r.bytes == p.bytes &&
               (c.algorithm.empty() || r.algorithm == c.algorithm ||
                r.algorithm.compare(0, r.algorithm.find('/'), c.algorithm) == 0);
      });
      nlohmann::json x = {{"size_bytes", p.bytes}};
      bool within = true;
      for (const auto& [key, pub, simkey] :
           {std::tuple{"busbw_GBps", p.busbw_GBps, "simulated_busbw_GBps"},
            std::tuple{"time_us", p.time_us, "simulated_time_us"}}) {
        if (pub < 0) continue;
        x[key] = pub;
        const std::string k = key;
        const double sim = row == rows.end() ? -1 : k == "busbw_GBps" ? row->busbw_GBps : row->time_us;
        x[simkey] = row == rows.end() ? nlohmann::json() : nlohmann::json(sim);
        x[k == "busbw_GBps" ? "busbw_error_pct" : "time_error_pct"] =
            row == rows.end() ? nlohmann::json() : nlohmann::json(err(sim, pub));
        if (row != rows.end() && c.tolerance_pct > 0 && std::fabs(err(sim, pub)) > c.tolerance_pct + 1e-9)
          within = false;
      }
      if (row != rows.end() && c.tolerance_pct > 0) x["within_tolerance"] = within;
      pts.push_back(x);
    }
    out.push_back({{"source", c.source},
                   {"collective", c.collective},
                   {"algorithm", c.algorithm.empty() ? nlohmann::json() : nlohmann::json(c.algorithm)},
                   {"tolerance_pct", c.tolerance_pct > 0 ? nlohmann::json(c.tolerance_pct) : nlohmann::json()},
                   {"points", pts}});
  }
  return out;
}

}  // namespace fabricsim
