#include "models/collectives/cost.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <set>
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
  if (stream_steps <= 0) return base_s + std::max(link, connection_s(bytes, channels, piece_bytes));
  const double per_channel =
      stream_per_byte > 0 ? stream_per_byte * bytes * ref_channels / std::max(channels, 1)
                          : sent_per_byte * bytes / std::max(channels, 1);
  const double per_step = per_channel / stream_steps;
  const double pieces = piece_bytes > 0 ? std::max(1.0, std::ceil(per_step / piece_bytes)) : 1.0;
  double pass = stream_steps * pieces * piece_sync_step_s(per_step / pieces, channels);
  if (channel_Bps > 0) pass += per_channel * line_factor / channel_Bps;
  const double msg = stream_msg_per_byte * bytes * ref_channels / std::max(channels, 1);
  const double piece = piece_bytes > 0 ? std::min(msg, piece_bytes) : msg;
  const double piece_pass = channel_Bps > 0 ? piece * line_factor / channel_Bps : 0.0;
  if (chain_steps > stream_steps) {
    // The pipeline's fill: every further step of the longest chain forwards a whole piece
    // (its pass at the channel rate, then its dependent step) before the next hop starts.
    pass += (chain_steps - stream_steps) * (piece_sync_step_s(piece, channels) + piece_pass);
  }
  // The chain's sends that wait in their stream behind the sends issued with them: the
  // first piece waits for those passes and holds on every such hop.
  pass += chain_queued * piece_pass + chain_queued_hold_s;
  return base_s + std::max(link, pass);
}

double AlgoCost::connection_s(double bytes, int channels, double piece_bytes) const {
  if (conn_sends <= 0 || slots == 0) return 0;
  const double c = std::max(channels, 1);
  const double msg = conn_msg_per_byte * bytes * ref_channels / c;
  const double piece = piece_bytes > 0 ? std::min(msg, piece_bytes) : msg;
  const double pieces = piece_bytes > 0 ? std::max(1.0, std::ceil(msg / piece_bytes)) : 1.0;
  // c channels against the reference's: one connection per channel keeps its steps per
  // message and multiplies the connections on the NIC; one shared connection carries every
  // channel's steps.
  const double scale = c / std::max(ref_channels, 1);
  const double steps = conn_sends * (conn_per_channel ? 1.0 : scale) * pieces;
  const double nic_conns = std::max(conn_per_nic * (conn_per_channel ? scale : 1.0), 1.0);
  const double rounds = std::ceil(steps / slots - 1e-9);
  const double pass = channel_Bps > 0 ? piece * line_factor / channel_Bps : 0.0;
  const double ser = proxy_Bps > 0 ? piece * line_factor / proxy_Bps : 0.0;
  // A round's steps are posted together and cross the NIC one after another (with the
  // other connections' over the same NIC): the last of them sets the round's pace.
  const double on_nic = std::min(steps, double(slots)) * nic_conns;
  const double arrive = conn_alpha_s + pass + ser;
  const double cycle = slot_cycle_s + pass + on_nic * ser;
  const double fill = conn_first_s + conn_fill_s_per_byte * piece * c;
  return fill + std::max(conn_span_s, (rounds - 1) * cycle + arrive) + conn_drain_s;
}

double AlgoCost::piece_sync_step_s(double piece, int channels) const {
  if (!store_forward || proxy_share <= 0) return piece_sync_s;
  // The NIC's rate per channel: the channels crossing it share it.
  const double sharing = std::max(1.0, std::max(channels, 1) * proxy_channel_frac);
  const double ser = proxy_Bps > 0 ? piece * line_factor * sharing / proxy_Bps : 0.0;
  return (1.0 - proxy_share) * piece_sync_s + proxy_share * (proxy_sync_s + ser);
}

namespace {

// The programs a cost is computed on. Rank classes: when shifting every rank by `period`
// (mod n) is a symmetry of the fabric (FabricCosts::period) and of the schedule, rank r
// and r + period see the same topology and run the same program (peers shifted), so
// every rank's bytes, streams and op times equal those of its class's representative
// r mod period: only ranks [0, reps) are built and costed (reps = n: every rank).
struct ChainGraph;

struct CostPrograms {
  Schedule s;
  int n = 0, reps = 0;
  int rep(int r) const { return r % reps; }
  const std::vector<Op>& prog(int r) const { return s.programs[static_cast<std::size_t>(r)].ops; }
  // The dependency graph of the latency walk (chain_latency_s), built by its first walk
  // and shared by the protocols that cost these programs after it.
  mutable std::shared_ptr<const ChainGraph> chain;
};

// Whether rank P runs rank 0's program with peers shifted by P (the flow level's fold
// checks the same, flow_system.h).
bool shift_invariant(const Schedule& s, int n, int P) {
  const auto& a = s.programs[0].ops;
  const auto& b = s.programs[static_cast<std::size_t>(P)].ops;
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const Op &x = a[i], &y = b[i];
    const bool peer_ok = (x.peer < 0 && y.peer < 0) || (x.peer >= 0 && y.peer == (x.peer + P) % n);
    if (x.kind != y.kind || !peer_ok || x.tag != y.tag || x.count != y.count ||
        x.mode != y.mode || x.duration_ps != y.duration_ps || x.stream != y.stream ||
        x.channel != y.channel || x.deps != y.deps)
      return false;
  }
  return true;
}

// The schedule's programs, by class where the fabric and the schedule allow it: periods
// f.period x t (t = 1, 2: a rail-aligned ring alternates its direction per domain) are
// tried with the generator building ranks [0, P] (CollParams::rank_limit) and rank P
// checked against rank 0; otherwise (no fabric period, a generator that builds
// every rank, in-switch ops, no invariant period) every rank's program.
CostPrograms cost_programs(const std::string& collective, const std::string& algorithm,
                           CollParams p, const FabricCosts& f) {
  CostPrograms c;
  c.n = p.ranks;
  if (f.period > 0 && !uses_nvls_switches(algorithm))
    for (int t : {1, 2}) {
      const int P = f.period * t;
      if (2 * P > c.n || c.n % P != 0) break;
      p.rank_limit = P + 1;
      Schedule s = make_schedule(collective, algorithm, p, f.domain_size);
      bool built_all = false;
      for (int r = P + 1; r < c.n && !built_all; ++r)
        built_all = !s.programs[static_cast<std::size_t>(r)].ops.empty();
      if (built_all) {  // the generator ignores rank_limit: cost every rank
        c.s = std::move(s);
        c.reps = c.n;
        return c;
      }
      if (!shift_invariant(s, c.n, P)) continue;
      for (int r = P; r < c.n; ++r) std::vector<Op>().swap(s.programs[static_cast<std::size_t>(r)].ops);
      c.s = std::move(s);
      c.reps = P;
      return c;
    }
  p.rank_limit = 0;
  c.s = make_schedule(collective, algorithm, p, f.domain_size);
  c.reps = c.n;
  return c;
}

// The streams' sends on a dependency chain: all of them, those over a proxy hop, and the
// summed step latency (alpha) of the others. 16 bytes per op of the chain walk.
struct ChainHops {
  uint32_t hops = 0, proxy_hops = 0;
  double local_alpha_s = 0;
  // Sends on the chain that waited in their stream behind sends issued with them (same
  // stream, same deps, earlier in program order: a tree head's down sends to its chain
  // child and its child nodes), and what those earlier sends held the stream for beyond
  // their pass (StreamQueue::hold_s).
  uint32_t queued = 0;
  double queued_hold_s = 0;
};

// Of two chains ending at t1 and t2, whether the first is the later: by time, and on a tie
// (the same hops in another order, or mirrored branches of a tree) the one whose sends
// waited longer in their streams.
// A tie is within 1e-9 relative (sums of the same hops in another order); chains without
// queued sends compare by time alone.
bool later(double t1, const ChainHops& h1, double t2, const ChainHops& h2) {
  const double eps = 1e-9 * std::max(std::abs(t1), std::abs(t2));
  if (h1.queued != h2.queued && std::abs(t1 - t2) <= eps) return h1.queued > h2.queued;
  return t1 > t2;
}

// Over every send of the walk that crosses a proxy hop: the earliest start and the latest
// arrival (AlgoCost's connection term).
struct ProxySpan {
  double first_send = -1, last_arrival = 0;
};

// What the latency walk needs of the programs that no protocol changes, built once per
// CostPrograms: the ops in the order the walk takes them (an op is taken when its deps are
// done and, for a recv, its message has arrived; that order follows from the graph alone),
// the recvs each send or store delivers to, and the stream queues. Op i of rank r is
// base[r] + i. (576 ranks' all-to-all: 331k sends, each matched to its recv by a search
// that every protocol's walk repeated.)
struct ChainGraph {
  std::vector<uint64_t> base;                  // [rep] -> its first op
  std::vector<std::pair<int, uint32_t>> order; // (rank, op) in the walk's order
  std::vector<uint32_t> targets;               // the recvs the ops deliver to, in that order
  std::vector<uint32_t> target_count;          // [k]: how many of them order[k] has
  std::vector<uint16_t> queued;                // sends before it in its stream queue
  std::vector<uint32_t> queued_after;          // the send it queues behind, or kNone
  static constexpr uint32_t kNone = UINT32_MAX;
};

std::shared_ptr<const ChainGraph> chain_graph(const std::string& collective,
                                              const std::string& algorithm,
                                              const CostPrograms& cp) {
  const int n = cp.n, reps = cp.reps;
  const Schedule& s = cp.s;
  auto graph = std::make_shared<ChainGraph>();
  ChainGraph& G = *graph;
  // Flat arrays over the representatives' ops: a few words per op, no per-op allocation.
  G.base.assign(static_cast<std::size_t>(reps) + 1, 0);
  for (int r = 0; r < reps; ++r) G.base[r + 1] = G.base[r] + cp.prog(r).size();
  const std::vector<uint64_t>& base = G.base;
  const uint64_t total = base.back();
  FABRICSIM_ASSERT(total < UINT32_MAX, "schedule_cost: more than 2^32 ops per class");
  std::vector<uint32_t> need(total, 0), first_dependent(total + 1, 0), dependents;
  // The recvs by (sender, receiver, tag), sorted: the sender is as the receiver's class
  // representative sees it.
  struct Key {
    int src, dst;
    uint64_t tag;
    bool operator<(const Key& o) const {
      return std::tie(src, dst, tag) < std::tie(o.src, o.dst, o.tag);
    }
    bool operator==(const Key& o) const { return src == o.src && dst == o.dst && tag == o.tag; }
  };
  std::vector<std::pair<Key, uint32_t>> recvs;
  for (int r = 0; r < reps; ++r) {
    const auto& ops = cp.prog(r);
    for (uint32_t i = 0; i < ops.size(); ++i) {
      const uint64_t g = base[r] + i;
      need[g] = static_cast<uint32_t>(ops[i].deps.size());
      for (uint32_t d : ops[i].deps) ++first_dependent[base[r] + d + 1];
      if (ops[i].kind == OpKind::kRecv) {
        ++need[g];
        recvs.push_back({Key{ops[i].peer, r, ops[i].tag}, uint32_t(g)});
      }
    }
  }
  // Stream queues: a streamed send issued together with the sends before it in its stream
  // (same deps, nothing else of the stream between) waits for their passes and holds.
  G.queued.assign(total, 0);
  G.queued_after.assign(total, ChainGraph::kNone);
  for (int r = 0; r < reps; ++r) {
    const auto& ops = cp.prog(r);
    std::map<int32_t, uint32_t> last_of_stream;  // stream -> its latest op so far
    for (uint32_t i = 0; i < ops.size(); ++i) {
      const int32_t st = ops[i].stream;
      if (st < 0) continue;
      auto it = last_of_stream.find(st);
      if (ops[i].kind == OpKind::kSend && it != last_of_stream.end()) {
        const Op& prev = ops[it->second];
        if (prev.kind == OpKind::kSend && prev.deps == ops[i].deps) {
          const uint64_t gp = base[r] + it->second, g = base[r] + i;
          G.queued[g] = static_cast<uint16_t>(std::min<uint32_t>(G.queued[gp] + 1u, UINT16_MAX));
          G.queued_after[g] = uint32_t(gp);
        }
      }
      last_of_stream[st] = i;
    }
  }
  for (uint64_t g = 0; g < total; ++g) first_dependent[g + 1] += first_dependent[g];
  dependents.resize(first_dependent[total]);
  {
    std::vector<uint32_t> fill(first_dependent.begin(), first_dependent.end() - 1);
    for (int r = 0; r < reps; ++r) {
      const auto& ops = cp.prog(r);
      for (uint32_t i = 0; i < ops.size(); ++i)
        for (uint32_t d : ops[i].deps) dependents[fill[base[r] + d]++] = i;
    }
  }
  std::sort(recvs.begin(), recvs.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::pair<int, uint32_t>>& ready = G.order;  // FIFO: ready[head..]
  ready.reserve(total);
  for (int r = 0; r < reps; ++r)
    for (uint32_t i = 0; i < cp.prog(r).size(); ++i)
      if (need[base[r] + i] == 0) ready.emplace_back(r, i);
  // The sender rank as the receiver's class representative sees it.
  const auto seen_from = [&](int src, int dst) {
    return ((src - (dst - cp.rep(dst))) % n + n) % n;
  };
  const auto release = [&](int r, uint32_t i) {
    if (--need[base[r] + i] == 0) ready.emplace_back(r, i);
  };
  const auto deliver = [&](int src, int dst, uint64_t tag) {
    const Key k{seen_from(src, dst), cp.rep(dst), tag};
    auto it = std::lower_bound(recvs.begin(), recvs.end(), k,
                               [](const auto& x, const Key& y) { return x.first < y; });
    if (it == recvs.end() || !(it->first == k)) return;  // validate() rules this out
    G.targets.push_back(it->second);
    const int q = k.dst;
    release(q, uint32_t(it->second - base[q]));
  };
  // The walk's order, and the targets of each op as it is taken.
  G.target_count.reserve(total);
  for (std::size_t head = 0; head < ready.size(); ++head) {
    const auto [r, i] = ready[head];
    const uint64_t g = base[r] + i;
    const Op& op = cp.prog(r)[i];
    const std::size_t before = G.targets.size();
    if (op.kind == OpKind::kSend) {
      deliver(r, op.peer, op.tag);
    } else if (op.kind == OpKind::kNvlsStore) {
      const int first = nvls_group_first(s, r);
      for (int q = first; q < first + nvls_group_size(s); ++q) deliver(r, q, op.tag);
    }
    G.target_count.push_back(uint32_t(G.targets.size() - before));
    for (uint32_t k = first_dependent[g]; k < first_dependent[g + 1]; ++k)
      release(r, dependents[k]);
  }
  if (ready.size() < total)
    throw InternalError("schedule_cost: " + collective + "/" + algorithm +
                        " cannot complete: " + std::to_string(total - ready.size()) +
                        " ops never ready");
  return graph;
}

// Latency: longest dependent message chain. An op is ready when its deps are done and,
// for a recv, its message has arrived (alpha after the matching send or store started);
// ops run as soon as they are ready, as the engine runs them (recvs posted up front
// block nothing but their dependents). On the representatives only: a message from rep r
// to rank d = rep(d) + kP is the image of the message from r - kP to rep(d), so it
// arrives at rep(d) from sender (r - kP) mod n; op times are the same in every class
// member, and the quotient of an acyclic periodic dependency graph is acyclic.
// `latest_hops`: the hops of the chain that ends last (ChainHops); hops are the streams'
// sends (the pass term's steps), not in-switch ops; proxy_hop(src, dst) says which sends
// cross a network proxy.
// `hold(src, dst)`: how long a send src -> dst holds its stream beyond its pass (the
// queue a later send of the same stream waits in; ChainHops::queued).
// The graph (the order the ops are taken in, who delivers to whom) is built by the first
// call on `cp` and reused; only the times depend on the protocol.
double chain_latency_s(const std::string& collective, const std::string& algorithm,
                       const CostPrograms& cp, const std::function<double(int, int)>& alpha,
                       const std::function<const NvlsPath&(int)>& nvls,
                       const std::function<bool(int, int)>& proxy_hop,
                       const std::function<double(int, int)>& hold,
                       ChainHops* latest_hops, ProxySpan* span = nullptr) {
  if (!cp.chain) cp.chain = chain_graph(collective, algorithm, cp);
  const ChainGraph& G = *cp.chain;
  const std::vector<uint64_t>& base = G.base;
  const uint64_t total = base.back();
  std::vector<double> done(total, 0), arrival(total, 0);
  using Hops = ChainHops;
  std::vector<Hops> done_hops(total, Hops{}), arrival_hops(total, Hops{});
  // What the sends before a queued send hold its stream for (program order: the send it
  // queues behind comes first).
  std::vector<double> queued_hold(total, 0.0);
  for (int r = 0; r < cp.reps; ++r)
    for (uint64_t g = base[r]; g < base[r + 1]; ++g)
      if (const uint32_t gp = G.queued_after[g]; gp != ChainGraph::kNone)
        queued_hold[g] = queued_hold[gp] + hold(r, cp.prog(r)[gp - base[r]].peer);
  // The ops' targets are stored in the walk's order: the next ones are at `next_target`.
  std::size_t next_target = 0;
  const auto deliver = [&](std::size_t k, double at, const Hops& hops) {
    for (uint32_t c = 0; c < G.target_count[k]; ++c) {
      const uint32_t to = G.targets[next_target + c];
      arrival[to] = at;
      arrival_hops[to] = hops;
    }
  };
  double latest = 0, latest_th = 0;
  Hops latest_h{};
  for (std::size_t k = 0; k < G.order.size(); ++k) {
    const auto [r, i] = G.order[k];
    const uint64_t g = base[r] + i;
    const Op& op = cp.prog(r)[i];
    // t: when the op can start (the latest input); h: the hops of the chain that sets it
    // (on a tie, the one whose sends queued most: later()).
    double t = 0, th = 0;
    Hops h{};
    for (uint32_t dep : op.deps) {
      const double d = done[base[r] + dep];
      if (later(d, done_hops[base[r] + dep], th, h)) {
        th = d;
        h = done_hops[base[r] + dep];
      }
      t = std::max(t, d);
    }
    switch (op.kind) {
      case OpKind::kRecv:
        if (later(arrival[g], arrival_hops[g], th, h)) {
          th = arrival[g];
          h = arrival_hops[g];
        }
        t = std::max(t, arrival[g]);
        break;
      case OpKind::kSend: {
        const double a = alpha(r, op.peer);
        Hops next = h;
        const bool via_proxy = proxy_hop(r, op.peer);
        if (op.stream >= 0) {
          ++next.hops;
          next.queued += G.queued[g];
          next.queued_hold_s += queued_hold[g];
          if (via_proxy)
            ++next.proxy_hops;
          else
            next.local_alpha_s += a;
        }
        if (span && via_proxy) {
          if (span->first_send < 0 || t < span->first_send) span->first_send = t;
          span->last_arrival = std::max(span->last_arrival, t + a);
        }
        deliver(k, t + a, next);
        break;
      }
      case OpKind::kNvlsReduce: t += nvls(r).reduce_alpha_s; break;
      case OpKind::kNvlsStore:
        deliver(k, t + nvls(r).store_alpha_s, h);
        break;
      default: break;
    }
    done[g] = t;
    done_hops[g] = h;
    if (later(t, h, latest_th, latest_h)) {
      latest_h = h;
      latest_th = t;
    }
    latest = std::max(latest, t);
    next_target += G.target_count[k];
  }
  if (latest_hops) *latest_hops = latest_h;
  return latest;
}

// One protocol's cost of the programs `cp` (reference: p's count of elem_bytes).
AlgoCost programs_cost(const std::string& collective, const std::string& algorithm,
                       const CostPrograms& cp, const CollParams& p, uint32_t elem_bytes,
                       const FabricCosts& f, int slices, Protocol proto) {
  const int n = f.ranks;
  AlgoCost cost;
  const ProtocolCosts& pc = f.protocols[int(proto)];
  // The latency of one dependent step src -> dst.
  const auto alpha = [&](int src, int dst) {
    const PathCost c = f.path(src, dst);
    if (!f.protocol_model) return c.alpha_s;
    return c.proxy ? c.trip_s + pc.proxy_sync_s : pc.trips * c.trip_s + pc.sync_s;
  };
  const Schedule& s = cp.s;
  const int reps = cp.reps;  // ranks [0, reps) stand for every rank (cost_programs)
  cost.ranks_costed = reps;
  const double ref_bytes = static_cast<double>(p.count) * elem_bytes;
  const auto prog = [&](int r) -> const std::vector<Op>& { return cp.prog(r); };
  bool in_switch = false;
  for (int r = 0; r < reps; ++r)
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
  // The tree across nodes: a piece is reduced up its node's chain over NVLink, then up and
  // down the tree of nodes over the NICs, then down the chain; with the few pieces per
  // stream NCCL's chunking leaves (8 to 16 against 2 D hops) the levels barely overlap, so
  // its NVLink and NIC groups are costed in sequence, as hierarchical's phases (2 x DGX
  // H100, 64 MiB, tree/simple: 449.58 us simulated, NVLink 326 + NIC 169 us).
  const bool tree_levels = algorithm == "tree" && f.domain_size > 0 && f.domain_size < n;
  const bool phased =
      algorithm == "hierarchical" || algorithm == "hierarchical_nvls" || tree_levels;
  // Pipeline depth of a phased schedule: its slices; hierarchical_nvls also reduces, sends
  // across and stores each slice sub-block by sub-block (N per slice, in the order the
  // ring across domains moves them), so its levels already overlap per sub-block.
  const int domains = n / (f.domain_size > 0 ? f.domain_size : n);
  const int depth =
      std::max(slices, 1) * (algorithm == "hierarchical_nvls" ? std::max(domains, 1) : 1);
  std::vector<std::map<int, double>> up(static_cast<std::size_t>(reps)),
      down(static_cast<std::size_t>(reps));
  std::vector<double> reduce_in(f.nvls_switches.size(), 0.0),
      mcast_in(f.nvls_switches.size(), 0.0);
  // Port groups that leave through a NIC (proxy hops), per rank; and per (rank, such
  // group) the streams that send over it (the channels that share the NIC).
  std::vector<std::map<int, std::map<int32_t, int>>> proxy_groups(static_cast<std::size_t>(reps));
  std::vector<std::map<int32_t, int>> streams_of(static_cast<std::size_t>(reps));
  for (int r = 0; r < reps; ++r) {
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
  for (int r = 0; r < reps; ++r) {
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
  double send_busy = 0;  // the longest a non-proxy send holds its stream (ProtocolCosts)
  if (f.protocol_model) {
    cost.base_s = f.base_s;
    cost.s_per_byte *= pc.wire_factor;
    if (cost.store_forward) {
      cost.s_per_byte = worst_sf / ref_bytes;
      // The NIC the channels share most: its rate and the share of the rank's streams
      // (the reference schedule's channels) that send over it.
      double per_stream = 0;
      for (int r = 0; r < reps; ++r)
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
    for (int r = 0; r < reps; ++r) {
      double sent = 0;
      for (const Op& op : prog(r))
        if (op.kind == OpKind::kSend && op.stream >= 0) {
          sends[{r, op.stream}] += 1;
          sent += static_cast<double>(op.count) * elem_bytes;
        }
      most_sent = std::max(most_sent, sent);
    }
    for (const auto& [key, k] : sends) cost.stream_steps = std::max(cost.stream_steps, k);
    // The largest message of a stream (one piece per message in the reference), for the
    // pipeline's fill (AlgoCost::time_s).
    for (int r = 0; r < reps; ++r)
      for (const Op& op : prog(r))
        if (op.kind == OpKind::kSend && op.stream >= 0)
          cost.stream_msg_per_byte = std::max(
              cost.stream_msg_per_byte, static_cast<double>(op.count) * elem_bytes / ref_bytes);
    cost.ref_channels = p.channels;
    // Streams per channel: the busiest stream's bytes where a rank runs more streams than
    // the reference has channels.
    std::map<std::pair<int, int32_t>, double> stream_bytes;
    std::map<int, int> streams_of_rank;
    for (int r = 0; r < reps; ++r)
      for (const Op& op : prog(r))
        if (op.kind == OpKind::kSend && op.stream >= 0)
          stream_bytes[{r, op.stream}] += static_cast<double>(op.count) * elem_bytes;
    for (const auto& [key, b] : stream_bytes) ++streams_of_rank[key.first];
    int most_streams = 0;
    for (const auto& [r, k] : streams_of_rank) most_streams = std::max(most_streams, k);
    if (most_streams > std::max(p.channels, 1))
      for (const auto& [key, b] : stream_bytes)
        cost.stream_per_byte = std::max(cost.stream_per_byte, b / ref_bytes);
    // The reference's channels share the rank's bytes: one channel's share times them.
    cost.sent_per_byte = most_sent / ref_bytes;
    cost.piece_sync_s = 0;
    for (int r = 0; r < reps; ++r)
      for (const Op& op : prog(r))
        if (op.kind == OpKind::kSend && op.stream >= 0) {
          const PathCost c = f.path(r, op.peer);
          double& sync = c.proxy ? cost.proxy_sync_s : cost.piece_sync_s;
          sync = std::max(sync, alpha(r, op.peer));
          if (!c.proxy) send_busy = std::max(send_busy, pc.send_trips * c.trip_s + pc.send_s);
        }
    cost.channel_Bps = pc.channel_Bps;
    cost.line_factor = pc.line_factor;
    // Without streams a connection's slots bound the steps in flight to a peer
    // (AlgoCost::connection_s): the busiest proxy connection (peer, stream, channel) of
    // the reference, and whether its sends name their channel (one connection per
    // channel, as the engine and NCCL) or share one across the channels.
    if (cost.store_forward && cost.stream_steps <= 0 && f.slots > 0) {
      using Conn = std::tuple<int, int32_t, int32_t>;  // (peer, stream, channel)
      std::map<std::pair<int, Conn>, std::tuple<double, double, bool>> conns;
      // (rank, NIC group) -> its proxy connections
      std::map<std::pair<int, int>, std::set<Conn>> on_group;
      for (int r = 0; r < reps; ++r)
        for (const Op& op : prog(r))
          if (op.kind == OpKind::kSend) {
            const PathCost c = f.path(r, op.peer);
            if (!c.proxy) continue;
            const Conn k{op.peer, op.stream, op.channel};
            auto& [sent, largest, per_channel] = conns[{r, k}];  // sends, largest, channel
            sent += 1;
            largest = std::max(largest, static_cast<double>(op.count) * elem_bytes);
            per_channel = op.channel >= 0;
            on_group[{r, c.group}].insert(k);
            cost.conn_alpha_s = std::max(cost.conn_alpha_s, alpha(r, op.peer));
            cost.slot_cycle_s = std::max(
                cost.slot_cycle_s, alpha(r, op.peer) + pc.proxy_head_s + f.path(op.peer, r).trip_s);
          }
      for (const auto& [key, x] : conns) {
        const auto& [sent, largest, per_channel] = x;
        if (sent > cost.conn_sends ||
            (sent == cost.conn_sends && largest / ref_bytes > cost.conn_msg_per_byte)) {
          cost.conn_sends = sent;
          cost.conn_msg_per_byte = largest / ref_bytes;
          cost.conn_per_channel = per_channel;
          const int r = key.first;
          cost.conn_per_nic =
              double(on_group[{r, f.path(r, std::get<0>(key.second)).group}].size());
        }
      }
      cost.slots = f.slots;
      if (in_switch)
        for (int r = 0; r < reps; ++r)
          cost.conn_fill_s_per_byte =
              std::max(cost.conn_fill_s_per_byte, double(nvls_group_size(s)) * kNvlsWindow /
                                                      f.group_Bps(r, nvls(r).group));
    }
  }

  // Latency: the longest dependent message chain (chain_latency_s), and the hops and proxy
  // hops of that chain (the pass term's proxy share).
  const std::function<const NvlsPath&(int)> nvls_of = nvls;
  const std::function<bool(int, int)> proxy_hop = [&](int src, int dst) {
    return f.protocol_model && f.path(src, dst).proxy;
  };
  // A streamed send holds its stream beyond its pass (engine.h): over a proxy hop until the
  // block has written the step (Simple: and fenced it), else send_trips small-packet trips
  // plus send_s (Simple: its data and ack, then the fence; LL/LL128: nothing).
  const std::function<double(int, int)> hold = [&](int src, int dst) {
    if (!f.protocol_model) return 0.0;
    const PathCost c = f.path(src, dst);
    return c.proxy ? pc.send_s : pc.send_trips * c.trip_s + pc.send_s;
  };
  ChainHops hops;
  ProxySpan span;
  cost.latency_s = chain_latency_s(collective, algorithm, cp, alpha, nvls_of, proxy_hop, hold,
                                   &hops, &span);
  if (cost.conn_sends > 0 && span.first_send >= 0) {
    cost.conn_first_s = span.first_send;
    cost.conn_span_s = span.last_arrival - span.first_send;
    cost.conn_drain_s = std::max(0.0, cost.latency_s - span.last_arrival);
  }
  if (cost.store_forward && hops.hops > 0) cost.proxy_share = double(hops.proxy_hops) / hops.hops;
  if (f.protocol_model && cost.stream_steps > 0) {
    cost.chain_steps = hops.hops;
    cost.chain_queued = hops.queued;
    cost.chain_queued_hold_s = hops.queued_hold_s;
    // The steps of the longest chain are its hops, not the slowest hop of the schedule:
    // where the hops differ (leaf and spine hops of a two-tier fabric) a step costs their
    // mean along that chain. Equal hops keep the slowest (the same value up to rounding).
    // A stream's step is also at least as long as its slowest send holds it (a spine hop's
    // data and ack and the fence, under Simple): that rank's stream then sets the pace.
    const uint32_t local = hops.hops - hops.proxy_hops;
    if (local > 0) {
      const double mean = hops.local_alpha_s / local;
      if (mean < cost.piece_sync_s * (1 - 1e-9))
        cost.piece_sync_s = std::max(mean, std::min(send_busy, cost.piece_sync_s));
    }
  }
  return cost;
}

}  // namespace

std::vector<AlgoCost> schedule_costs(const std::string& collective, const std::string& algorithm,
                                     int channels, uint32_t elem_bytes, int root,
                                     const FabricCosts& f, int slices,
                                     const std::vector<Protocol>& protos) {
  const int n = f.ranks;
  if (n <= 1) return std::vector<AlgoCost>(protos.size());
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
  const CostPrograms cp = cost_programs(collective, algorithm, p, f);
  std::vector<AlgoCost> out;
  for (Protocol proto : protos)
    out.push_back(programs_cost(collective, algorithm, cp, p, elem_bytes, f, slices, proto));
  return out;
}

AlgoCost schedule_cost(const std::string& collective, const std::string& algorithm,
                       int channels, uint32_t elem_bytes, int root, const FabricCosts& f,
                       int slices, Protocol proto) {
  return schedule_costs(collective, algorithm, channels, elem_bytes, root, f, slices, {proto})
      .front();
}

}  // namespace fabricsim::coll
