// What a run records beyond its whole-run statistics: per-row statistics (one window per
// schedule the engine runs: a sweep's size, a training job), sampled time series of port
// utilisation and queue depth, time-weighted queue-depth histograms, and the per-rank op
// intervals of a trace. The models only call the probes of models/core/stats.h and
// models/link/port.h and the engine's Observer; without --series, --histograms or --trace
// no probe is attached and a row costs one snapshot of every port's counters at each end.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fabrics/sim/system.h"
#include "fabrics/systems/system_spec.h"

namespace fabricsim {

struct ObserveOptions {
  uint64_t series_interval_ps = 0;   // time series sample width; 0: none
  size_t series_samples = 1000;      // samples kept per port; more double the width
  std::vector<std::string> ports;    // glob patterns ('*', '?') of ports to sample; empty: all
  bool histograms = false;           // queue-depth histograms -> percentiles per row
  bool trace = false;                // keep every op's interval for the trace
  bool device_windows = true;        // per-window device counters (a JSON snapshot each)
  size_t trace_max_ops = 200000;     // ops kept in the trace; later windows are left out
  // Every job as one window, from the first's start to the last's end (workloads of many
  // short jobs: ocs_phases); the trace then records no ops.
  bool one_window = false;
};

// One port of the system, in natural order (device graph order, then port index).
struct PortInfo {
  std::string name;      // "nvswitch0.port[3]"
  std::string device;    // "nvswitch0"
  std::string kind;      // the device's kind: "endpoint", "switch", ...
  int index = 0;         // port index on its device
  std::string peer;      // the port at the other end
  std::string link_type;
  Port* port = nullptr;
};

// Time-weighted histogram of a level in bytes: bucket 0 is level 0, then four buckets per
// power of two (upper edges within 19% of the level). Values are picoseconds at a level.
class LevelHistogram {
 public:
  static constexpr int kBuckets = 1 + 4 * 64;
  void add(uint64_t level, uint64_t ps) { ps_[bucket(level)] += ps; }
  static int bucket(uint64_t level);
  static uint64_t upper_edge(int bucket);  // the largest level in `bucket`
  // The level below which fraction `q` of the time was spent, as the upper edge of its
  // bucket; `since` (a copy taken earlier) is subtracted first.
  uint64_t quantile(double q, const LevelHistogram* since = nullptr) const;
  std::vector<uint64_t> ps_ = std::vector<uint64_t>(kBuckets, 0);
};

// Sampled utilisation and queue depth of one port: `capacity` samples of `width_ps` from
// time 0; when a time beyond them arrives, neighbours merge and the width doubles, so
// memory stays bounded whatever the run's length.
class PortSeries {
 public:
  PortSeries(uint64_t width_ps, size_t capacity) : width_ps_(width_ps), capacity_(capacity) {}
  void busy(uint64_t from_ps, uint64_t to_ps);
  void held(uint64_t from_ps, uint64_t to_ps, uint64_t level);
  uint64_t width_ps() const { return width_ps_; }
  struct Sample {
    uint64_t busy_ps = 0;
    double queue_byte_ps = 0;  // integral of the queue depth
    uint64_t queue_max = 0;
  };
  const std::vector<Sample>& samples() const { return s_; }

 private:
  void reach(uint64_t t_ps);  // coarsen until t_ps fits, grow to cover it
  uint64_t width_ps_;
  size_t capacity_;
  std::vector<Sample> s_;
};

// Statistics of one window (one schedule): per port, the counters' increments, the
// utilisation, queue max/mean (and percentiles with histograms); per device, its counters'
// increments; the busiest port.
struct WindowStats {
  std::string label;  // the schedule's algorithm or job name
  uint64_t start_ps = 0, end_ps = 0;
  std::vector<nlohmann::json> ports;    // PortInfo order
  std::vector<nlohmann::json> devices;  // graph order
  int bottleneck = -1;                  // index into ports; -1: no traffic
};

// One op of a rank in the trace: [start_ps, end_ps], what it was, its deps.
struct TraceOp {
  uint64_t start_ps = 0, end_ps = 0;
  uint32_t window = 0, rank = 0, op = 0;
  uint8_t kind = 0;     // coll::OpKind
  bool reduce = false;  // a receive that reduces into the buffer
  int peer = -1;
  uint64_t bytes = 0;
  std::vector<uint32_t> deps;  // op indices of the same rank and window
};

class Observation : public CollectiveEngine::Observer {
 public:
  Observation(System& sys, const SystemSpec& spec, ObserveOptions o);
  ~Observation() override;

  void started(const coll::Schedule& s, uint64_t now_ps) override;
  void finished(const coll::Schedule& s, uint64_t now_ps) override;
  // At the end of the run: closes the series' and histograms' last intervals.
  void finish(uint64_t now_ps);

  const std::vector<PortInfo>& ports() const { return ports_; }
  const std::vector<WindowStats>& windows() const { return windows_; }
  const std::vector<TraceOp>& trace_ops() const { return ops_; }
  size_t trace_windows_left_out() const { return trace_left_out_; }
  const ObserveOptions& options() const { return o_; }
  uint64_t end_ps() const { return end_ps_; }
  // Ports with a series, and each one's series (same order).
  std::vector<std::pair<const PortInfo*, const PortSeries*>> series() const;
  // Device names and kinds in graph order.
  const std::vector<std::pair<std::string, std::string>>& devices() const { return devices_; }
  // The whole run's percentiles of a port's queue depth (histograms only; else null).
  nlohmann::json queue_percentiles(size_t port) const;

 private:
  class Probe;
  struct Snapshot {
    uint64_t at_ps = 0;
    std::vector<Port::Counters> ports;
    std::vector<nlohmann::json> devices;
    std::vector<u128> queue_integral;
    std::vector<LevelHistogram> hist;
  };
  Snapshot snapshot(uint64_t now_ps) const;
  void record_ops(const coll::Schedule& s, uint32_t window);

  System& sys_;
  const SystemSpec& spec_;
  ObserveOptions o_;
  std::vector<PortInfo> ports_;
  std::vector<std::pair<std::string, std::string>> devices_;
  std::vector<std::unique_ptr<Probe>> probes_;  // per port (null: not observed)
  Snapshot at_start_;
  bool started_once_ = false;            // one_window: the window's start is taken
  bool pending_ = false;                 // one_window: a job ended, its window not built
  uint64_t pending_end_ps_ = 0;
  std::string pending_label_;
  void close_window(const std::string& label, uint64_t end_ps, const Snapshot& end);
  std::vector<WindowStats> windows_;
  std::vector<TraceOp> ops_;
  size_t trace_left_out_ = 0;
  uint64_t end_ps_ = 0;
};

// True if `name` matches the glob `pattern` ('*' any run, '?' one character; '[' and ']'
// are literal, so "gpu0.port[3]" matches itself).
bool glob_match(const std::string& pattern, const std::string& name);

}  // namespace fabricsim
