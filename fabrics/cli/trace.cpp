#include "fabrics/cli/trace.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "fabrics/cli/outputs.h"
#include "models/collectives/program.h"
#include "models/core/units.h"

namespace fabricsim {

namespace {

// Process ids: ranks 0..n-1, then the windows' process, then one per device.
constexpr int kWindowsPid = 1000000;
constexpr int kDevicePid0 = 1000001;

std::string ts(uint64_t ps) {  // microseconds, exact to the picosecond
  char b[40];
  std::snprintf(b, sizeof b, "%llu.%06llu", (unsigned long long)(ps / 1000000),
                (unsigned long long)(ps % 1000000));
  return b;
}

const char* kind_name(uint8_t k) {
  switch (coll::OpKind(k)) {
    case coll::OpKind::kSend: return "send";
    case coll::OpKind::kRecv: return "recv";
    case coll::OpKind::kCompute: return "compute";
    case coll::OpKind::kDelay: return "delay";
    case coll::OpKind::kNvlsReduce: return "nvls_reduce";
    case coll::OpKind::kNvlsStore: return "nvls_store";
  }
  return "op";
}

struct Event {
  uint64_t at_ps;
  std::string json;  // the whole event object
};

std::string q(const std::string& s) { return nlohmann::json(s).dump(); }

}  // namespace

void write_trace(const std::string& file, const SystemSpec& spec, const Observation& obs) {
  std::vector<Event> ev;
  std::string meta;  // metadata events first (no timestamp order needed)
  auto add_meta = [&](int pid, int tid, const std::string& what, const std::string& name) {
    meta += "{\"ph\":\"M\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) +
            ",\"name\":\"" + what + "\",\"args\":{\"name\":" + q(name) + "}},\n";
  };
  auto add_sort = [&](int pid, int index) {
    meta += "{\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
            ",\"name\":\"process_sort_index\",\"args\":{\"sort_index\":" + std::to_string(index) +
            "}},\n";
  };
  const topo::Graph& g = spec.graph;
  for (size_t r = 0; r < spec.ranks.size(); ++r) {
    std::string dev;
    for (const topo::Device& d : g.devices)
      if (d.terminal && d.endpoint_id == spec.ranks[r]) dev = d.name;
    add_meta(int(r), 0, "process_name", "rank " + std::to_string(r) + " (" + dev + ")");
    add_sort(int(r), int(r));
  }
  add_meta(kWindowsPid, 0, "process_name", "rows");
  add_sort(kWindowsPid, -1);
  add_meta(kWindowsPid, 0, "thread_name", "schedule");

  // Windows: one slice each on the "rows" process.
  for (size_t w = 0; w < obs.windows().size(); ++w) {
    const WindowStats& x = obs.windows()[w];
    ev.push_back({x.start_ps, "{\"ph\":\"X\",\"pid\":" + std::to_string(kWindowsPid) +
                                  ",\"tid\":0,\"ts\":" + ts(x.start_ps) +
                                  ",\"dur\":" + ts(x.end_ps - x.start_ps) + ",\"name\":" +
                                  q("row " + std::to_string(w) + " " + x.label) + "}"});
  }

  // Ops on lanes: sends, receives and the rest each have their own lanes (tid = kind
  // group x 10000 + lane); an op takes the first lane of its group whose last slice ended
  // strictly before it starts, so slices of a lane never touch and each flow end binds to
  // one slice.
  const std::vector<TraceOp>& ops = obs.trace_ops();
  std::vector<size_t> order(ops.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto group = [&](size_t i) {
    const coll::OpKind k = coll::OpKind(ops[i].kind);
    return k == coll::OpKind::kSend || k == coll::OpKind::kNvlsStore ? 0
           : k == coll::OpKind::kRecv || k == coll::OpKind::kNvlsReduce ? 1
                                                                         : 2;
  };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return ops[a].rank != ops[b].rank ? ops[a].rank < ops[b].rank
                                      : ops[a].start_ps < ops[b].start_ps;
  });
  std::vector<int> lane(ops.size(), 0);
  std::map<std::pair<uint32_t, int>, std::vector<uint64_t>> lane_end;  // last end per lane
  for (size_t i : order) {
    std::vector<uint64_t>& ends = lane_end[{ops[i].rank, group(i)}];
    size_t l = 0;
    while (l < ends.size() && !(ends[l] < ops[i].start_ps)) ++l;
    if (l == ends.size()) ends.push_back(0);
    ends[l] = ops[i].end_ps;
    lane[i] = group(i) * 10000 + int(l);
  }
  const char* group_name[] = {"send", "recv", "compute"};
  for (const auto& [key, ends] : lane_end)
    for (size_t l = 0; l < ends.size(); ++l)
      add_meta(int(key.first), key.second * 10000 + int(l), "thread_name",
               std::string(group_name[key.second]) + " " + std::to_string(l));

  // Index of (window, rank, op) -> ops entry, for the flows.
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, size_t> at;
  for (size_t i = 0; i < ops.size(); ++i) at[{ops[i].window, ops[i].rank, ops[i].op}] = i;
  uint64_t flow_id = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    const TraceOp& o = ops[i];
    std::string name = o.reduce ? "recv+reduce" : kind_name(o.kind);
    if (o.peer >= 0) name += (o.kind == uint8_t(coll::OpKind::kSend) ? " to " : " from ") +
                              std::string("rank ") + std::to_string(o.peer);
    if (o.bytes) name += " " + format_bytes(o.bytes);
    const std::string pid = std::to_string(o.rank), tid = std::to_string(lane[i]);
    ev.push_back({o.start_ps,
                  "{\"ph\":\"X\",\"pid\":" + pid + ",\"tid\":" + tid + ",\"ts\":" + ts(o.start_ps) +
                      ",\"dur\":" + ts(o.end_ps - o.start_ps) + ",\"name\":" + q(name) +
                      ",\"cat\":\"" + kind_name(o.kind) + "\",\"args\":{\"row\":" +
                      std::to_string(o.window) + ",\"op\":" + std::to_string(o.op) +
                      ",\"bytes\":" + std::to_string(o.bytes) + "}}"});
    // A flow per dependency, from the dep's slice to this one, each end at its slice's
    // midpoint (strictly inside a slice of non-zero length).
    for (uint32_t d : o.deps) {
      const auto it = at.find({o.window, o.rank, d});
      if (it == at.end()) continue;
      const TraceOp& src = ops[it->second];
      const uint64_t s_at = src.start_ps + (src.end_ps - src.start_ps) / 2;
      const uint64_t f_at = o.start_ps + (o.end_ps - o.start_ps) / 2;
      const std::string id = std::to_string(++flow_id);
      ev.push_back({s_at, "{\"ph\":\"s\",\"pid\":" + pid + ",\"tid\":" +
                              std::to_string(lane[it->second]) + ",\"ts\":" + ts(s_at) +
                              ",\"id\":" + id + ",\"name\":\"dep\",\"cat\":\"dep\"}"});
      ev.push_back({f_at, "{\"ph\":\"f\",\"bp\":\"e\",\"pid\":" + pid + ",\"tid\":" + tid +
                              ",\"ts\":" + ts(f_at) + ",\"id\":" + id +
                              ",\"name\":\"dep\",\"cat\":\"dep\"}"});
    }
  }

  // Counter tracks: per device, one "utilisation" and one "queue_bytes" counter with an
  // argument per port; a sample is written only when some port's value changed.
  std::map<std::string, int> dev_pid;
  for (size_t d = 0; d < obs.devices().size(); ++d) dev_pid[obs.devices()[d].first] = int(d);
  std::map<int, std::vector<std::pair<const PortInfo*, const PortSeries*>>> by_dev;
  for (const auto& ps : obs.series()) by_dev[dev_pid[ps.first->device]].push_back(ps);
  const uint64_t end = obs.end_ps();
  for (const auto& [d, list] : by_dev) {
    const int pid = kDevicePid0 + d;
    add_meta(pid, 0, "process_name", obs.devices()[size_t(d)].first + " ports");
    add_sort(pid, 1000 + d);
    const uint64_t w = list.front().second->width_ps();
    size_t n = 0;
    for (const auto& [pi, s] : list) n = std::max(n, s->samples().size());
    std::string last_u, last_q;
    for (size_t k = 0; k < n && uint64_t(k) * w < end; ++k) {
      const uint64_t t0 = uint64_t(k) * w, t1 = std::min(end, t0 + w);
      std::string u, qd;
      for (const auto& [pi, s] : list) {
        const PortSeries::Sample x = k < s->samples().size() ? s->samples()[k] : PortSeries::Sample{};
        char b[64];
        std::snprintf(b, sizeof b, "%.4f", std::min(1.0, double(x.busy_ps) / double(t1 - t0)));
        u += (u.empty() ? "" : ",") + q("port[" + std::to_string(pi->index) + "]") + ":" + b;
        std::snprintf(b, sizeof b, "%.0f", x.queue_byte_ps / double(t1 - t0));
        qd += (qd.empty() ? "" : ",") + q("port[" + std::to_string(pi->index) + "]") + ":" + b;
      }
      const std::string p = std::to_string(pid);
      if (u != last_u)
        ev.push_back({t0, "{\"ph\":\"C\",\"pid\":" + p + ",\"ts\":" + ts(t0) +
                              ",\"name\":\"utilisation\",\"args\":{" + u + "}}"});
      if (qd != last_q)
        ev.push_back({t0, "{\"ph\":\"C\",\"pid\":" + p + ",\"ts\":" + ts(t0) +
                              ",\"name\":\"queue_bytes\",\"args\":{" + qd + "}}"});
      last_u = u;
      last_q = qd;
    }
  }

  std::stable_sort(ev.begin(), ev.end(),
                   [](const Event& a, const Event& b) { return a.at_ps < b.at_ps; });
  std::string out = "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"system\":" + q(spec.name) +
                    ",\"windows_left_out\":" + std::to_string(obs.trace_windows_left_out()) +
                    "},\"traceEvents\":[\n" + meta;
  for (size_t i = 0; i < ev.size(); ++i) out += ev[i].json + (i + 1 < ev.size() ? ",\n" : "\n");
  if (ev.empty() && !meta.empty()) out.erase(out.size() - 2, 1);  // trailing comma
  out += "]}\n";
  write_file(file, out);
}

}  // namespace fabricsim
