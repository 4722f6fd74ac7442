// Ring family (algorithms.h): all_reduce ring (ring_allreduce.h's ring_allreduce, on rail-aligned
// orders on two-level systems), the reduce_scatter and all_gather rings (its two halves),
// and the broadcast and reduce chains.
#include <algorithm>
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

// The ring of every channel (a permutation of the ranks): the topology's rings
// (CollParams::rings) cycled over the channels; else, on a two-level system, rail-aligned
// orders; else 0, 1, .., n-1.
std::vector<std::vector<int>> channel_rings(const CollParams& p, int domain_size) {
  std::vector<std::vector<int>> orders;
  if (p.rings && !p.rings->empty()) {
    for (int c = 0; c < p.channels; ++c)
      orders.push_back((*p.rings)[static_cast<std::size_t>(c) % p.rings->size()]);
    for (const std::vector<int>& o : orders)
      if (static_cast<int>(o.size()) != p.ranks)
        throw InternalError("channel_rings: a ring of " + std::to_string(o.size()) +
                            " ranks for " + std::to_string(p.ranks));
    return orders;
  }
  if (domain_size > 0 && domain_size < p.ranks)
    return rail_ring_orders(p.ranks, domain_size, p.channels);
  std::vector<int> identity(static_cast<std::size_t>(p.ranks));
  for (int r = 0; r < p.ranks; ++r) identity[static_cast<std::size_t>(r)] = r;
  return std::vector<std::vector<int>>(static_cast<std::size_t>(p.channels), identity);
}

// Both halves of the ring all-reduce, shifted so that block r ends on rank r. On channel
// c's ring the rank at position i plays rank i of the plain ring, and block b there is
// block ring[b].
Schedule ring_half(const CollParams& p, bool reduce_scatter, int domain_size) {
  const char* who = reduce_scatter ? kReduceScatterRing : kAllGatherRing;
  const uint64_t chunk = check_params(who, p, false);
  const int n = p.ranks;
  Schedule sched = empty_schedule("ring", n, p.count);
  if (n == 1) return sched;
  const auto sub = block_major(p.count, n, p.channels);
  const Tags tags(who, p.channels, static_cast<uint64_t>(n - 1), chunk, sub[0][0].count);
  const RecvMode mode = reduce_scatter ? RecvMode::kReduceSum : RecvMode::kCopy;
  const std::size_t nch = static_cast<std::size_t>(p.channels);
  const std::vector<std::vector<int>> ring = channel_rings(p, domain_size);
  // pos[c][r]: position of rank r on channel c's ring.
  std::vector<std::vector<int>> pos(nch, std::vector<int>(static_cast<std::size_t>(n)));
  for (std::size_t c = 0; c < nch; ++c)
    for (int i = 0; i < n; ++i) pos[c][static_cast<std::size_t>(ring[c][static_cast<std::size_t>(i)])] = i;
  auto at = [&](std::size_t c, int i) { return ring[c][static_cast<std::size_t>(mod_n(i, n))]; };
  for (int r = 0; r < n; ++r) {
    RankBuilder rb(who, ops_of(sched, r));
    // Reduce-scatter sends block i-1-s at step s (its own at s = 0, then the one it reduced
    // at s-1); all-gather sends block i-s (i: its position). Either way it receives the
    // block before it, which it sends at step s+1.
    auto block = [&](int s, std::size_t c) -> Range {
      const int i = pos[c][static_cast<std::size_t>(r)];
      return sub[static_cast<std::size_t>(at(c, reduce_scatter ? i - 1 - s : i - s))][c];
    };
    auto send = [&](int s, std::size_t c, uint64_t j) {
      rb.send(at(c, pos[c][static_cast<std::size_t>(r)] + 1),
              tags(static_cast<int>(c), static_cast<uint64_t>(s), j),
              piece_of(block(s, c), j, chunk), {}, static_cast<int32_t>(c));
    };
    auto recv = [&](int s, std::size_t c, uint64_t j) {
      rb.recv(at(c, pos[c][static_cast<std::size_t>(r)] - 1),
              tags(static_cast<int>(c), static_cast<uint64_t>(s), j),
              piece_of(block(s + 1, c), j, chunk), mode, static_cast<int32_t>(c));
    };
    if (p.loop_slices > 0) {
      // NCCL's loop order (RingParams::loop_slices): chunk after chunk through every step.
      const uint64_t g = static_cast<uint64_t>(p.loop_slices);
      for (std::size_t c = 0; c < nch; ++c) {
        uint64_t most = 0;
        for (const auto& b : sub) most = std::max(most, num_pieces(b[c], chunk));
        for (uint64_t first = 0; first < most; first += g) {
          auto end = [&](int s) { return std::min(first + g, num_pieces(block(s, c), chunk)); };
          for (uint64_t j = first; j < end(0); ++j) send(0, c, j);
          for (int s = 1; s + 1 < n; ++s)
            for (uint64_t j = first; j < end(s); ++j) {
              recv(s - 1, c, j);
              send(s, c, j);
            }
          for (uint64_t j = first; j < end(n - 1); ++j) recv(n - 2, c, j);
        }
      }
      continue;
    }
    for (int s = 0; s + 1 < n; ++s) {
      for (std::size_t c = 0; c < nch; ++c)
        for (uint64_t j = 0; j < num_pieces(block(s, c), chunk); ++j) send(s, c, j);
      for (std::size_t c = 0; c < nch; ++c)
        for (uint64_t j = 0; j < num_pieces(block(s + 1, c), chunk); ++j) recv(s, c, j);
    }
  }
  return sched;
}

// Pipelined chain along each channel's ring from rank `first` (the ranks after it on the
// ring, to the one before it), each piece forwarded on arrival; `mode` is how a rank
// absorbs the piece it receives.
Schedule chain(const char* who, const CollParams& p, int first, RecvMode mode, int domain_size) {
  const uint64_t chunk = check_params(who, p, true);
  const int n = p.ranks;
  Schedule sched = empty_schedule("ring", n, p.count);
  if (n == 1) return sched;
  const std::vector<Range> ch = split_range(Range{0, p.count}, p.channels);
  const Tags tags(who, p.channels, 1, chunk, ch[0].count);
  const uint64_t max_pieces = num_pieces(ch[0], chunk);  // channel 0 is the largest
  const std::vector<std::vector<int>> ring = channel_rings(p, domain_size);
  std::vector<std::vector<int>> at_pos(ring.size(), std::vector<int>(static_cast<std::size_t>(n)));
  for (std::size_t c = 0; c < ring.size(); ++c)
    for (int i = 0; i < n; ++i) at_pos[c][static_cast<std::size_t>(ring[c][static_cast<std::size_t>(i)])] = i;
  for (int r = 0; r < n; ++r) {
    RankBuilder rb(who, ops_of(sched, r));
    for (uint64_t j = 0; j < max_pieces; ++j) {
      for (std::size_t c = 0; c < ch.size(); ++c) {
        if (j >= num_pieces(ch[c], chunk)) continue;
        const int i = at_pos[c][static_cast<std::size_t>(r)];
        const int q = mod_n(i - at_pos[c][static_cast<std::size_t>(first)], n);  // chain position
        const Range piece = piece_of(ch[c], j, chunk);
        const uint64_t tag = tags(static_cast<int>(c), 0, j);
        if (q > 0)
          rb.recv(ring[c][static_cast<std::size_t>(mod_n(i - 1, n))], tag, piece, mode,
                  static_cast<int32_t>(c));
        if (q < n - 1)  // dep: the recv just above
          rb.send(ring[c][static_cast<std::size_t>(mod_n(i + 1, n))], tag, piece, {},
                  static_cast<int32_t>(c));
      }
    }
  }
  return sched;
}

// all_reduce ring on each channel's ring (channel_rings): the topology's rings, or on
// two-level systems rings that cross domains only between equal local indices.
Schedule ring_allreduce_schedule(const CollParams& p, int domain_size) {
  RingParams rp{p.ranks, p.count, p.elem_bytes, p.channels, p.chunk_bytes};
  rp.loop_slices = p.loop_slices;
  rp.rank_limit = p.rank_limit;
  if ((p.rings && !p.rings->empty()) || (domain_size > 0 && domain_size < p.ranks))
    return ring_allreduce(rp, channel_rings(p, domain_size));
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

Schedule reduce_scatter_ring(const CollParams& p, int domain_size) {
  return ring_half(p, true, domain_size);
}
Schedule all_gather_ring(const CollParams& p, int domain_size) {
  return ring_half(p, false, domain_size);
}

Schedule broadcast_ring(const CollParams& p, int domain_size) {
  return chain(kBroadcastRing, p, p.root, RecvMode::kCopy, domain_size);
}

Schedule reduce_ring(const CollParams& p, int domain_size) {
  // The chain starts after the root (on each channel's ring) and ends on it.
  if (p.ranks < 1) return chain(kReduceRing, p, 0, RecvMode::kReduceSum, domain_size);
  check_params(kReduceRing, p, true);
  int first = mod_n(p.root + 1, p.ranks);
  if ((p.rings && !p.rings->empty()) || (domain_size > 0 && domain_size < p.ranks)) {
    // Per channel the rank after the root on its ring; chain() takes one first rank, so
    // the topology's rings must agree on it (they all start at rank 0 and the chain of
    // each channel starts after the root on that channel's ring).
    const std::vector<std::vector<int>> ring = channel_rings(p, domain_size);
    for (std::size_t i = 0; i < ring[0].size(); ++i)
      if (ring[0][i] == p.root) first = ring[0][(i + 1) % ring[0].size()];
  }
  return chain(kReduceRing, p, first, RecvMode::kReduceSum, domain_size);
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
  r.add(algo_entry(Collective::kAllReduce, "ring", kPipelined | kNccl, "2(n-1) alpha + 2(n-1)/n S beta",
                   ring_allreduce_schedule, ring_allreduce_cost, checks_params(kRingAllReduce)));
  r.add(algo_entry(Collective::kReduceScatter, "ring", kPipelined | kNccl, "(n-1) alpha + (n-1)/n S beta",
                   reduce_scatter_ring, ring_half_cost,
                   checks_params(kReduceScatterRing)));
  r.add(algo_entry(Collective::kAllGather, "ring", kPipelined | kNccl, "(n-1) alpha + (n-1)/n S beta",
                   all_gather_ring, ring_half_cost, checks_params(kAllGatherRing)));
  r.add(algo_entry(Collective::kBroadcast, "ring", kPipelined | kRooted | kNccl, "(n-1) alpha + S beta",
                   broadcast_ring, chain_cost, checks_params(kBroadcastRing, true)));
  r.add(algo_entry(Collective::kReduce, "ring", kPipelined | kRooted | kNccl, "(n-1) alpha + S beta",
                   reduce_ring, chain_cost, checks_params(kReduceRing, true)));
}

}  // namespace detail

}  // namespace fabricsim::coll
