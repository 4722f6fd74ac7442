#include "fabrics/cli/outputs.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "fabrics/cli/output.h"
#include "models/core/errors.h"
#include "models/core/units.h"

namespace fabricsim {

namespace {

[[noreturn]] void bad(const std::string& flag, const std::string& problem) {
  throw InputError("command line: " + flag + ": " + problem);
}

uint64_t positive_int(const std::string& flag, const std::string& v, uint64_t max) {
  if (v.empty() || v.size() > 12 || v.find_first_not_of("0123456789") != std::string::npos)
    bad(flag, "expected a positive integer, got '" + v + "'");
  const uint64_t n = std::stoull(v);
  if (n == 0 || n > max) bad(flag, v + " is out of range [1, " + std::to_string(max) + "]");
  return n;
}

std::string fmt(double v, const char* f = "%.6f") {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// Columns of ports.csv after the port's identity, in order; the statistics of a window.
const std::vector<std::string> kPortColumns{
    "utilisation",      "busy_ps",       "tx_payload_bytes", "tx_wire_bytes",
    "tx_packets",       "tx_transactions", "rx_payload_bytes", "rx_packets",
    "credit_stall_ps",  "crc_errors",    "replays",          "replay_wire_bytes",
    "retry_ps",         "replay_stall_ps", "queue_max_bytes", "queue_mean_bytes"};
const std::vector<std::string> kPercentileColumns{"queue_p50_bytes", "queue_p90_bytes",
                                                  "queue_p99_bytes"};

std::string cell(const nlohmann::json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return csv_field(v.get<std::string>());
  if (v.is_number_float()) return fmt(v.get<double>(), "%.9g");
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  return v.dump();
}

}  // namespace

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

bool parse_output_option(const std::vector<std::string>& args, size_t& i, OutputOptions& o) {
  const std::string& a = args[i];
  auto value = [&]() -> std::string {
    if (i + 1 >= args.size()) bad(a, "needs a value");
    return args[++i];
  };
  if (a == "--series") {
    const std::string v = value();
    try {
      o.observe.series_interval_ps = parse_time_ps(v);
    } catch (const UnitError& e) {
      bad(a, "'" + v + "': " + e.what());
    }
    if (o.observe.series_interval_ps == 0) bad(a, "the interval must be > 0, e.g. 1us");
  } else if (a == "--series-samples") {
    o.observe.series_samples = size_t(positive_int(a, value(), 1000000));
  } else if (a == "--ports") {
    std::stringstream ss(value());
    for (std::string g; std::getline(ss, g, ',');) {
      if (g.empty()) bad("--ports", "empty pattern; e.g. --ports 'gpu0.port[*],nvswitch0.*'");
      o.observe.ports.push_back(g);
    }
  } else if (a == "--trace-max-ops") {
    o.observe.trace_max_ops = size_t(positive_int(a, value(), 100000000));
  } else if (a == "--histograms") {
    o.observe.histograms = true;
  } else if (a == "--trace") {
    o.trace = value();
    if (o.trace->empty()) bad(a, "needs a file name");
  } else if (a == "--progress") {
    o.progress_s = 10;
  } else if (a.rfind("--progress=", 0) == 0) {
    o.progress_s = double(positive_int("--progress", a.substr(11), 86400));
  } else {
    return false;
  }
  return true;
}

std::unique_ptr<Observation> make_observation(System& sys, const SystemSpec& spec,
                                              const OutputOptions& o, bool has_out) {
  ObserveOptions oo = o.observe;
  oo.trace = o.trace.has_value();
  // The trace's counter tracks come from the series: without --series, start fine (10 ns)
  // and let the series coarsen to fit its sample budget.
  if (oo.trace && oo.series_interval_ps == 0) {
    oo.series_interval_ps = 10000;
    if (o.observe.series_samples == ObserveOptions{}.series_samples) oo.series_samples = 400;
  }
  oo.device_windows = has_out;
  oo.one_window = !spec.workload.phases.empty();  // ocs_phases: thousands of short jobs
  if (!has_out && !oo.trace && !oo.series_interval_ps && !oo.histograms) return nullptr;
  if (o.trace) {  // fail before a long run rather than after it
    const std::filesystem::path dir = std::filesystem::path(*o.trace).parent_path();
    std::error_code ec;
    if (!dir.empty() && !std::filesystem::is_directory(dir, ec))
      bad("--trace", *o.trace + ": the directory " + dir.string() + " does not exist");
  }
  auto obs = std::make_unique<Observation>(sys, spec, oo);
  if (!o.observe.ports.empty()) {  // a pattern that selects nothing is a mistake
    for (const std::string& pat : o.observe.ports) {
      bool any = false;
      for (const PortInfo& p : obs->ports()) any = any || glob_match(pat, p.name);
      if (!any)
        bad("--ports", "'" + pat + "' matches no port of " + spec.file +
                           "; ports are named like " +
                           (obs->ports().empty() ? std::string("gpu0.port[0]")
                                                 : obs->ports().front().name));
    }
  }
  return obs;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  write_file_atomic(path.string(), text, "");
}

nlohmann::json energy_json(const SystemSpec& spec, const Observation& obs, size_t w) {
  const WindowStats& ws = obs.windows().at(w);
  const topo::Graph& g = spec.graph;
  double links = 0, devices = 0, stat = 0;
  for (size_t i = 0; i < ws.ports.size(); ++i) {
    const PortInfo& p = obs.ports()[i];
    const double bits = 8.0 * double(ws.ports[i].value("tx_wire_bytes", uint64_t(0)));
    links += bits * spec.link_types.at(p.link_type).energy_pj_per_bit * 1e-12;
    const DeviceType& t = spec.type_of(g.by_name.at(p.device));
    if (t.kind->power) devices += bits * t.kind->power(t).pj_per_bit * 1e-12;
  }
  const double seconds = double(ws.end_ps - ws.start_ps) * 1e-12;
  for (size_t d = 0; d < g.devices.size(); ++d) {
    const DeviceType& t = spec.type_of(int(d));
    if (t.kind->power) stat += t.kind->power(t).static_w * seconds;
  }
  return {{"links_J", links}, {"devices_J", devices}, {"static_J", stat},
          {"total_J", links + devices + stat}};
}

namespace {

// A json (sorted keys) as an ordered_json with the same content, without a text round trip.
nlohmann::ordered_json ordered(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::object: {
      nlohmann::ordered_json o = nlohmann::ordered_json::object();
      for (auto it = j.begin(); it != j.end(); ++it) o[it.key()] = ordered(it.value());
      return o;
    }
    case nlohmann::json::value_t::array: {
      nlohmann::ordered_json a = nlohmann::ordered_json::array();
      for (const nlohmann::json& x : j) a.push_back(ordered(x));
      return a;
    }
    case nlohmann::json::value_t::string: return j.get<std::string>();
    case nlohmann::json::value_t::boolean: return j.get<bool>();
    case nlohmann::json::value_t::number_unsigned: return j.get<uint64_t>();
    case nlohmann::json::value_t::number_integer: return j.get<int64_t>();
    case nlohmann::json::value_t::number_float: return j.get<double>();
    default: return nullptr;
  }
}

// A string as nlohmann's dump writes it: one of plain printable ASCII without quote or
// backslash (every name and key fabricsim makes) needs no escaping, the rest go through
// nlohmann's dump.
void put_string(std::string& out, const std::string& k) {
  bool plain = true;
  for (const char c : k) plain = plain && c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
  if (plain) {
    out += '"';
    out += k;
    out += '"';
  } else {
    out += nlohmann::json(k).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
}

// Text written piece by piece exactly as nlohmann's dump(2) writes the whole tree: a value
// at nesting depth d is its own dump(2) with 2 d spaces after each line break (a dumped
// string never holds a raw line break: it is escaped), members and elements separated by
// ",\n", an empty object or array as {} or []. Invalid UTF-8 becomes U+FFFD (json_text).
template <class J>
void put_value(std::string& out, const J& v, size_t pad) {
  const std::string s = v.dump(2, ' ', false, J::error_handler_t::replace);
  if (pad == 0) {
    out += s;
    return;
  }
  size_t from = 0;
  for (size_t nl; (nl = s.find('\n', from)) != std::string::npos; from = nl + 1) {
    out.append(s, from, nl + 1 - from);
    out.append(pad, ' ');
  }
  out.append(s, from, std::string::npos);
}

// An object or array at indentation `pad`, its members or elements put one at a time.
class Container {
 public:
  Container(std::string& out, size_t pad, bool object)
      : out_(out), pad_(pad), open_(object ? '{' : '['), close_(object ? '}' : ']') {}
  // Starts the next member (its value follows at indentation inner()).
  void key(const std::string& k) {
    next();
    put_string(out_, k);
    out_ += ": ";
  }
  // Starts the next element.
  void next() {
    if (empty_) out_ += open_;
    out_ += empty_ ? "\n" : ",\n";
    empty_ = false;
    out_.append(inner(), ' ');
  }
  size_t inner() const { return pad_ + 2; }
  void end() {
    if (empty_) {
      out_ += open_;
    } else {
      out_ += '\n';
      out_.append(pad_, ' ');
    }
    out_ += close_;
  }

 private:
  std::string& out_;
  size_t pad_;
  char open_, close_;
  bool empty_ = true;
};

// A value as put_value writes it, integers and strings without a dump of their own (one
// serializer per value was most of the statistics' cost); numbers with a fraction,
// objects and arrays through put_value.
void put_member_value(std::string& out, const nlohmann::json& v, size_t pad) {
  switch (v.type()) {
    case nlohmann::json::value_t::number_unsigned:
      out += std::to_string(v.get<uint64_t>());
      return;
    case nlohmann::json::value_t::number_integer:
      out += std::to_string(v.get<int64_t>());
      return;
    case nlohmann::json::value_t::string:
      put_string(out, v.get_ref<const std::string&>());
      return;
    case nlohmann::json::value_t::boolean:
      out += v.get<bool>() ? "true" : "false";
      return;
    case nlohmann::json::value_t::null:
      out += "null";
      return;
    default:
      put_value(out, v, pad);
  }
}

// An object's members as pointers to keys and values kept elsewhere: put_members writes
// at indentation `pad` what nlohmann's dump(2) writes for the object with these members
// in this order, without building it (the statistics of tens of thousands of ports:
// building, converting and dumping each as a tree was most of results.json's cost on
// NVL576). insert_member and sorted_members put them in the order the json types would.
struct Member {
  const std::string* key;
  const nlohmann::json* value;
};
void put_members(std::string& out, size_t pad, std::vector<Member>& m) {
  Container o(out, pad, true);
  for (const Member& x : m) {
    o.key(*x.key);
    put_member_value(out, *x.value, o.inner());
  }
  o.end();
}
// Appends `key` = `value` to `m` as ordered_json's operator[] would: in place if present.
void insert_member(std::vector<Member>& m, const std::string& key, const nlohmann::json& value) {
  for (Member& x : m)
    if (*x.key == key) {
      x.value = &value;
      return;
    }
  m.push_back(Member{&key, &value});
}
// Merges `extra` (keys and values, sorted by key) into the sorted members of object `j`,
// an extra's value replacing the member of the same key: the order and values of a
// nlohmann::json (sorted keys) `j` after j[key] = value for each extra.
void sorted_members(std::vector<Member>& m, const nlohmann::json& j,
                    const std::vector<Member>& extra) {
  m.clear();
  size_t e = 0;
  for (auto it = j.begin(); it != j.end(); ++it) {
    while (e < extra.size() && *extra[e].key < it.key()) m.push_back(extra[e++]);
    if (e < extra.size() && *extra[e].key == it.key()) {
      m.push_back(extra[e++]);
      continue;
    }
    m.push_back(Member{&it.key(), &it.value()});
  }
  while (e < extra.size()) m.push_back(extra[e++]);
}

// One window's statistics (rows[i].stats, job_stats[i]) at indentation `pad`: its label,
// span and bottleneck, and its ports' and devices' statistics, in the keys' sorted order.
void put_window(std::string& out, size_t pad, const Observation& obs, size_t w) {
  const WindowStats& ws = obs.windows().at(w);
  Container o(out, pad, true);
  o.key("bottleneck");
  if (ws.bottleneck >= 0)
    put_value(out,
              nlohmann::json{{"port", obs.ports()[size_t(ws.bottleneck)].name},
                             {"utilisation", ws.ports[size_t(ws.bottleneck)]["utilisation"]}},
              o.inner());
  else
    out += "null";
  o.key("devices");
  Container devices(out, o.inner(), false);
  static const std::string kDevice = "device", kKind = "kind", kName = "name", kPort = "port";
  std::vector<Member> m, extra;
  for (size_t i = 0; i < ws.devices.size(); ++i) {
    // As x = ws.devices[i]; x["device"] = ...; x["kind"] = ...; dump.
    const nlohmann::json device(obs.devices()[i].first), kind(obs.devices()[i].second);
    extra = {{&kDevice, &device}, {&kKind, &kind}};  // sorted
    sorted_members(m, ws.devices[i], extra);
    devices.next();
    put_members(out, devices.inner(), m);
  }
  devices.end();
  o.key("end_ps");
  out += std::to_string(ws.end_ps);
  o.key("label");
  put_value(out, nlohmann::json(ws.label), 0);
  o.key("ports");
  Container ports(out, o.inner(), false);
  for (size_t i = 0; i < ws.ports.size(); ++i) {
    // As x = ws.ports[i]; x["name"], x["device"], x["kind"], x["port"] = ...; dump.
    const PortInfo& p = obs.ports()[i];
    const nlohmann::json name(p.name), device(p.device), kind(p.kind), port(p.index);
    extra = {{&kDevice, &device}, {&kKind, &kind}, {&kName, &name}, {&kPort, &port}};  // sorted
    sorted_members(m, ws.ports[i], extra);
    ports.next();
    put_members(out, ports.inner(), m);
  }
  ports.end();
  o.key("start_ps");
  out += std::to_string(ws.start_ps);
  o.end();
}

// The whole run's statistics at indentation `pad`: each device (graph order) that has
// statistics, then its ports by index, each entry with its name, kind, device (and port).
void put_stats(std::string& out, size_t pad, const StatsRegistry& reg, uint64_t now_ps,
               const Observation& obs) {
  Container stats(out, pad, true);
  size_t p = 0;
  const std::vector<PortInfo>& ports = obs.ports();
  static const std::string kName = "name", kKind = "kind", kDevice = "device", kPort = "port";
  std::vector<Member> m;
  for (const auto& [device, kind] : obs.devices()) {
    if (const StatsRegistry::DumpFn* fn = reg.find(device)) {
      // As an ordered_json {name, kind, device} with st's members inserted, dumped.
      const nlohmann::json st = (*fn)(now_ps);
      const nlohmann::json name(device), k(kind), dev(device);
      m = {{&kName, &name}, {&kKind, &k}, {&kDevice, &dev}};
      for (auto it = st.begin(); it != st.end(); ++it) insert_member(m, it.key(), it.value());
      stats.key(device);
      put_members(out, stats.inner(), m);
    }
    for (; p < ports.size() && ports[p].device == device; ++p) {
      // As an ordered_json {name, kind, device, port} with the port's statistics and
      // queue percentiles inserted, dumped.
      const PortInfo& pi = ports[p];
      const nlohmann::json name(pi.name), k(pi.kind), dev(pi.device), port(pi.index);
      m = {{&kName, &name}, {&kKind, &k}, {&kDevice, &dev}, {&kPort, &port}};
      nlohmann::json st, q;
      if (const StatsRegistry::DumpFn* fn = reg.find(pi.name)) {
        st = (*fn)(now_ps);
        for (auto it = st.begin(); it != st.end(); ++it) insert_member(m, it.key(), it.value());
      }
      if (obs.options().histograms) {
        q = obs.queue_percentiles(p);
        for (auto it = q.begin(); it != q.end(); ++it) insert_member(m, it.key(), it.value());
      }
      stats.key(pi.name);
      put_members(out, stats.inner(), m);
    }
  }
  stats.end();
}

}  // namespace

std::string results_text(const nlohmann::json& j, const StatsRegistry& stats, uint64_t now_ps,
                         const Observation& obs, bool training) {
  // The small part as one tree, with a marker string (mark(k)) standing where each large section goes:
  // section 0 the run's statistics, then one per window (rows[w].stats) or, for training,
  // section 1 the job_stats array.
  nlohmann::ordered_json out = ordered(j);
  const auto mark = [](size_t k) { return "\x01" "fabricsim-section-" + std::to_string(k) + "\x01"; };
  out["stats"] = mark(0);
  size_t sections = 1;
  if (training) {
    out["job_stats"] = mark(sections++);
  } else {
    nlohmann::ordered_json& rows = out["rows"];
    for (size_t w = 0; w < rows.size() && w < obs.windows().size(); ++w)
      rows[w]["stats"] = mark(sections++);
  }
  const std::string skeleton = json_text(out);
  // Each marker's place in the text and the indentation of its line.
  struct At {
    size_t pos, len, section;
  };
  std::vector<At> at;
  for (size_t k = 0; k < sections; ++k) {
    const std::string m = nlohmann::json(mark(k)).dump();
    const size_t pos = skeleton.find(m);
    FABRICSIM_ASSERT(pos != std::string::npos && skeleton.find(m, pos + 1) == std::string::npos,
                     "results.json: section marker " + std::to_string(k) + " not found once");
    at.push_back({pos, m.size(), k});
  }
  std::sort(at.begin(), at.end(), [](const At& a, const At& b) { return a.pos < b.pos; });
  std::string text;
  text.reserve(skeleton.size() + 1024 * obs.ports().size() * sections);  // ~700 B a port
  size_t from = 0;
  for (const At& a : at) {
    text.append(skeleton, from, a.pos - from);
    const size_t line = skeleton.rfind('\n', a.pos) + 1;  // npos + 1 == 0: the first line
    const size_t pad = skeleton.find_first_not_of(' ', line) - line;
    if (a.section == 0) {
      put_stats(text, pad, stats, now_ps, obs);
    } else if (training) {
      Container js(text, pad, false);
      for (size_t w = 0; w < obs.windows().size(); ++w) {
        js.next();
        put_window(text, js.inner(), obs, w);
      }
      js.end();
    } else {
      put_window(text, pad, obs, a.section - 1);
    }
    from = a.pos + a.len;
  }
  text.append(skeleton, from, std::string::npos);
  return text;
}

void write_tables(const std::filesystem::path& dir, const std::vector<RowResult>& rows,
                  const nlohmann::json* training_rows,
                  const Observation& obs) {
  const std::vector<WindowStats>& win = obs.windows();
  // rows.csv: the table, one line per row, with its bottleneck when it is one window.
  std::ostringstream r;
  auto bottleneck = [&](size_t i) {
    if (i >= win.size() || win[i].bottleneck < 0) return std::string(",");
    const size_t b = size_t(win[i].bottleneck);
    return csv_field(obs.ports()[b].name) + "," +
           fmt(win[i].ports[b]["utilisation"].get<double>());
  };
  if (training_rows) {
    std::vector<std::string> keys;
    for (const nlohmann::json& row : *training_rows)
      for (auto it = row.begin(); it != row.end(); ++it)
        if (std::find(keys.begin(), keys.end(), it.key()) == keys.end()) keys.push_back(it.key());
    r << "row";
    for (const std::string& k : keys) r << "," << csv_field(k);
    r << "\n";
    size_t i = 0;
    for (const nlohmann::json& row : *training_rows) {
      r << i++;
      for (const std::string& k : keys) r << "," << (row.contains(k) ? cell(row[k]) : "");
      r << "\n";
    }
  } else {
    r << "row,size_bytes,count,type,redop,algorithm,time_us,algbw_GBps,busbw_GBps,wrong,"
         "bottleneck_port,bottleneck_utilisation\n";
    for (size_t i = 0; i < rows.size(); ++i) {
      const RowResult& x = rows[i];
      r << i << "," << x.bytes << "," << x.count << "," << csv_field(x.type) << ","
        << csv_field(x.redop) << "," << csv_field(x.algorithm) << "," << fmt(x.time_us) << ","
        << fmt(x.algbw_GBps) << "," << fmt(x.busbw_GBps) << ","
        << (x.checked ? std::to_string(x.wrong) : "") << "," << bottleneck(i) << "\n";
    }
  }
  write_file(dir / "rows.csv", r.str());

  // ports.csv: one line per (window, port); a training run's windows are its jobs.
  const bool pct = obs.options().histograms;
  std::ostringstream p;
  p << "row,label,start_ps,end_ps,name,device,kind,port,peer,link_type";
  for (const std::string& c : kPortColumns) p << "," << c;
  if (pct)
    for (const std::string& c : kPercentileColumns) p << "," << c;
  p << "\n";
  for (size_t w = 0; w < win.size(); ++w)
    for (size_t i = 0; i < win[w].ports.size(); ++i) {
      const PortInfo& pi = obs.ports()[i];
      const nlohmann::json& s = win[w].ports[i];
      p << w << "," << csv_field(win[w].label) << "," << win[w].start_ps << "," << win[w].end_ps
        << "," << csv_field(pi.name) << "," << csv_field(pi.device) << "," << csv_field(pi.kind)
        << "," << pi.index << "," << csv_field(pi.peer) << "," << csv_field(pi.link_type);
      for (const std::string& c : kPortColumns) p << "," << cell(s.at(c));
      if (pct)
        for (const std::string& c : kPercentileColumns) p << "," << cell(s.value(c, nlohmann::json()));
      p << "\n";
    }
  write_file(dir / "ports.csv", p.str());

  // series.csv: one line per (port, sample).
  const auto series = obs.series();
  if (series.empty()) return;
  std::ostringstream s;
  s << "name,device,kind,port,t_start_us,t_end_us,utilisation,queue_mean_bytes,"
       "queue_max_bytes\n";
  const uint64_t end = obs.end_ps();
  for (const auto& [pi, ser] : series) {
    const uint64_t w = ser->width_ps();
    const auto& smp = ser->samples();
    for (size_t k = 0; k < smp.size() && uint64_t(k) * w < end; ++k) {
      const uint64_t t0 = uint64_t(k) * w, t1 = std::min(end, t0 + w);
      const double span = double(t1 - t0);
      s << csv_field(pi->name) << "," << csv_field(pi->device) << "," << csv_field(pi->kind) << ","
        << pi->index << "," << fmt(double(t0) * 1e-6) << "," << fmt(double(t1) * 1e-6) << ","
        << fmt(std::min(1.0, double(smp[k].busy_ps) / span)) << ","
        << fmt(smp[k].queue_byte_ps / span, "%.3f") << "," << smp[k].queue_max << "\n";
    }
  }
  write_file(dir / "series.csv", s.str());
}

}  // namespace fabricsim
