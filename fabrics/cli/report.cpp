#include "fabrics/cli/report.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "fabrics/cli/outputs.h"
#include "models/core/errors.h"

namespace fabricsim {

extern const char* const kReportJs;
extern const char* const kReportCss;
extern const char* const kEchartsJs;

namespace {

const char* kReportUsage =
    "usage: fabricsim report RESULTS.json... -o REPORT.html [--title TEXT]\n"
    "  RESULTS.json: written by `fabricsim run --out DIR` or `fabricsim compare --out DIR`\n";

[[noreturn]] void usage_error(const std::string& problem) {
  throw InputError("command line: " + problem + "\n" + kReportUsage);
}

nlohmann::json read_json(const std::string& file) {
  std::ifstream f(file, std::ios::binary);
  if (!f) throw InputError(file + ": cannot read the file");
  std::stringstream ss;
  ss << f.rdbuf();
  try {
    return nlohmann::json::parse(ss.str());
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(file + ": byte " + std::to_string(e.byte) +
                     ": not valid JSON; give a results.json written by fabricsim run or compare");
  }
}

void need(const nlohmann::json& j, const std::string& file, const char* key, bool array) {
  if (!j.contains(key) || (array ? !j[key].is_array() : !j[key].is_object()))
    throw InputError(file + ": " + key + ": missing or not " + (array ? "a list" : "a map") +
                     "; not a results.json of fabricsim run (schema_version 1 or 2)");
}

std::string device_of(const std::string& port) {
  const size_t p = port.find(".port[");
  return p == std::string::npos ? port : port.substr(0, p);
}

// Every leaf of the resolved config as [key.path, value text].
void flatten(const nlohmann::json& j, const std::string& path, nlohmann::json& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      flatten(it.value(), path.empty() ? it.key() : path + "." + it.key(), out);
  } else {
    out.push_back({path, j.is_string() ? j.get<std::string>() : j.dump()});
  }
}

}  // namespace

nlohmann::json report_system(const nlohmann::json& r, const std::string& label,
                             const std::string& file) {
  need(r, file, "rows", true);
  need(r, file, "stats", false);
  need(r, file, "resolved_config", false);
  nlohmann::json s;
  s["label"] = label;
  s["file"] = file;
  s["name"] = r["resolved_config"].value("name", label);
  s["collective"] = r.value("collective", nlohmann::json());
  s["algorithm"] = r.value("algorithm", nlohmann::json());
  s["schema_version"] = r.value("schema_version", 1);
  // Devices, ports and links from the statistics: a port entry has a peer.
  std::map<std::string, std::string> kind;  // device -> kind
  const nlohmann::json& st = r["stats"];
  for (auto it = st.begin(); it != st.end(); ++it)
    if (!it.value().contains("peer"))
      kind[it.key()] = it.value().value("kind", it.value().contains("bytes_sent") ? "endpoint" : "switch");
  std::map<std::string, int> devices, ports, links;
  std::map<std::pair<std::string, std::string>, std::pair<int, std::string>> edges;
  std::vector<std::pair<std::string, double>> stall;
  nlohmann::json qmax = nlohmann::json::array(), pct = nlohmann::json::array();
  for (const auto& [d, k] : kind) ++devices[k];
  for (auto it = st.begin(); it != st.end(); ++it) {
    const nlohmann::json& p = it.value();
    if (!p.contains("peer")) continue;
    const std::string dev = device_of(it.key()), peer = device_of(p["peer"].get<std::string>());
    ++ports[kind.count(dev) ? kind[dev] : "other"];
    if (it.key() < p["peer"].get<std::string>()) {
      ++links[p.value("link_type", "link")];
      auto& e = edges[{std::min(dev, peer), std::max(dev, peer)}];
      ++e.first;
      e.second = p.value("link_type", "link");
    }
    stall.emplace_back(it.key(), double(p.value("credit_stall_ps", uint64_t(0))) * 1e-6);
    qmax.push_back(p.value("queue_depth_max_bytes", uint64_t(0)));
    if (p.contains("queue_p99_bytes"))
      pct.push_back({it.key(), p["queue_p50_bytes"], p["queue_p90_bytes"], p["queue_p99_bytes"]});
  }
  s["counts"] = {{"devices", devices}, {"ports", ports}, {"links", links}};
  nlohmann::json nodes = nlohmann::json::array(), ed = nlohmann::json::array();
  for (const auto& [d, k] : kind) nodes.push_back({{"name", d}, {"kind", k}});
  for (const auto& [ab, e] : edges)
    ed.push_back({{"a", ab.first}, {"b", ab.second}, {"count", e.first}, {"link_type", e.second}});
  s["topology"] = {{"nodes", nodes}, {"edges", ed}};
  std::sort(stall.begin(), stall.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  if (stall.size() > 20) stall.resize(20);
  s["credit_stall_us"] = stall;
  s["queue_max_bytes"] = qmax;
  s["queue_percentiles"] = pct;
  s["ceiling"] = r.value("ceiling", nlohmann::json());
  // Rows, their bottlenecks and the utilisation heatmap (the 40 busiest ports).
  nlohmann::json rows = nlohmann::json::array();
  std::map<std::string, double> peak;
  for (const nlohmann::json& row : r["rows"]) {
    nlohmann::json x = row;
    x.erase("stats");
    if (row.contains("stats") && row["stats"].contains("bottleneck") && !row["stats"]["bottleneck"].is_null())
      x["bottleneck"] = row["stats"]["bottleneck"];
    if (row.contains("stats"))
      for (const nlohmann::json& p : row["stats"]["ports"])
        peak[p["name"].get<std::string>()] = std::max(peak[p["name"].get<std::string>()],
                                                      p["utilisation"].get<double>());
    rows.push_back(x);
  }
  s["rows"] = rows;
  s["units"] = r.value("units", nlohmann::json::object());
  std::vector<std::pair<std::string, double>> busiest(peak.begin(), peak.end());
  std::stable_sort(busiest.begin(), busiest.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (busiest.size() > 40) busiest.resize(40);
  nlohmann::json hp = nlohmann::json::array(), hv = nlohmann::json::array();
  std::map<std::string, size_t> col;
  for (const auto& [name, u] : busiest) {
    col[name] = hp.size();
    hp.push_back(name);
  }
  for (size_t i = 0; i < r["rows"].size(); ++i) {
    const nlohmann::json& row = r["rows"][i];
    if (!row.contains("stats")) continue;
    for (const nlohmann::json& p : row["stats"]["ports"]) {
      const auto c = col.find(p["name"].get<std::string>());
      if (c != col.end()) hv.push_back({i, c->second, p["utilisation"]});
    }
  }
  s["heatmap"] = {{"ports", hp}, {"values", hv}};
  nlohmann::json params = nlohmann::json::array();
  flatten(r["resolved_config"], "", params);
  // Each parameter marked with why it is an assumption, when the config says it is one.
  std::map<std::string, std::string> why;
  for (const nlohmann::json& a : r.value("assumptions", nlohmann::json::array()))
    if (a.is_object() && a.contains("key") && a.contains("why"))
      why[a["key"].get<std::string>()] = a["why"].get<std::string>();
  for (nlohmann::json& p : params) {
    const auto it = why.find(p[0].get<std::string>());
    p.push_back(it == why.end() ? nlohmann::json() : nlohmann::json(it->second));
  }
  s["params"] = params;
  s["assumptions"] = why.size();
  // Published curves that apply to this run: any algorithm, or one of its rows'.
  nlohmann::json pub = nlohmann::json::array();
  for (const nlohmann::json& c : r.value("published", nlohmann::json::array())) {
    bool applies = !c.contains("algorithm") || c["algorithm"].is_null();
    for (const nlohmann::json& row : r["rows"]) {  // "ring" applies to "ring/ll128" rows
      const std::string a = row.value("algorithm", "");
      applies = applies || a.substr(0, a.find('/')) == c["algorithm"].get<std::string>();
    }
    if (applies) pub.push_back(c);
  }
  s["published"] = pub;
  return s;
}

int report_main(const std::vector<std::string>& args) {
  std::vector<std::string> files;
  std::string out, title = "fabricsim design review";
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-o" || a == "--out" || a == "--title") {
      if (i + 1 >= args.size()) usage_error(a + " needs a value");
      (a == "--title" ? title : out) = args[++i];
    } else if (a.size() > 1 && a[0] == '-') {
      usage_error("unknown option '" + a + "' for 'report'");
    } else {
      files.push_back(a);
    }
  }
  if (files.empty()) usage_error("report needs at least one RESULTS.json");
  if (out.empty()) usage_error("report needs -o REPORT.html");
  if (!*kEchartsJs)
    throw InputError("report: this fabricsim was built without its charting library; run "
                     "scripts/setup.sh (npm ci in third_party/echarts) and rebuild");
  nlohmann::json systems = nlohmann::json::array();
  std::set<std::string> labels;
  auto add = [&](const nlohmann::json& r, std::string label, const std::string& file) {
    for (int k = 2; labels.count(label); ++k) label += "-" + std::to_string(k);
    labels.insert(label);
    systems.push_back(report_system(r, label, file));
  };
  for (const std::string& f : files) {
    const nlohmann::json j = read_json(f);
    if (!j.is_object()) throw InputError(f + ": not a results.json (the top level is not a map)");
    if (j.value("kind", "") == "compare") {
      need(j, f, "systems", true);
      for (size_t i = 0; i < j["systems"].size(); ++i) {
        const nlohmann::json& s = j["systems"][i];
        if (!s.contains("results") || !s.contains("label"))
          throw InputError(f + ": systems[" + std::to_string(i) + "]: no results or label");
        add(s["results"], s["label"].get<std::string>(), f + ": systems[" + std::to_string(i) + "]");
      }
    } else if (j.value("kind", "") == "sweep") {
      throw InputError(f + ": a sweep's merged results; give its points' results instead, e.g. " +
                       (std::filesystem::path(f).parent_path() / "points/*/results.json").string());
    } else {
      add(j, j.contains("resolved_config") ? j["resolved_config"].value("name", f) : f, f);
    }
  }
  nlohmann::json data = {{"title", title}, {"systems", systems}};
  std::string dj = data.dump();
  // Inside <script>, "</" would end the element: write it as "<\/" (same JSON string).
  for (size_t p = 0; (p = dj.find("</", p)) != std::string::npos; p += 3) dj.replace(p, 2, "<\\/");
  std::string html = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>";
  for (char c : title) html += c == '<' ? std::string("&lt;") : c == '&' ? std::string("&amp;") : std::string(1, c);
  html += "</title>\n<style>\n" + std::string(kReportCss) + "</style>\n</head><body>\n";
  html += "<main id=\"report\"></main>\n<script>\n" + std::string(kEchartsJs) + "\n</script>\n";
  html += "<script id=\"fabricsim-data\" type=\"application/json\">" + dj + "</script>\n";
  html += "<script>\n" + std::string(kReportJs) + "\n</script>\n</body></html>\n";
  write_file(out, html);
  std::cout << "# report: " << out << " (" << systems.size() << " system"
            << (systems.size() == 1 ? "" : "s") << ")\n";
  return kExitOk;
}

}  // namespace fabricsim
