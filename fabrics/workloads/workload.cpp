#include "fabrics/workloads/workload.h"

#include <algorithm>
#include <cmath>

namespace fabricsim {

namespace {

// Rank counts at which shapes are measured directly; above, the shape is extrapolated.
constexpr int kDirectRanks = 64;
constexpr int kProbeMaxRanks = 512;

ScheduleShape measure(const WorkloadSpec& w, const std::string& collective,
                      const std::string& algorithm, int ranks, int domain_size) {
  coll::CollParams cp = w.coll_params(ranks, 4 * uint64_t(ranks));
  cp.channels = 1;
  cp.root = 0;
  if (!coll::has_levels(collective, algorithm)) cp.slices = 1;
  const coll::Schedule s = coll::make_schedule(collective, algorithm, cp, domain_size);
  ScheduleShape shape;
  for (const coll::Program& p : s.programs) {
    shape.ops += double(p.ops.size());
    for (const coll::Op& op : p.ops) shape.sends += op.kind == coll::OpKind::kSend ? 1 : 0;
  }
  return shape;
}

ScheduleShape shape_of(const WorkloadSpec& w, const std::string& collective,
                       const std::string& algorithm, int ranks, int domain_size) {
  const bool levels = domain_size > 0 && domain_size < ranks;
  if (!levels && ranks <= kDirectRanks) return measure(w, collective, algorithm, ranks, 0);
  // Two rank counts of the same shape (whole domains for two-level systems).
  int m1 = 32, m2 = 64;
  if (levels) {
    m1 = 2 * domain_size;
    m2 = 4 * domain_size;
  }
  if (m2 > kProbeMaxRanks || m2 >= ranks) {
    // One probe only (a huge domain, or few domains): assume ring-like n^2 growth.
    const int m = std::min(ranks, levels ? 2 * domain_size : kDirectRanks);
    const ScheduleShape s = measure(w, collective, algorithm, m, levels ? domain_size : 0);
    const double f = double(ranks) / m;
    return ScheduleShape{s.ops * f * f, s.sends * f * f};
  }
  const int d = levels ? domain_size : 0;
  const ScheduleShape a = measure(w, collective, algorithm, m1, d);
  const ScheduleShape b = measure(w, collective, algorithm, m2, d);
  const auto grow = [&](double x1, double x2) {
    if (x1 <= 0 || x2 <= 0) return x2;
    const double k = std::clamp(std::log(x2 / x1) / std::log(double(m2) / m1), 1.0, 2.5);
    return x2 * std::pow(double(ranks) / m2, k);
  };
  return ScheduleShape{grow(a.ops, b.ops), grow(a.sends, b.sends)};
}

}  // namespace

WorkloadCost collective_cost(const WorkloadSpec& w, const std::string& collective,
                             const std::string& algorithm, int ranks, int domain_size,
                             double bytes, uint64_t aggregate_min_message,
                             std::map<std::string, ScheduleShape>& shapes) {
  WorkloadCost c;
  if (ranks <= 1 || bytes <= 0) return c;
  const std::string key = collective + "/" + algorithm + "/" + std::to_string(ranks) + "/" +
                          std::to_string(domain_size);
  auto it = shapes.find(key);
  if (it == shapes.end())
    it = shapes.emplace(key, shape_of(w, collective, algorithm, ranks, domain_size)).first;
  const int d = domain_size > 0 && domain_size < ranks ? domain_size : 0;
  const double sent =
      coll::alpha_beta_time_s(coll::algo_info(collective, algorithm), ranks, bytes, 0, 1, d);
  const double pieces = std::ceil(sent / double(std::max<uint64_t>(1, w.chunk_bytes))) * ranks;
  c.schedule_ops = it->second.ops * w.channels + 2 * pieces;
  c.messages = it->second.sends * w.channels + pieces;
  c.payload_bytes = sent * ranks;
  c.piece_bytes =
      std::min(double(w.chunk_bytes), bytes / (double(ranks) * std::max(1, w.channels)));
  if (c.piece_bytes >= double(aggregate_min_message)) c.aggregated_bytes = c.payload_bytes;
  return c;
}

void add_cost(WorkloadCost& total, const WorkloadCost& c, double times) {
  total.schedule_ops += times * c.schedule_ops;
  total.payload_bytes += times * c.payload_bytes;
  total.aggregated_bytes += times * c.aggregated_bytes;
  total.messages += times * c.messages;
  total.data_bytes += times * c.data_bytes;
  total.piece_bytes = std::max(total.piece_bytes, c.piece_bytes);
}

Registry<WorkloadKind>& workloads() {
  static Registry<WorkloadKind> r("workload type");
  return r;
}

std::vector<uint64_t> WorkloadSpec::sizes() const {
  std::vector<uint64_t> out;
  for (uint64_t s = min_bytes; s <= max_bytes;) {
    out.push_back(s / elem_bytes * elem_bytes);
    if (s > max_bytes / step_factor) break;
    s *= step_factor;
  }
  return out;
}

coll::CollParams WorkloadSpec::coll_params(int ranks, uint64_t count) const {
  coll::CollParams cp;
  cp.ranks = ranks;
  cp.count = count;
  cp.elem_bytes = elem_bytes;
  cp.channels = channels;
  cp.chunk_bytes = chunk_bytes;
  cp.root = root;
  cp.slices = slices;
  return cp;
}

}  // namespace fabricsim
