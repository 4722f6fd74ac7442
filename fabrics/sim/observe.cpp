#include "fabrics/sim/observe.h"

#include <algorithm>

#include "models/core/errors.h"

namespace fabricsim {

bool glob_match(const std::string& pattern, const std::string& name) {
  // Iterative wildcard match with one backtrack point (the last '*').
  size_t p = 0, n = 0, star = std::string::npos, mark = 0;
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p;
      ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = n;
    } else if (star != std::string::npos) {
      p = star + 1;
      n = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

// ---------------------------------------------------------------------------------------
// LevelHistogram

int LevelHistogram::bucket(uint64_t level) {
  if (level == 0) return 0;
  const int k = 63 - __builtin_clzll(level);  // level in [2^k, 2^(k+1))
  const int sub = k >= 2 ? int((level >> (k - 2)) & 3) : int(level - (uint64_t(1) << k));
  return 1 + 4 * k + sub;
}

uint64_t LevelHistogram::upper_edge(int b) {
  if (b == 0) return 0;
  const int k = (b - 1) / 4, sub = (b - 1) % 4;
  if (k < 2) return (uint64_t(1) << k) + uint64_t(sub);
  const uint64_t step = uint64_t(1) << (k - 2);
  return (uint64_t(1) << k) + (uint64_t(sub) + 1) * step - 1;
}

uint64_t LevelHistogram::quantile(double q, const LevelHistogram* since) const {
  std::vector<uint64_t> v = ps_;
  if (since)
    for (int b = 0; b < kBuckets; ++b) v[b] -= since->ps_[b];
  uint64_t total = 0;
  for (uint64_t x : v) total += x;
  if (total == 0) return 0;
  const double want = q * double(total);
  uint64_t acc = 0;
  for (int b = 0; b < kBuckets; ++b) {
    acc += v[b];
    if (double(acc) >= want && v[b] > 0) return upper_edge(b);
  }
  return upper_edge(kBuckets - 1);
}

// ---------------------------------------------------------------------------------------
// PortSeries

void PortSeries::reach(uint64_t t_ps) {
  // Samples cover [0, capacity x width); a later time merges neighbours and doubles it.
  while (t_ps > uint64_t(capacity_) * width_ps_) {
    std::vector<Sample> m((s_.size() + 1) / 2);
    for (size_t i = 0; i < s_.size(); ++i) {
      Sample& d = m[i / 2];
      d.busy_ps += s_[i].busy_ps;
      d.queue_byte_ps += s_[i].queue_byte_ps;
      d.queue_max = std::max(d.queue_max, s_[i].queue_max);
    }
    s_.swap(m);
    width_ps_ *= 2;
  }
  const size_t need = t_ps == 0 ? 1 : size_t((t_ps - 1) / width_ps_) + 1;
  if (s_.size() < need) s_.resize(need);
}

void PortSeries::busy(uint64_t from_ps, uint64_t to_ps) {
  if (to_ps <= from_ps) return;
  reach(to_ps);
  for (uint64_t a = from_ps; a < to_ps;) {
    const size_t i = size_t(a / width_ps_);
    const uint64_t e = std::min(to_ps, (i + 1) * width_ps_);
    s_[i].busy_ps += e - a;
    a = e;
  }
}

void PortSeries::held(uint64_t from_ps, uint64_t to_ps, uint64_t level) {
  if (to_ps <= from_ps) return;
  reach(to_ps);
  for (uint64_t a = from_ps; a < to_ps;) {
    const size_t i = size_t(a / width_ps_);
    const uint64_t e = std::min(to_ps, (i + 1) * width_ps_);
    s_[i].queue_byte_ps += double(level) * double(e - a);
    if (level > s_[i].queue_max) s_[i].queue_max = level;
    a = e;
  }
}

// ---------------------------------------------------------------------------------------
// Observation

// The probe attached to one observed port: its series and/or its histogram.
class Observation::Probe : public PortProbe {
 public:
  std::unique_ptr<PortSeries> series;
  std::unique_ptr<LevelHistogram> hist;
  void busy(uint64_t from_ps, uint64_t to_ps) override {
    if (series) series->busy(from_ps, to_ps);
  }
  void held(uint64_t from_ps, uint64_t to_ps, uint64_t level) override {
    if (series) series->held(from_ps, to_ps, level);
    if (hist && to_ps > from_ps) hist->add(level, to_ps - from_ps);
  }
};

namespace {

// Counters of a stats_json object: unsigned integers that are not maxima or averages.
bool is_counter(const std::string& key, const nlohmann::json& v) {
  return v.is_number_unsigned() && key.find("_max") == std::string::npos &&
         key.find("_avg") == std::string::npos;
}

// Increments of every counter of `end` over `start`.
nlohmann::json counter_delta(const nlohmann::json& start, const nlohmann::json& end) {
  nlohmann::json d = nlohmann::json::object();
  for (auto it = end.begin(); it != end.end(); ++it) {
    if (!is_counter(it.key(), it.value())) continue;
    const auto s = start.find(it.key());
    const uint64_t before = s != start.end() && s->is_number_unsigned() ? s->get<uint64_t>() : 0;
    d[it.key()] = it.value().get<uint64_t>() - before;
  }
  return d;
}

// A port's counters as results.json names them, increments of `e` over `s`. One list: a
// counter added to Port::Counters is added here.
nlohmann::json port_delta(const Port::Counters& s, const Port::Counters& e) {
  nlohmann::json d;
#define FABRICSIM_DELTA(field) d[#field] = e.field - s.field
  FABRICSIM_DELTA(tx_payload_bytes);
  FABRICSIM_DELTA(tx_wire_bytes);
  FABRICSIM_DELTA(tx_packets);
  FABRICSIM_DELTA(tx_transactions);
  FABRICSIM_DELTA(rx_payload_bytes);
  FABRICSIM_DELTA(rx_packets);
  FABRICSIM_DELTA(busy_ps);
  FABRICSIM_DELTA(credit_stall_ps);
  FABRICSIM_DELTA(crc_errors);
  FABRICSIM_DELTA(replays);
  FABRICSIM_DELTA(replay_wire_bytes);
  FABRICSIM_DELTA(retry_ps);
  FABRICSIM_DELTA(replay_stall_ps);
#undef FABRICSIM_DELTA
  return d;
}

}  // namespace

Observation::Observation(System& sys, const SystemSpec& spec, ObserveOptions o)
    : sys_(sys), spec_(spec), o_(std::move(o)) {
  const topo::Graph& g = spec.graph;
  for (size_t d = 0; d < g.devices.size(); ++d) {
    const std::string kind = spec.type_of(int(d)).kind->name;
    devices_.emplace_back(g.devices[d].name, kind);
    for (int p = 0; p < g.devices[d].ports; ++p) {
      // A port on a dark circuit is left out, unless reconfigurations may light it.
      if (g.peer(int(d), p).device < 0 &&
          (spec.faults.reconfigs.empty() || g.physical_peer(int(d), p).device < 0))
        continue;
      Port& port = sys.devices()[d]->port(p);
      ports_.push_back(PortInfo{port.display_name(), g.devices[d].name, kind, p, port.peer_name(),
                                port.link().type_name, &port});
    }
  }
  probes_.resize(ports_.size());
  if (o_.series_interval_ps || o_.histograms) {
    for (size_t i = 0; i < ports_.size(); ++i) {
      bool sampled = o_.series_interval_ps > 0 && o_.ports.empty();
      for (const std::string& pat : o_.ports) sampled = sampled || glob_match(pat, ports_[i].name);
      if (!sampled && !o_.histograms) continue;
      auto pr = std::make_unique<Probe>();
      if (sampled && o_.series_interval_ps)
        pr->series = std::make_unique<PortSeries>(o_.series_interval_ps, o_.series_samples);
      if (o_.histograms) pr->hist = std::make_unique<LevelHistogram>();
      ports_[i].port->set_probe(pr.get());
      probes_[i] = std::move(pr);
    }
  }
  sys.engine().set_observer(this);
}

Observation::~Observation() {
  for (size_t i = 0; i < ports_.size(); ++i)
    if (probes_[i]) ports_[i].port->set_probe(nullptr);
  sys_.engine().set_observer(nullptr);
}

Observation::Snapshot Observation::snapshot(uint64_t now_ps) const {
  Snapshot s;
  for (size_t i = 0; i < ports_.size(); ++i) {
    s.ports.push_back(ports_[i].port->counters());
    s.queue_integral.push_back(ports_[i].port->queue_stat().integral(now_ps));
    if (o_.histograms) s.hist.push_back(probes_[i] ? *probes_[i]->hist : LevelHistogram{});
  }
  // Devices' counters are whatever their stats hold (features' too): JSON, so only when
  // a window's device statistics are written.
  if (o_.device_windows)
    for (const auto& d : sys_.devices()) s.devices.push_back(d->stats_json(now_ps));
  s.at_ps = now_ps;
  return s;
}

void Observation::started(const coll::Schedule&, uint64_t now_ps) {
  if (o_.one_window && started_once_) return;
  started_once_ = true;
  at_start_ = snapshot(now_ps);
  for (PortInfo& p : ports_) p.port->queue_stat().take_window_max();
}

void Observation::finished(const coll::Schedule& s, uint64_t now_ps) {
  if (o_.one_window) {  // built once, at the end of the run (finish)
    pending_ = true;
    pending_end_ps_ = now_ps;
    pending_label_ = s.algorithm;
    return;
  }
  close_window(s.algorithm, now_ps, snapshot(now_ps));
  if (o_.trace) record_ops(s, uint32_t(windows_.size() - 1));
}

void Observation::close_window(const std::string& label, uint64_t now_ps, const Snapshot& end) {
  WindowStats w;
  w.label = label;
  w.start_ps = at_start_.at_ps;
  w.end_ps = now_ps;
  const uint64_t span = now_ps - w.start_ps;
  double best = 0;
  for (size_t i = 0; i < ports_.size(); ++i) {
    nlohmann::json d = port_delta(at_start_.ports[i], end.ports[i]);
    const uint64_t busy = end.ports[i].busy_ps - at_start_.ports[i].busy_ps;
    const double util = span ? double(busy) / double(span) : 0.0;
    d["utilisation"] = util;
    d["queue_max_bytes"] = ports_[i].port->queue_stat().take_window_max();
    d["queue_mean_bytes"] =
        span ? double(end.queue_integral[i] - at_start_.queue_integral[i]) / double(span) : 0.0;
    if (o_.histograms && probes_[i]) {
      const LevelHistogram& h = *probes_[i]->hist;
      d["queue_p50_bytes"] = h.quantile(0.50, &at_start_.hist[i]);
      d["queue_p90_bytes"] = h.quantile(0.90, &at_start_.hist[i]);
      d["queue_p99_bytes"] = h.quantile(0.99, &at_start_.hist[i]);
    }
    if (util > best) {  // first busiest port in natural order
      best = util;
      w.bottleneck = int(i);
    }
    w.ports.push_back(std::move(d));
  }
  for (size_t i = 0; i < end.devices.size(); ++i)
    w.devices.push_back(counter_delta(at_start_.devices[i], end.devices[i]));
  windows_.push_back(std::move(w));
}

// Every op's interval from the engine's completion times: an op starts when its last dep
// completes (ops without deps at the schedule's launch); a compute op runs for its
// duration before it completes (the rank's compute unit may have delayed its start).
void Observation::record_ops(const coll::Schedule& s, uint32_t window) {
  size_t n = 0;
  for (const coll::Program& p : s.programs) n += p.ops.size();
  if (ops_.size() + n > o_.trace_max_ops) {
    ++trace_left_out_;
    return;
  }
  const uint64_t launch = windows_.back().start_ps + spec_.workload.sync.launch_latency_ps;
  const CollectiveEngine& e = sys_.engine();
  for (size_t r = 0; r < s.programs.size(); ++r) {
    const std::vector<coll::Op>& ops = s.programs[r].ops;
    for (uint32_t i = 0; i < ops.size(); ++i) {
      const coll::Op& op = ops[i];
      TraceOp t;
      t.window = window;
      t.rank = uint32_t(r);
      t.op = i;
      t.kind = uint8_t(op.kind);
      t.reduce = op.kind == coll::OpKind::kRecv && op.mode == coll::RecvMode::kReduceSum;
      t.peer = op.peer;
      t.bytes = op.count * spec_.workload.elem_bytes;
      t.deps = op.deps;
      t.end_ps = e.op_done_ps(int(r), i);
      uint64_t ready = op.deps.empty() ? launch : 0;
      for (uint32_t d : op.deps) ready = std::max(ready, e.op_done_ps(int(r), d));
      t.start_ps = op.kind == coll::OpKind::kCompute ? t.end_ps - op.duration_ps : ready;
      ops_.push_back(std::move(t));
    }
  }
}

void Observation::finish(uint64_t now_ps) {
  end_ps_ = now_ps;
  // one_window: the jobs' window, from the first start to the last end (the counters as
  // they are now: nothing moves after the last job but its last credits).
  if (pending_) {
    close_window(pending_label_, pending_end_ps_, snapshot(now_ps));
    pending_ = false;
  }
  // Close every observed queue's last level up to the end (same integral, same maxima).
  for (size_t i = 0; i < ports_.size(); ++i)
    if (probes_[i]) ports_[i].port->close_level(now_ps);
}

std::vector<std::pair<const PortInfo*, const PortSeries*>> Observation::series() const {
  std::vector<std::pair<const PortInfo*, const PortSeries*>> out;
  for (size_t i = 0; i < ports_.size(); ++i)
    if (probes_[i] && probes_[i]->series) out.emplace_back(&ports_[i], probes_[i]->series.get());
  return out;
}

nlohmann::json Observation::queue_percentiles(size_t port) const {
  if (!probes_.at(port) || !probes_[port]->hist) return nullptr;
  const LevelHistogram& h = *probes_[port]->hist;
  return {{"queue_p50_bytes", h.quantile(0.50)},
          {"queue_p90_bytes", h.quantile(0.90)},
          {"queue_p99_bytes", h.quantile(0.99)}};
}

}  // namespace fabricsim
