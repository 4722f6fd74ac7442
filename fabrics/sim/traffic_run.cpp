#include "fabrics/sim/traffic_run.h"

#include <algorithm>
#include <cstdio>

#include "models/core/errors.h"

namespace fabricsim {

TrafficWorkload::TrafficWorkload(const SystemSpec& spec) : spec_(spec) {
  const WorkloadSpec& w = spec.workload;
  coll::Schedule s;
  s.algorithm = w.type;
  s.ranks = int(spec.ranks.size());
  s.programs.resize(size_t(s.ranks));
  for (size_t i = 0; i < w.flows.size(); ++i) {
    const Flow& f = w.flows[i];
    s.count = std::max(s.count, f.bytes);
    std::vector<coll::Op>& src = s.programs[size_t(f.src)].ops;
    std::vector<uint32_t> deps;
    if (f.start_ps > 0) {
      coll::Op d;
      d.kind = coll::OpKind::kDelay;
      d.duration_ps = f.start_ps;
      src.push_back(d);
      deps.push_back(uint32_t(src.size() - 1));
    }
    coll::Op send;
    send.kind = coll::OpKind::kSend;
    send.peer = f.dst;
    send.tag = i + 1;
    send.count = f.bytes;
    send.deps = deps;
    src.push_back(send);
    FlowOps o;
    o.send_op = uint32_t(src.size() - 1);
    std::vector<coll::Op>& dst = s.programs[size_t(f.dst)].ops;
    coll::Op recv;
    recv.kind = coll::OpKind::kRecv;
    recv.peer = f.src;
    recv.tag = i + 1;
    recv.count = f.bytes;
    dst.push_back(recv);
    o.recv_op = uint32_t(dst.size() - 1);
    ops_.push_back(o);
  }
  coll::validate(s);
  jobs_.push_back(std::move(s));
}

std::vector<coll::Schedule> TrafficWorkload::take_jobs() { return std::move(jobs_); }

void TrafficWorkload::job_done(uint64_t start_ps, uint64_t end_ps, const CollectiveEngine& e) {
  const WorkloadSpec& w = spec_.workload;
  uint64_t total = 0;
  double sum = 0, sum2 = 0;
  fct_ps_.clear();
  for (size_t i = 0; i < w.flows.size(); ++i) {
    const Flow& f = w.flows[i];
    const uint64_t done = e.op_done_ps(f.dst, ops_[i].recv_op);
    FABRICSIM_ASSERT(done != UINT64_MAX, "traffic: a flow did not complete");
    const uint64_t fct = done - start_ps - f.start_ps;
    fct_ps_.push_back(fct);
    total += f.bytes;
    const double rate = double(f.bytes) / double(fct);  // bytes per ps
    sum += rate;
    sum2 += rate * rate;
  }
  std::vector<uint64_t> sorted = fct_ps_;
  std::sort(sorted.begin(), sorted.end());
  const auto pct = [&](double q) {  // nearest rank
    const size_t k = size_t(std::max(1.0, q * double(sorted.size()) + 0.999999)) - 1;
    return double(sorted[std::min(k, sorted.size() - 1)]) * 1e-6;
  };
  const uint64_t makespan = end_ps - start_ps;
  const size_t n = w.flows.size();
  summary_ = {{"flows", n},
              {"bytes", total},
              {"makespan_us", double(makespan) * 1e-6},
              {"goodput_GBps", double(total) / double(makespan) * 1e3},
              {"mean_rate_GBps", n ? sum / double(n) * 1e3 : 0.0},
              {"fct_min_us", pct(0)},
              {"fct_p50_us", pct(0.5)},
              {"fct_p99_us", pct(0.99)},
              {"fct_max_us", pct(1.0)},
              {"jain_fairness", n ? sum * sum / (double(n) * sum2) : 1.0}};
}

void TrafficWorkload::print(std::ostream& os) const {
  const WorkloadSpec& w = spec_.workload;
  char buf[512];
  const std::string what =
      w.type == "incast" ? "incast " + std::to_string(w.flows.size()) + ":1" : w.type;
  std::snprintf(buf, sizeof buf, "# fabricsim: %s, %s, %zu flows of %llu B, %zu ranks, seed %llu\n",
                spec_.name.c_str(), what.c_str(), w.flows.size(),
                (unsigned long long)(w.flows.empty() ? 0 : w.flows[0].bytes), spec_.ranks.size(),
                (unsigned long long)spec_.seed);
  os << buf;
  os << "# goodput = all flows' bytes / makespan; a flow's rate = its bytes / its fct (start "
        "to last byte delivered); jain = fairness of the rates; GB/s = 1e9 B/s\n#\n";
  if (w.flows.size() <= 32) {
    os << "#   flow    src    dst        bytes     fct(us)   rate(GB/s)\n";
    for (size_t i = 0; i < w.flows.size(); ++i) {
      const Flow& f = w.flows[i];
      std::snprintf(buf, sizeof buf, "%8zu %6d %6d %12llu %11.2f %12.2f\n", i, f.src, f.dst,
                    (unsigned long long)f.bytes, double(fct_ps_[i]) * 1e-6,
                    double(f.bytes) / double(fct_ps_[i]) * 1e3);
      os << buf;
    }
  }
  const nlohmann::json& s = summary_;
  std::snprintf(buf, sizeof buf,
                "# makespan %.2f us, goodput %.2f GB/s, mean flow rate %.2f GB/s; fct min %.2f, "
                "p50 %.2f, p99 %.2f, max %.2f us; jain %.4f\n",
                s["makespan_us"].get<double>(), s["goodput_GBps"].get<double>(),
                s["mean_rate_GBps"].get<double>(),
                s["fct_min_us"].get<double>(), s["fct_p50_us"].get<double>(),
                s["fct_p99_us"].get<double>(), s["fct_max_us"].get<double>(),
                s["jain_fairness"].get<double>());
  os << buf;
}

nlohmann::json TrafficWorkload::rows_json() const {
  nlohmann::json rows = nlohmann::json::array();
  const WorkloadSpec& w = spec_.workload;
  for (size_t i = 0; i < w.flows.size(); ++i) {
    const Flow& f = w.flows[i];
    rows.push_back({{"src", f.src},
                    {"dst", f.dst},
                    {"bytes", f.bytes},
                    {"start_us", double(f.start_ps) * 1e-6},
                    {"fct_us", double(fct_ps_[i]) * 1e-6},
                    {"rate_GBps", double(f.bytes) / double(fct_ps_[i]) * 1e3}});
  }
  return rows;
}

nlohmann::json TrafficWorkload::units_json() const {
  return {{"src", "rank"},         {"dst", "rank"}, {"bytes", "B"},
          {"start_us", "us"},      {"fct_us", "us (start to last byte delivered)"},
          {"rate_GBps", "GB/s (1e9 B/s): bytes / fct"}};
}

}  // namespace fabricsim
