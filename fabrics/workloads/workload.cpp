#include "fabrics/workloads/workload.h"

namespace fabricsim {

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
  cp.torus = torus;
  return cp;
}

}  // namespace fabricsim
