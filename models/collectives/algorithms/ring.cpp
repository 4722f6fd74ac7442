// Ring family (algorithms.h): all_reduce ring (ring_allreduce.h's ring_allreduce, on rail-aligned
// orders on two-level systems), the reduce_scatter and all_gather rings (its two halves),
// and the broadcast and reduce chains.
#include <cstddef>
#include <string>
#include <vector>

#include "models/collectives/algorithms/common.h"
#include "models/core/errors.h"

namespace fabricsim::coll {

using namespace detail;

namespace {

constexpr const char* kRingAllReduce = "ring_allreduce";
constexpr const char* kReduceScatterRing = "reduce_scatter_ring";
constexpr const char* kAllGatherRing = "all_gather_ring";
constexpr const char* kBroadcastRing = "broadcast_ring";
constexpr const char* kReduceRing = "reduce_ring";

// Both halves of the ring all-reduce, shifted so that block r ends on rank r.
Schedule ring_half(const CollParams& p, bool reduce_scatter) {
  const char* who = reduce_scatter ? kReduceScatterRing : kAllGatherRing;
  const uint64_t chunk = check_params(who, p, false);
  const int n = p.ranks;
  Schedule sched = empty_schedule("ring", n, p.count);
  if (n == 1) return sched;
  const auto sub = block_major(p.count, n, p.channels);
  const Tags tags(who, p.channels, static_cast<uint64_t>(n - 1), chunk, sub[0][0].count);
  const RecvMode mode = reduce_scatter ? RecvMode::kReduceSum : RecvMode::kCopy;
  const std::size_t nch = static_cast<std::size_t>(p.channels);
  for (int r = 0; r < n; ++r) {
    RankBuilder rb(who, ops_of(sched, r));
    const int succ = (r + 1) % n;
    const int pred = (r + n - 1) % n;
    for (int s = 0; s + 1 < n; ++s) {
      // Reduce-scatter sends block r-1-s (its own at s = 0, then the one it reduced at
      // s-1); all-gather sends block r-s. Either way it receives the block before it.
      const int send_block = mod_n(reduce_scatter ? r - 1 - s : r - s, n);
      const int recv_block = mod_n(send_block - 1, n);
      const uint64_t step = static_cast<uint64_t>(s);
      for (std::size_t c = 0; c < nch; ++c) {
        const Range blk = sub[static_cast<std::size_t>(send_block)][c];
        for (uint64_t j = 0; j < num_pieces(blk, chunk); ++j)
          rb.send(succ, tags(static_cast<int>(c), step, j), piece_of(blk, j, chunk));
      }
      for (std::size_t c = 0; c < nch; ++c) {
        const Range blk = sub[static_cast<std::size_t>(recv_block)][c];
        for (uint64_t j = 0; j < num_pieces(blk, chunk); ++j)
          rb.recv(pred, tags(static_cast<int>(c), step, j), piece_of(blk, j, chunk), mode);
      }
    }
  }
  return sched;
}

// Pipelined chain through ranks first, first+1, .., first+n-1 (mod n), each piece
// forwarded on arrival; `mode` is how a rank absorbs the piece it receives.
Schedule chain(const char* who, const CollParams& p, int first, RecvMode mode) {
  const uint64_t chunk = check_params(who, p, true);
  const int n = p.ranks;
  Schedule sched = empty_schedule("ring", n, p.count);
  if (n == 1) return sched;
  const std::vector<Range> ch = split_range(Range{0, p.count}, p.channels);
  const Tags tags(who, p.channels, 1, chunk, ch[0].count);
  const uint64_t max_pieces = num_pieces(ch[0], chunk);  // channel 0 is the largest
  for (int r = 0; r < n; ++r) {
    RankBuilder rb(who, ops_of(sched, r));
    const int pos = mod_n(r - first, n);
    for (uint64_t j = 0; j < max_pieces; ++j) {
      for (std::size_t c = 0; c < ch.size(); ++c) {
        if (j >= num_pieces(ch[c], chunk)) continue;
        const Range piece = piece_of(ch[c], j, chunk);
        const uint64_t tag = tags(static_cast<int>(c), 0, j);
        if (pos > 0) rb.recv((r + n - 1) % n, tag, piece, mode);
        if (pos < n - 1) rb.send((r + 1) % n, tag, piece);  // dep: the recv just above
      }
    }
  }
  return sched;
}

// all_reduce ring: on two-level systems (0 < domain_size < ranks) its rings cross domains
// only between equal local indices (rail_ring_orders).
Schedule ring_allreduce_schedule(const CollParams& p, int domain_size) {
  const RingParams rp{p.ranks, p.count, p.elem_bytes, p.channels, p.chunk_bytes, p.rank_limit};
  if (domain_size > 0 && domain_size < p.ranks)
    return ring_allreduce(rp, rail_ring_orders(p.ranks, domain_size, p.channels));
  return ring_allreduce(rp);
}

// Alpha-beta terms (algorithms.h, alpha_beta_time_s); n >= 2.
double ring_allreduce_cost(int n, double S, double al, double be, int) {
  return 2.0 * (n - 1.0) * al + 2.0 * spread(n) * S * be;
}
double ring_half_cost(int n, double S, double al, double be, int) {
  return (n - 1.0) * al + spread(n) * S * be;
}
double chain_cost(int n, double S, double al, double be, int) { return (n - 1.0) * al + S * be; }

}  // namespace

Schedule reduce_scatter_ring(const CollParams& p) { return ring_half(p, true); }
Schedule all_gather_ring(const CollParams& p) { return ring_half(p, false); }

Schedule broadcast_ring(const CollParams& p) {
  return chain(kBroadcastRing, p, p.root, RecvMode::kCopy);
}

Schedule reduce_ring(const CollParams& p) {
  // The chain starts after the root and ends on it.
  return chain(kReduceRing, p, p.ranks >= 1 ? mod_n(p.root + 1, p.ranks) : 0,
               RecvMode::kReduceSum);
}

std::vector<std::vector<int>> rail_ring_orders(int ranks, int domain_size, int channels) {
  if (domain_size < 1 || ranks < 1 || ranks % domain_size != 0)
    throw InternalError("rail_ring_orders: domain_size " + std::to_string(domain_size) +
                        " does not divide ranks " + std::to_string(ranks));
  if (channels < 1)
    throw InternalError("rail_ring_orders: channels must be >= 1 (got " +
                        std::to_string(channels) + ")");
  const int L = domain_size, N = ranks / L;
  std::vector<std::vector<int>> orders(static_cast<std::size_t>(channels));
  for (int c = 0; c < channels; ++c) {
    std::vector<int>& o = orders[static_cast<std::size_t>(c)];
    if (N == 1 || L == 1) {
      for (int r = 0; r < ranks; ++r) o.push_back(r);
      continue;
    }
    const int a = c % L, b = (c + 1) % L, c3 = (c + 2) % L;
    const bool odd = N % 2 == 1 && L >= 3;
    for (int k = 0; k < N; ++k) {
      int e = k % 2 == 0 ? a : b, x = k % 2 == 0 ? b : a;
      if (odd && k == 0) e = c3;
      if (odd && k == N - 1) x = c3;
      o.push_back(k * L + e);
      for (int i = 1; i < L; ++i) {
        const int li = (e + i) % L;
        if (li != x) o.push_back(k * L + li);
      }
      o.push_back(k * L + x);
    }
  }
  return orders;
}

namespace detail {

void register_ring(AlgorithmRegistry& r) {
  r.add(algo_entry(Collective::kAllReduce, "ring", kPipelined, "2(n-1) alpha + 2(n-1)/n S beta",
                   ring_allreduce_schedule, ring_allreduce_cost, checks_params(kRingAllReduce)));
  r.add(algo_entry(Collective::kReduceScatter, "ring", kPipelined, "(n-1) alpha + (n-1)/n S beta",
                   one_level(reduce_scatter_ring), ring_half_cost,
                   checks_params(kReduceScatterRing)));
  r.add(algo_entry(Collective::kAllGather, "ring", kPipelined, "(n-1) alpha + (n-1)/n S beta",
                   one_level(all_gather_ring), ring_half_cost, checks_params(kAllGatherRing)));
  r.add(algo_entry(Collective::kBroadcast, "ring", kPipelined | kRooted, "(n-1) alpha + S beta",
                   one_level(broadcast_ring), chain_cost, checks_params(kBroadcastRing, true)));
  r.add(algo_entry(Collective::kReduce, "ring", kPipelined | kRooted, "(n-1) alpha + S beta",
                   one_level(reduce_ring), chain_cost, checks_params(kReduceRing, true)));
}

}  // namespace detail

}  // namespace fabricsim::coll
