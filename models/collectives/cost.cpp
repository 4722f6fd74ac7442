#include "models/collectives/cost.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <deque>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "models/collectives/algorithms.h"
#include "models/core/errors.h"

namespace fabricsim::coll {

namespace {

bool is_in_switch(OpKind k) { return k == OpKind::kNvlsReduce || k == OpKind::kNvlsStore; }

}  // namespace

double AlgoCost::time_s(double bytes, int channels, double piece_bytes) const {
  const double link = store_forward ? std::max(latency_s, bytes * s_per_byte)
                                    : latency_s + bytes * s_per_byte;
  if (stream_steps <= 0) return base_s + link;
  const double per_channel = sent_per_byte * bytes / std::max(channels, 1);
  const double per_step = per_channel / stream_steps;
  const double pieces = piece_bytes > 0 ? std::max(1.0, std::ceil(per_step / piece_bytes)) : 1.0;
  double pass = stream_steps * pieces * piece_sync_step_s(per_step / pieces, channels);
  if (channel_Bps > 0) pass += per_channel * line_factor / channel_Bps;
  return base_s + std::max(link, pass);
}

double AlgoCost::piece_sync_step_s(double piece, int channels) const {
  if (!store_forward || proxy_share <= 0) return piece_sync_s;
  // The NIC's rate per channel: the channels crossing it share it.
  const double sharing = std::max(1.0, std::max(channels, 1) * proxy_channel_frac);
  const double ser = proxy_Bps > 0 ? piece * line_factor * sharing / proxy_Bps : 0.0;
  return (1.0 - proxy_share) * piece_sync_s + proxy_share * (proxy_sync_s + ser);
}

AlgoCost schedule_cost(const std::string& collective, const std::string& algorithm,
                       int channels, uint32_t elem_bytes, int root, const FabricCosts& f,
                       int slices, Protocol proto) {
  const int n = f.ranks;
  AlgoCost cost;
  if (n <= 1) return cost;
  const ProtocolCosts& pc = f.protocols[int(proto)];
  // The latency of one dependent step src -> dst.
  const auto alpha = [&](int src, int dst) {
    const PathCost c = f.path(src, dst);
    if (!f.protocol_model) return c.alpha_s;
    return c.proxy ? c.trip_s + pc.proxy_sync_s : pc.trips * c.trip_s + pc.sync_s;
  };
  CollParams p;
  p.ranks = n;
  p.count = 8ull * static_cast<uint64_t>(channels) * static_cast<uint64_t>(n) *
            static_cast<uint64_t>(std::max(slices, 1));
  p.elem_bytes = elem_bytes;
  p.channels = channels;
  p.chunk_bytes = 1ull << 50;  // one piece per message
  p.root = root;
  p.slices = slices;
  p.rings = f.rings;
  const Schedule s = make_schedule(collective, algorithm, p, f.domain_size);
  const double ref_bytes = static_cast<double>(p.count) * elem_bytes;
  const auto prog = [&](int r) -> const std::vector<Op>& {
    return s.programs[static_cast<std::size_t>(r)].ops;
  };
  bool in_switch = false;
  for (int r = 0; r < n; ++r)
    for (const Op& op : prog(r)) in_switch = in_switch || is_in_switch(op.kind);
  if (in_switch && f.nvls.size() != static_cast<std::size_t>(n))
    throw InternalError("schedule_cost: " + collective + "/" + algorithm +
                        " reduces in the switches, and the fabric has no NVLS path");
  const auto nvls = [&](int r) -> const NvlsPath& {
    const NvlsPath& np = f.nvls[static_cast<std::size_t>(r)];
    if (np.group < 0)
      throw InternalError("schedule_cost: rank " + std::to_string(r) +
                          " has no link into an NVLS switch");
    return np;
  };

  // Bandwidth: bytes per (rank, group) over the group's rate; the groups of a rank run in
  // parallel (max), except in hierarchical, whose groups serve its phases in turn (sum),
  // or with slices as a pipeline (max plus 1/depth of the rest). Point-to-point schedules
  // are symmetric and only their sends are counted; with in-switch ops both directions
  // are (up: GPU -> fabric, down: fabric -> GPU), and the switches' engines.
  const bool phased = algorithm == "hierarchical" || algorithm == "hierarchical_nvls";
  // Pipeline depth of a phased schedule: its slices; hierarchical_nvls also reduces, sends
  // across and stores each slice sub-block by sub-block (N per slice, in the order the
  // ring across domains moves them), so its levels already overlap per sub-block.
  const int domains = n / (f.domain_size > 0 ? f.domain_size : n);
  const int depth =
      std::max(slices, 1) * (algorithm == "hierarchical_nvls" ? std::max(domains, 1) : 1);
  std::vector<std::map<int, double>> up(static_cast<std::size_t>(n)),
      down(static_cast<std::size_t>(n));
  std::vector<double> reduce_in(f.nvls_switches.size(), 0.0),
      mcast_in(f.nvls_switches.size(), 0.0);
  // Port groups that leave through a NIC (proxy hops), per rank; and per (rank, such
  // group) the streams that send over it (the channels that share the NIC).
  std::vector<std::map<int, std::map<int32_t, int>>> proxy_groups(static_cast<std::size_t>(n));
  std::vector<std::map<int32_t, int>> streams_of(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    auto& u = up[static_cast<std::size_t>(r)];
    for (const Op& op : prog(r)) {
      const double b = static_cast<double>(op.count) * elem_bytes;
      if (op.kind == OpKind::kSend) {
        const PathCost pcost = f.path(r, op.peer);
        u[pcost.group] += b;
        streams_of[static_cast<std::size_t>(r)][op.stream] = 1;
        if (f.protocol_model && pcost.proxy) {
          proxy_groups[static_cast<std::size_t>(r)][pcost.group][op.stream] = 1;
          cost.store_forward = true;
        }
        if (in_switch) down[static_cast<std::size_t>(op.peer)][f.path(op.peer, r).group] += b;
      } else if (is_in_switch(op.kind)) {
        const NvlsPath& me = nvls(r);
        const int first = nvls_group_first(s, r), size = nvls_group_size(s);
        const bool reduce = op.kind == OpKind::kNvlsReduce;
        // Reduce: requests up, every member's read down and answer up, the result down.
        // Store: the data up, a replica down to every member (this rank included).
        u[me.group] += reduce ? b * me.req_bytes : b;
        if (reduce) down[static_cast<std::size_t>(r)][me.group] += b;
        for (int q = first; q < first + size; ++q) {
          const NvlsPath& m = nvls(q);
          auto& dq = down[static_cast<std::size_t>(q)][m.group];
          if (reduce) {
            dq += b * m.read_bytes;
            up[static_cast<std::size_t>(q)][m.group] += b;
          } else {
            dq += b;
          }
        }
        for (const auto& [sw, share] : me.switches)
          (reduce ? reduce_in : mcast_in)[static_cast<std::size_t>(sw)] +=
              (reduce ? b * size : b) * share;
      }
    }
  }
  // The engines' times (s for the reference bytes): input over rate.
  std::vector<double> engine_s(f.nvls_switches.size(), 0.0);
  for (std::size_t sw = 0; sw < f.nvls_switches.size(); ++sw) {
    const NvlsEngine& e = f.nvls_switches[sw];
    if (e.reduce_Bps > 0) engine_s[sw] = reduce_in[sw] / e.reduce_Bps;
    if (e.multicast_Bps > 0) engine_s[sw] = std::max(engine_s[sw], mcast_in[sw] / e.multicast_Bps);
  }
  double worst = 0, worst_sf = 0;
  for (int r = 0; r < n; ++r) {
    std::map<int, double> t_of;  // group -> time
    for (const auto& [g, b] : up[static_cast<std::size_t>(r)]) t_of[g] = b / f.group_Bps(r, g);
    for (const auto& [g, b] : down[static_cast<std::size_t>(r)])
      t_of[g] = std::max(t_of[g], b / f.group_Bps(r, g));
    if (in_switch) {
      const NvlsPath& me = nvls(r);
      if (t_of.count(me.group))
        for (const auto& [sw, share] : me.switches)
          t_of[me.group] = std::max(t_of[me.group], engine_s[static_cast<std::size_t>(sw)]);
    }
    double sum = 0, most = 0;
    for (const auto& [g, t] : t_of) {
      sum += t;
      most = std::max(most, t);
    }
    const double rank_time = !phased ? most : most + (sum - most) / depth;
    worst = std::max(worst, rank_time);
    if (cost.store_forward) {
      // Proxy groups carry whole steps of protocol bytes in full packets (line factor);
      // the others the protocol's stores (wire factor).
      const auto& pg = proxy_groups[static_cast<std::size_t>(r)];
      double all_sum = 0, all_most = 0;
      for (const auto& [g, t] : t_of) {
        const double x = t * (pg.count(g) > 0 ? pc.line_factor : pc.wire_factor);
        all_sum += x;
        all_most = std::max(all_most, x);
      }
      worst_sf = std::max(worst_sf, !phased ? all_most : all_most + (all_sum - all_most) / depth);
    }
  }
  cost.s_per_byte = worst / ref_bytes;
  if (f.protocol_model) {
    cost.base_s = f.base_s;
    cost.s_per_byte *= pc.wire_factor;
    if (cost.store_forward) {
      cost.s_per_byte = worst_sf / ref_bytes;
      // The NIC the channels share most: its rate and the share of the rank's streams
      // (the reference schedule's channels) that send over it.
      double per_stream = 0;
      for (int r = 0; r < n; ++r)
        for (const auto& [g, streams] : proxy_groups[static_cast<std::size_t>(r)]) {
          const double frac = double(streams.size()) /
                              double(std::max<std::size_t>(1, streams_of[static_cast<std::size_t>(r)].size()));
          const double x = frac / f.group_Bps(r, g);  // s per byte per channel
          if (x > per_stream) {
            per_stream = x;
            cost.proxy_Bps = f.group_Bps(r, g);
            cost.proxy_channel_frac = frac;
          }
        }
    }
    // The busiest thread block: its sends, and the rank's bytes (point-to-point schedules
    // only; the in-switch ops are not issued by streams).
    std::map<std::pair<int, int32_t>, double> sends;
    double most_sent = 0;
    for (int r = 0; r < n; ++r) {
      double sent = 0;
      for (const Op& op : prog(r))
        if (op.kind == OpKind::kSend && op.stream >= 0) {
          sends[{r, op.stream}] += 1;
          sent += static_cast<double>(op.count) * elem_bytes;
        }
      most_sent = std::max(most_sent, sent);
    }
    for (const auto& [key, k] : sends) cost.stream_steps = std::max(cost.stream_steps, k);
    // The reference's channels share the rank's bytes: one channel's share times them.
    cost.sent_per_byte = most_sent / ref_bytes;
    cost.piece_sync_s = 0;
    for (int r = 0; r < n; ++r)
      for (const Op& op : prog(r))
        if (op.kind == OpKind::kSend && op.stream >= 0) {
          double& sync = f.path(r, op.peer).proxy ? cost.proxy_sync_s : cost.piece_sync_s;
          sync = std::max(sync, alpha(r, op.peer));
        }
    cost.channel_Bps = pc.channel_Bps;
    cost.line_factor = pc.line_factor;
  }

  // Latency: longest dependent message chain. An op is ready when its deps are done and,
  // for a recv, its message has arrived (alpha after the matching send or store started);
  // ops run as soon as they are ready, as the engine runs them (recvs posted up front
  // block nothing but their dependents).
  struct Key {
    int src, dst;
    uint64_t tag;
    bool operator<(const Key& o) const {
      return std::tie(src, dst, tag) < std::tie(o.src, o.dst, o.tag);
    }
  };
  std::map<Key, std::pair<int, uint32_t>> recv_of;  // (src, dst, tag) -> dst's recv op
  std::vector<std::vector<double>> done(static_cast<std::size_t>(n)),
      arrival(static_cast<std::size_t>(n));
  // Per op, the (hops, proxy hops) of the dependent chain that sets its time; hops are the
  // streams' sends (the pass term's steps), not in-switch ops.
  using Hops = std::pair<double, double>;
  std::vector<std::vector<Hops>> done_hops(static_cast<std::size_t>(n)),
      arrival_hops(static_cast<std::size_t>(n));
  std::vector<std::vector<uint32_t>> need(static_cast<std::size_t>(n));
  std::vector<std::vector<std::vector<uint32_t>>> dependents(static_cast<std::size_t>(n));
  std::deque<std::pair<int, uint32_t>> ready;
  std::size_t left = 0;
  for (int r = 0; r < n; ++r) {
    const auto& ops = prog(r);
    const auto ri = static_cast<std::size_t>(r);
    done[ri].assign(ops.size(), 0);
    arrival[ri].assign(ops.size(), 0);
    done_hops[ri].assign(ops.size(), {0, 0});
    arrival_hops[ri].assign(ops.size(), {0, 0});
    need[ri].assign(ops.size(), 0);
    dependents[ri].assign(ops.size(), {});
    left += ops.size();
    for (uint32_t i = 0; i < ops.size(); ++i) {
      need[ri][i] = static_cast<uint32_t>(ops[i].deps.size());
      for (uint32_t d : ops[i].deps) dependents[ri][d].push_back(i);
      if (ops[i].kind == OpKind::kRecv) {
        ++need[ri][i];
        recv_of[Key{ops[i].peer, r, ops[i].tag}] = {r, i};
      }
      if (need[ri][i] == 0) ready.emplace_back(r, i);
    }
  }
  const auto release = [&](int r, uint32_t i) {
    if (--need[static_cast<std::size_t>(r)][i] == 0) ready.emplace_back(r, i);
  };
  const auto deliver = [&](int src, int dst, uint64_t tag, double at, Hops hops) {
    auto it = recv_of.find(Key{src, dst, tag});
    if (it == recv_of.end()) return;  // validate() rules this out for make_schedule's output
    const auto [q, j] = it->second;
    arrival[static_cast<std::size_t>(q)][j] = at;
    arrival_hops[static_cast<std::size_t>(q)][j] = hops;
    recv_of.erase(it);
    release(q, j);
  };
  double latest = 0;
  Hops latest_hops{0, 0};
  while (!ready.empty()) {
    const auto [r, i] = ready.front();
    ready.pop_front();
    const auto ri = static_cast<std::size_t>(r);
    const Op& op = prog(r)[i];
    double t = 0;
    Hops h{0, 0};
    for (uint32_t dep : op.deps)
      if (done[ri][dep] > t) {
        t = done[ri][dep];
        h = done_hops[ri][dep];
      }
    switch (op.kind) {
      case OpKind::kRecv:
        if (arrival[ri][i] > t) {
          t = arrival[ri][i];
          h = arrival_hops[ri][i];
        }
        break;
      case OpKind::kSend:
        // The pass term's steps are the streams' sends: only they count as hops.
        deliver(r, op.peer, op.tag, t + alpha(r, op.peer),
                op.stream < 0 ? h
                              : Hops{h.first + 1, h.second + (f.protocol_model &&
                                                                      f.path(r, op.peer).proxy
                                                                  ? 1
                                                                  : 0)});
        break;
      case OpKind::kNvlsReduce: t += nvls(r).reduce_alpha_s; break;
      case OpKind::kNvlsStore: {
        const int first = nvls_group_first(s, r);
        for (int q = first; q < first + nvls_group_size(s); ++q)
          deliver(r, q, op.tag, t + nvls(r).store_alpha_s, h);
        break;
      }
      default: break;
    }
    done[ri][i] = t;
    done_hops[ri][i] = h;
    if (t > latest) latest_hops = h;
    latest = std::max(latest, t);
    --left;
    for (uint32_t d : dependents[ri][i]) release(r, d);
  }
  if (left > 0)
    throw InternalError("schedule_cost: " + collective + "/" + algorithm +
                        " cannot complete: " + std::to_string(left) + " ops never ready");
  cost.latency_s = latest;
  if (cost.store_forward && latest_hops.first > 0)
    cost.proxy_share = latest_hops.second / latest_hops.first;
  return cost;
}

}  // namespace fabricsim::coll
