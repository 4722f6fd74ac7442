#include "models/collectives/cost.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "models/collectives/algorithms.h"
#include "models/core/errors.h"

namespace fabricsim::coll {

AlgoCost schedule_cost(const std::string& collective, const std::string& algorithm,
                       int channels, uint32_t elem_bytes, int root, const FabricCosts& f,
                       int slices) {
  const int n = f.ranks;
  AlgoCost cost;
  if (n <= 1) return cost;
  CollParams p;
  p.ranks = n;
  p.count = 8ull * static_cast<uint64_t>(channels) * static_cast<uint64_t>(n) *
            static_cast<uint64_t>(std::max(slices, 1));
  p.elem_bytes = elem_bytes;
  p.channels = channels;
  p.chunk_bytes = 1ull << 50;  // one piece per message
  p.root = root;
  p.slices = slices;
  const Schedule s = make_schedule(collective, algorithm, p, f.domain_size);
  const double ref_bytes = static_cast<double>(p.count) * elem_bytes;

  // Bandwidth: bytes per (rank, group) over the group's rate; the groups of a rank run in
  // parallel (max), except in hierarchical, whose groups serve its phases in turn (sum),
  // or with slices as a pipeline (max plus 1/slices of the rest).
  const bool phased = algorithm == "hierarchical" || algorithm == "hierarchical_nvls";
  double worst = 0;
  for (int r = 0; r < n; ++r) {
    std::map<int, double> bytes;
    for (const Op& op : s.programs[static_cast<std::size_t>(r)].ops)
      if (op.kind == OpKind::kSend)
        bytes[f.path(r, op.peer).group] += static_cast<double>(op.count) * elem_bytes;
    double sum = 0, most = 0;
    for (const auto& [g, b] : bytes) {
      const double t = b / f.group_Bps(r, g);
      sum += t;
      most = std::max(most, t);
    }
    const double rank_time = !phased ? most : most + (sum - most) / std::max(slices, 1);
    worst = std::max(worst, rank_time);
  }
  cost.s_per_byte = worst / ref_bytes;

  // Latency: longest dependent message chain, every op in program order per rank.
  struct Key {
    int src, dst;
    uint64_t tag;
    bool operator<(const Key& o) const {
      return std::tie(src, dst, tag) < std::tie(o.src, o.dst, o.tag);
    }
  };
  std::map<Key, double> send_start;  // (src, dst, tag) -> start time of the send
  std::vector<std::vector<double>> done(static_cast<std::size_t>(n));
  std::vector<std::size_t> next(static_cast<std::size_t>(n), 0);
  std::size_t left = 0;
  for (int r = 0; r < n; ++r) {
    done[static_cast<std::size_t>(r)].assign(s.programs[static_cast<std::size_t>(r)].ops.size(), 0);
    left += s.programs[static_cast<std::size_t>(r)].ops.size();
  }
  double latest = 0;
  while (left > 0) {
    bool progress = false;
    for (int r = 0; r < n; ++r) {
      const auto& ops = s.programs[static_cast<std::size_t>(r)].ops;
      std::size_t& i = next[static_cast<std::size_t>(r)];
      auto& d = done[static_cast<std::size_t>(r)];
      while (i < ops.size()) {
        const Op& op = ops[i];
        double t = 0;
        for (uint32_t dep : op.deps) t = std::max(t, d[dep]);
        if (op.kind == OpKind::kRecv) {
          auto it = send_start.find(Key{op.peer, r, op.tag});
          if (it == send_start.end()) break;  // its send has not been reached yet
          t = std::max(t, it->second + f.path(op.peer, r).alpha_s);
          send_start.erase(it);
        } else if (op.kind == OpKind::kSend) {
          send_start[Key{r, op.peer, op.tag}] = t;
        }
        d[i] = t;
        latest = std::max(latest, t);
        ++i;
        --left;
        progress = true;
      }
    }
    if (!progress)
      throw InternalError("schedule_cost: " + collective + "/" + algorithm +
                          " cannot complete in program order");
  }
  cost.latency_s = latest;
  return cost;
}

}  // namespace fabricsim::coll
