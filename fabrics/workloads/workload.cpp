#include "fabrics/workloads/workload.h"

#include <algorithm>

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

coll::CollParams WorkloadSpec::coll_params(int ranks, uint64_t count,
                                           const std::string& algo,
                                           coll::Protocol p) const {
  coll::CollParams cp = coll_params(ranks, count);
  if (!protocol_model()) return cp;
  const uint64_t bytes = count * elem_bytes;
  if (coll::uses_nvls_switches(algo)) {  // NCCL's NVLS: its channels and chunk
    cp.channels = std::min(channels, proto.nvls_channels);
    cp.chunk_bytes =
        coll::nvls_piece_bytes(proto, bytes, uint64_t(cp.channels) * uint64_t(ranks));
    return cp;
  }
  // NCCL multiplies LL's per-thread threshold by the ranks for rings only.
  const bool ring = algo == "ring";
  cp.channels = coll::protocol_channels(proto, p, bytes, ring ? ranks : 1, channels);
  cp.chunk_bytes = proto.step_bytes[int(p)];
  if (!ring) return cp;
  // Rings run NCCL's loop order. Simple: a chunk of 4 steps (ALLREDUCE_CHUNKSTEPS) is
  // signalled in 2 slices of 2 steps; a block smaller than a chunk is one chunk, its slice
  // half of it (whole elements in 16s), at least a 32nd of a full slice (NCCL prims:
  // sliceSize = max(divUp(nelem, 16 * SlicePerChunk) * 16, sliceSize / 32)).
  cp.loop_slices = 1;
  if (p != coll::Protocol::kSimple) return cp;
  cp.loop_slices = 2;
  const uint64_t full = 2 * proto.step_bytes[int(p)];
  const uint64_t block = (bytes + uint64_t(cp.channels) * uint64_t(ranks) - 1) /
                         (uint64_t(cp.channels) * uint64_t(ranks));
  const uint64_t unit = 16 * uint64_t(elem_bytes);
  const uint64_t half = ((block + 1) / 2 + unit - 1) / unit * unit;
  cp.chunk_bytes = std::min(full, std::max(half, full / 32));
  return cp;
}

}  // namespace fabricsim
