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
                             std::map<std::string, ScheduleShape>& shapes,
                             const std::vector<coll::Protocol>& auto_protocols) {
  WorkloadCost c;
  if (ranks <= 1 || bytes <= 0) return c;
  const std::string key = collective + "/" + algorithm + "/" + std::to_string(ranks) + "/" +
                          std::to_string(domain_size);
  auto it = shapes.find(key);
  if (it == shapes.end())
    it = shapes.emplace(key, shape_of(w, collective, algorithm, ranks, domain_size)).first;
  const int d = domain_size > 0 && domain_size < ranks ? domain_size : 0;
  const coll::AlgoInfo& info = coll::algo_info(collective, algorithm);
  const double sent = coll::alpha_beta_time_s(info, ranks, bytes, 0, 1, d);
  // The pieces and channels of each protocol it may run (the protocol model: its step as
  // the piece, its line format on the wire); the costliest.
  // (Size sweeps only: training workloads run their collectives without the protocol
  // model's steps, and leave them unset.)
  const bool model = w.protocol_model() && w.proto.step_bytes[0] > 0;
  std::vector<coll::Protocol> protos{coll::Protocol::kSimple};
  if (model && w.protocol == "auto")
    protos = auto_protocols.empty()
                 ? std::vector<coll::Protocol>{coll::Protocol::kSimple, coll::Protocol::kLL,
                                               coll::Protocol::kLL128}
                 : auto_protocols;
  else if (model)
    protos = {coll::protocol_from_name(w.protocol)};
  const uint64_t count = uint64_t(bytes) / std::max<uint32_t>(1, w.elem_bytes);
  double nvls_request_bytes = 0;
  for (coll::Protocol p : protos) {
    // auto picks ll for latency-bound sizes only: on the shipped GPUs up to 128-256 KiB
    // per rank (its lines double the bytes and its small stores multiply the packets).
    if (p == coll::Protocol::kLL && w.protocol == "auto" && bytes > 256.0 * 1024 * ranks)
      continue;
    const coll::CollParams cp =
        model ? w.coll_params(ranks, count, algorithm, p) : w.coll_params(ranks, count);
    const double chunk = double(std::max<uint64_t>(1, cp.chunk_bytes));
    const int channels = std::max(1, cp.channels);
    const double pieces = std::ceil(sent / chunk) * ranks;
    WorkloadCost x;
    x.schedule_ops = it->second.ops * channels + 2 * pieces;
    x.messages = it->second.sends * channels + pieces;
    x.payload_bytes = sent * ranks / coll::protocol_efficiency(p);
    x.piece_bytes = std::min(chunk, bytes / (double(ranks) * channels));
    if (x.piece_bytes >= double(aggregate_min_message)) x.aggregated_bytes = x.payload_bytes;
    if (p == coll::Protocol::kLL) x.ll_bytes = x.payload_bytes - x.aggregated_bytes;
    if (info.in_switch)
      nvls_request_bytes = std::max(nvls_request_bytes, double(coll::kNvlsWindow) * channels *
                                                            x.piece_bytes * ranks);
    // The costliest: the most transactions, LL's counted at its smallest stores (32 B).
    const auto work = [](const WorkloadCost& y) {
      return y.messages + (y.payload_bytes - y.aggregated_bytes - y.ll_bytes) / 128 +
             y.ll_bytes / 32;
    };
    if (work(x) > work(c)) c = x;
  }
  c.nvls_request_bytes = nvls_request_bytes;  // the largest window of any protocol
  c.nvls_group = info.in_switch ? (d > 0 ? d : ranks) : 0;
  return c;
}

void add_cost(WorkloadCost& total, const WorkloadCost& c, double times) {
  total.schedule_ops += times * c.schedule_ops;
  total.payload_bytes += times * c.payload_bytes;
  total.aggregated_bytes += times * c.aggregated_bytes;
  total.messages += times * c.messages;
  total.ll_bytes += times * c.ll_bytes;
  total.data_bytes += times * c.data_bytes;
  total.piece_bytes = std::max(total.piece_bytes, c.piece_bytes);
  total.nvls_request_bytes = std::max(total.nvls_request_bytes, c.nvls_request_bytes);
  total.nvls_group = std::max(total.nvls_group, c.nvls_group);
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
  cp.torus = torus;
  return cp;
}

coll::CollParams WorkloadSpec::coll_params(int ranks, uint64_t count,
                                           const std::string& algo,
                                           coll::Protocol p) const {
  coll::CollParams cp = coll_params(ranks, count);
  // channels: auto counts NCCL's channels; a tree pair is two of them (c and c + n/2),
  // and the model's tree channel runs both trees.
  const bool tree_pairs = channels_auto && algo == "tree";
  cp.channels = algo_channels(algo);
  if (!protocol_model()) return cp;
  const uint64_t bytes = count * elem_bytes;
  if (coll::uses_nvls_switches(algo)) {  // NCCL's NVLS: its channels and chunk
    // With auto, NCCL's own NVLS count (NCCL_NVLS_NCHANNELS), whatever the rings'.
    cp.channels = channels_auto ? proto.nvls_channels : std::min(channels, proto.nvls_channels);
    cp.chunk_bytes =
        coll::nvls_piece_bytes(proto, bytes, uint64_t(cp.channels) * uint64_t(ranks));
    return cp;
  }
  // NCCL multiplies LL's per-thread threshold by the ranks for rings only.
  const bool ring = algo == "ring";
  cp.channels = coll::protocol_channels(proto, p, bytes, ring ? ranks : 1, channels);
  if (tree_pairs) cp.channels = std::max(1, cp.channels / 2);
  cp.chunk_bytes = proto.step_bytes[int(p)];
  cp.tree_nccl_chunks =
      algo == "tree" && p == coll::Protocol::kSimple && proto.tree_chunk_halving;
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
