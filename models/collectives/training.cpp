// Training workload generators (training.h).
#include "models/collectives/training.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "models/collectives/algorithms.h"
#include "models/core/errors.h"
#include "models/core/rng.h"

namespace fabricsim::coll {

namespace {

Schedule coll_schedule(const char* collective, const std::string& algorithm, int n,
                       uint64_t count, const CommParams& c) {
  CollParams cp;
  cp.ranks = n;
  cp.count = count;
  cp.elem_bytes = c.elem_bytes;
  cp.channels = c.channels;
  cp.chunk_bytes = c.chunk_bytes;
  return make_schedule(collective, algorithm, cp);
}

std::vector<int> all_ranks(int n) {
  std::vector<int> g(static_cast<size_t>(n));
  std::iota(g.begin(), g.end(), 0);
  return g;
}

void check_layers(const char* who, size_t layers, size_t fwd, size_t bwd) {
  if (layers == 0 || fwd != layers || bwd != layers)
    throw InternalError(std::string(who) + ": need one forward and backward time per layer");
}

}  // namespace

// ---- DDP -------------------------------------------------------------------------------

std::vector<std::vector<int>> ddp_buckets(const std::vector<uint64_t>& layer_bytes,
                                          uint64_t cap, uint64_t first_cap) {
  std::vector<std::vector<int>> out;
  std::vector<int> cur;
  uint64_t held = 0;
  for (int i = int(layer_bytes.size()) - 1; i >= 0; --i) {
    cur.push_back(i);
    held += layer_bytes[size_t(i)];
    const uint64_t c = out.empty() && first_cap ? first_cap : cap;
    if (held >= c) {
      out.push_back(std::move(cur));
      cur.clear();
      held = 0;
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

DdpStep ddp_step(const DdpParams& p) {
  const size_t L = p.layer_elems.size();
  check_layers("ddp_step", L, p.forward_ps.size(), p.backward_ps.size());
  DdpStep out;
  std::vector<uint64_t> bytes(L), first(L);
  uint64_t off = 0;
  for (size_t i = 0; i < L; ++i) {
    bytes[i] = p.layer_elems[i] * p.comm.elem_bytes;
    first[i] = off;  // layer i's gradients at [first[i], first[i] + elems) of the buffer
    off += p.layer_elems[i];
  }
  out.buckets = ddp_buckets(bytes, p.bucket_bytes, p.first_bucket_bytes);
  JobBuilder b(p.ranks);
  const int n = p.ranks;
  // Compute stream: forward 0..L-1, backward L-1..0; bwd[r][i] = backward op of layer i.
  std::vector<std::vector<uint32_t>> bwd(static_cast<size_t>(n), std::vector<uint32_t>(L));
  for (int r = 0; r < n; ++r) {
    std::vector<uint32_t> prev;
    for (size_t i = 0; i < L; ++i) prev = {b.compute(r, p.forward_ps[i], prev)};
    for (size_t i = L; i-- > 0;) {
      bwd[size_t(r)][i] = b.compute(r, p.backward_ps[i], prev);
      prev = {bwd[size_t(r)][i]};
    }
  }
  // Comm stream: one all-reduce per bucket, in bucket order.
  std::vector<uint32_t> joins;
  const std::vector<int> group = all_ranks(n);
  for (const std::vector<int>& bucket : out.buckets) {
    const int lo = bucket.back();  // its last layer to finish backward; lowest offset
    uint64_t elems = 0;
    for (int i : bucket) elems += p.layer_elems[size_t(i)];
    out.bucket_elems.push_back(elems);
    std::vector<std::vector<uint32_t>> start(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) {
      start[size_t(r)] = {p.overlap ? bwd[size_t(r)][size_t(lo)] : bwd[size_t(r)][0]};
      if (!joins.empty()) start[size_t(r)].push_back(joins[size_t(r)]);
    }
    const Schedule ar = coll_schedule("all_reduce", p.comm.algorithm, n, elems, p.comm);
    joins = b.collective(ar, group, first[size_t(lo)], p.comm.launch_ps, start);
  }
  out.schedule = b.finish(p.overlap ? "ddp_overlap" : "ddp_no_overlap");
  out.compute_ps = compute_ps(out.schedule, 0);
  return out;
}

// ---- FSDP ------------------------------------------------------------------------------

FsdpStep fsdp_step(const FsdpParams& p) {
  const size_t L = p.layer_elems.size();
  check_layers("fsdp_step", L, p.forward_ps.size(), p.backward_ps.size());
  if (p.prefetch_depth < 0) throw InternalError("fsdp_step: negative prefetch depth");
  const int n = p.ranks;
  const size_t K = 2 * L;
  auto layer_of = [&](size_t k) { return k < L ? k : 2 * L - 1 - k; };
  FsdpStep out;
  out.gather_launch_op.assign(static_cast<size_t>(n), std::vector<uint32_t>(K));
  out.gather_join_op.assign(static_cast<size_t>(n), std::vector<uint32_t>(K));
  out.compute_op.assign(static_cast<size_t>(n), std::vector<uint32_t>(K));
  out.gathered_bytes.assign(static_cast<size_t>(n), std::vector<uint64_t>(K));
  JobBuilder b(n);
  const std::vector<int> group = all_ranks(n);
  std::vector<uint32_t> ag_join, rs_join;
  uint64_t offset = 0;  // every collective gets its own buffer region
  for (size_t k = 0; k < K; ++k) {
    const size_t layer = layer_of(k);
    const uint64_t elems = p.layer_elems[layer];
    std::vector<std::vector<uint32_t>> start(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) {
      auto& s = start[size_t(r)];
      if (k >= size_t(p.prefetch_depth) + 1)
        s.push_back(out.compute_op[size_t(r)][k - size_t(p.prefetch_depth) - 1]);
      if (!ag_join.empty()) s.push_back(ag_join[size_t(r)]);
      out.gather_launch_op[size_t(r)][k] = b.size(r);  // collective() adds it first
      const uint64_t shard = split_even(elems, n)[size_t(r)];
      out.gathered_bytes[size_t(r)][k] = (elems - shard) * p.comm.elem_bytes;
    }
    const Schedule ag = coll_schedule("all_gather", "ring", n, elems, p.comm);
    ag_join = b.collective(ag, group, offset, p.comm.launch_ps, start);
    for (int r = 0; r < n; ++r) out.gather_join_op[size_t(r)][k] = ag_join[size_t(r)];
    offset += elems;
    for (int r = 0; r < n; ++r) {
      std::vector<uint32_t> deps{ag_join[size_t(r)]};
      if (k > 0) deps.push_back(out.compute_op[size_t(r)][k - 1]);
      const uint64_t ps = k < L ? p.forward_ps[layer] : p.backward_ps[layer];
      out.compute_op[size_t(r)][k] = b.compute(r, ps, deps);
    }
    if (k >= L) {  // backward slot: reduce-scatter this layer's gradients
      for (int r = 0; r < n; ++r) {
        start[size_t(r)] = {out.compute_op[size_t(r)][k]};
        if (!rs_join.empty()) start[size_t(r)].push_back(rs_join[size_t(r)]);
      }
      const Schedule rs = coll_schedule("reduce_scatter", "ring", n, elems, p.comm);
      rs_join = b.collective(rs, group, offset, p.comm.launch_ps, start);
      offset += elems;
    }
  }
  out.schedule = b.finish("fsdp_prefetch_" + std::to_string(p.prefetch_depth));
  out.compute_ps = compute_ps(out.schedule, 0);
  return out;
}

uint64_t peak_held_bytes(const std::vector<HeldBuffer>& buffers) {
  // (time, free-before-alloc, delta)
  std::vector<std::pair<std::pair<uint64_t, int>, int64_t>> ev;
  for (const HeldBuffer& h : buffers) {
    ev.push_back({{h.alloc_ps, 1}, int64_t(h.bytes)});
    ev.push_back({{h.free_ps, 0}, -int64_t(h.bytes)});
  }
  std::sort(ev.begin(), ev.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  int64_t cur = 0, peak = 0;
  for (const auto& e : ev) {
    cur += e.second;
    peak = std::max(peak, cur);
  }
  return uint64_t(peak);
}

// ---- MoE -------------------------------------------------------------------------------

std::vector<std::vector<int>> moe_groups(const MoeParams& p) {
  const int ep = p.ep == 0 ? p.ranks : p.ep;
  return tp_groups(p.ranks, ep, p.ep_inside).tp;
}

MoeRouting moe_route(const MoeParams& p) {
  const int n = p.ranks;
  const std::vector<std::vector<int>> groups = moe_groups(p);
  const int E = int(groups[0].size()) * p.experts_per_rank;  // experts of one group
  if (E < 1 || p.top_k < 1 || p.top_k > E)
    throw InternalError("moe_route: need 1 <= top_k <= experts");
  std::vector<int> pi(static_cast<size_t>(E));
  std::iota(pi.begin(), pi.end(), 0);
  Rng perm(p.seed, "moe_layer.popularity");
  for (int i = E - 1; i > 0; --i) std::swap(pi[size_t(i)], pi[perm.below(uint64_t(i) + 1)]);
  std::vector<double> w(static_cast<size_t>(E));
  for (int e = 0; e < E; ++e) w[size_t(e)] = 1.0 / std::pow(double(pi[size_t(e)] + 1), p.skew);
  MoeRouting out;
  out.tokens.assign(static_cast<size_t>(n), std::vector<uint64_t>(static_cast<size_t>(E), 0));
  out.expert_load.assign(groups.size() * size_t(E), 0);
  out.rank_load.assign(static_cast<size_t>(n), 0);
  std::vector<char> picked(static_cast<size_t>(E));
  for (size_t g = 0; g < groups.size(); ++g)
    for (int r : groups[g]) {
      Rng rng(p.seed, "moe_layer.rank" + std::to_string(r));
      for (uint64_t t = 0; t < p.tokens_per_rank; ++t) {
        std::fill(picked.begin(), picked.end(), 0);
        double total = std::accumulate(w.begin(), w.end(), 0.0);
        for (int k = 0; k < p.top_k; ++k) {
          const double u = rng.uniform01() * total;
          double acc = 0;
          int chosen = -1;
          for (int e = 0; e < E; ++e) {
            if (picked[size_t(e)]) continue;
            chosen = e;  // the last unpicked expert absorbs rounding at the top end
            acc += w[size_t(e)];
            if (u < acc) break;
          }
          picked[size_t(chosen)] = 1;
          total -= w[size_t(chosen)];
          ++out.tokens[size_t(r)][size_t(chosen)];
          ++out.expert_load[g * size_t(E) + size_t(chosen)];
          ++out.rank_load[size_t(groups[g][size_t(chosen / p.experts_per_rank)])];
        }
      }
    }
  return out;
}

Schedule alltoallv(const std::vector<std::vector<uint64_t>>& elems, uint64_t chunk_elems) {
  const int n = int(elems.size());
  if (chunk_elems == 0) throw InternalError("alltoallv: chunk_elems must be > 0");
  Schedule s;
  s.algorithm = "direct_v";
  s.ranks = n;
  s.programs.resize(static_cast<size_t>(n));
  // in_off[r][j]: where rank r's data for j starts; out_off[j][r]: where j receives r's.
  std::vector<std::vector<uint64_t>> in_off(static_cast<size_t>(n), std::vector<uint64_t>(static_cast<size_t>(n))),
      out_off = in_off;
  uint64_t in_area = 0;
  for (int r = 0; r < n; ++r) {
    uint64_t o = 0;
    for (int j = 0; j < n; ++j) {
      in_off[size_t(r)][size_t(j)] = o;
      if (j != r) o += elems[size_t(r)][size_t(j)];
    }
    in_area = std::max(in_area, o);
  }
  uint64_t count = in_area;
  for (int j = 0; j < n; ++j) {
    uint64_t o = in_area;
    for (int r = 0; r < n; ++r) {
      out_off[size_t(j)][size_t(r)] = o;
      if (r != j) o += elems[size_t(r)][size_t(j)];
    }
    count = std::max(count, o);
  }
  s.count = count;
  // Pieces are posted piece by piece with the peers innermost (piece 0 to r+1, r+2, ..,
  // then piece 1 to each, ..): a rank's pieces to every peer are in flight together, as
  // NCCL's grouped sends and receives keep every peer's chunks moving at once. The order
  // is the order in which the DMA serves them oldest first (sync: data) and in which its
  // round robin visits them (sync: fence_flag); posted peer by peer, whole-transaction
  // turns sent to one peer at a time for long stretches, and a staggered combine was
  // 22% slow aggregated (docs/collectives.md, "moe_layer").
  for (int r = 0; r < n; ++r) {
    auto& ops = s.programs[size_t(r)].ops;
    for (const OpKind kind : {OpKind::kSend, OpKind::kRecv}) {
      const bool send = kind == OpKind::kSend;
      // The d-th peer: r+d for sends, r-d for receives; the elements going to or from it.
      auto peer = [&](int d) { return send ? (r + d) % n : (r - d + n) % n; };
      auto elems_with = [&](int d) {
        return send ? elems[size_t(r)][size_t(peer(d))] : elems[size_t(peer(d))][size_t(r)];
      };
      uint64_t most = 0;
      for (int d = 1; d < n; ++d) most = std::max(most, elems_with(d));
      for (uint64_t piece = 0; piece * chunk_elems < most; ++piece)
        for (int d = 1; d < n; ++d) {
          const uint64_t c = elems_with(d);
          if (piece * chunk_elems >= c) continue;
          const int j = peer(d);
          Op op;
          op.kind = kind;
          op.peer = j;
          op.tag = piece;
          op.offset = (send ? in_off[size_t(r)][size_t(j)] : out_off[size_t(r)][size_t(j)]) +
                      piece * chunk_elems;
          op.count = std::min(chunk_elems, c - piece * chunk_elems);
          ops.push_back(op);
        }
    }
  }
  validate(s);
  return s;
}

MoeStep moe_layer(const MoeParams& p, const MoeRouting& routing) {
  const int n = p.ranks;
  const std::vector<std::vector<int>> groups = moe_groups(p);
  const uint64_t chunk = std::max<uint64_t>(1, p.comm.chunk_bytes / p.comm.elem_bytes);
  JobBuilder b(n);
  MoeStep out;
  out.dispatch_join.assign(static_cast<size_t>(n), 0);
  out.expert_op.assign(static_cast<size_t>(n), 0);
  for (const std::vector<int>& group : groups) {  // EP groups run concurrently
    const size_t m = group.size();
    std::vector<std::vector<uint64_t>> disp(m, std::vector<uint64_t>(m, 0)), comb = disp;
    for (size_t i = 0; i < m; ++i) {
      const auto& tok = routing.tokens[size_t(group[i])];
      for (size_t e = 0; e < tok.size(); ++e) {
        const size_t j = e / size_t(p.experts_per_rank);
        disp[i][j] += tok[e] * p.token_elems;
        comb[j][i] += tok[e] * p.token_elems;
      }
    }
    const Schedule d = alltoallv(disp, chunk);
    const std::vector<uint32_t> dj =
        b.collective(d, group, 0, p.comm.launch_ps, std::vector<std::vector<uint32_t>>(m));
    std::vector<std::vector<uint32_t>> start(m);
    for (size_t i = 0; i < m; ++i) {
      const int r = group[i];
      out.dispatch_join[size_t(r)] = dj[i];
      out.expert_op[size_t(r)] =
          b.compute(r, routing.rank_load[size_t(r)] * p.expert_ps_per_token, {dj[i]});
      start[i] = {out.expert_op[size_t(r)]};
    }
    const Schedule c = alltoallv(comb, chunk);
    b.collective(c, group, d.count, p.comm.launch_ps, start);
  }
  out.schedule = b.finish("moe_layer");
  return out;
}

// ---- Tensor parallel -------------------------------------------------------------------

TpGroups tp_groups(int ranks, int tp, bool tp_inside) {
  if (tp < 1 || ranks % tp != 0) throw InternalError("tp_groups: tp must divide ranks");
  const int dp = ranks / tp;
  TpGroups g;
  g.tp.assign(size_t(dp), {});
  g.dp.assign(size_t(tp), {});
  for (int a = 0; a < dp; ++a)
    for (int i = 0; i < tp; ++i) {
      const int r = tp_inside ? a * tp + i : i * dp + a;
      g.tp[size_t(a)].push_back(r);
      g.dp[size_t(i)].push_back(r);
    }
  return g;
}

Schedule tp_step(const TpParams& p) {
  const int n = p.ranks;
  const TpGroups g = tp_groups(n, p.tp, p.tp_inside);
  JobBuilder b(n);
  std::vector<std::vector<uint32_t>> last(static_cast<size_t>(n));  // previous compute-stream dep per rank
  std::vector<uint32_t> dp_join(static_cast<size_t>(n), UINT32_MAX);
  const Schedule tp_ar = coll_schedule("all_reduce", p.comm.algorithm, p.tp, p.act_elems, p.comm);
  const Schedule dp_ar =
      coll_schedule("all_reduce", p.comm.algorithm, n / p.tp, p.grad_elems, p.comm);
  // One compute half then a TP all-reduce that the next compute waits for.
  auto half = [&](uint64_t ps) {
    std::vector<std::vector<uint32_t>> start(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) start[size_t(r)] = {b.compute(r, ps, last[size_t(r)])};
    for (const std::vector<int>& grp : g.tp) {
      std::vector<std::vector<uint32_t>> s;
      for (int r : grp) s.push_back(start[size_t(r)]);
      const std::vector<uint32_t> j = b.collective(tp_ar, grp, 0, p.comm.launch_ps, s);
      for (size_t i = 0; i < grp.size(); ++i) last[size_t(grp[i])] = {j[i]};
    }
    return start;
  };
  for (int l = 0; l < p.layers; ++l) {
    half(p.forward_ps / 2);
    half(p.forward_ps - p.forward_ps / 2);
  }
  for (int l = 0; l < p.layers; ++l) {
    half(p.backward_ps / 2);
    const std::vector<std::vector<uint32_t>> done = half(p.backward_ps - p.backward_ps / 2);
    // The layer's weight gradients are complete after its second backward compute half.
    for (const std::vector<int>& grp : g.dp) {
      std::vector<std::vector<uint32_t>> s;
      for (int r : grp) {
        s.push_back(done[size_t(r)]);
        if (dp_join[size_t(r)] != UINT32_MAX) s.back().push_back(dp_join[size_t(r)]);
      }
      const std::vector<uint32_t> j = b.collective(dp_ar, grp, 0, p.comm.launch_ps, s);
      for (size_t i = 0; i < grp.size(); ++i) dp_join[size_t(grp[i])] = j[i];
    }
  }
  return b.finish(p.tp_inside ? "tp_inside" : "dp_inside");
}

}  // namespace fabricsim::coll
