// Hierarchical all-reduce (algorithms.h, "hierarchical"): ring reduce-scatter inside every
// domain, ring all-reduce of each block across the domains (one rail), ring all-gather
// inside; with slices, a pipeline across the levels. Also the two-level layout that
// hierarchical_nvls (in_switch.cpp) shares.
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "models/collectives/algorithms/common.h"
#include "models/core/errors.h"

namespace fabricsim::coll {

using namespace detail;

namespace {

constexpr const char* kWho = "allreduce_hierarchical";

// Ring reduce-scatter and all-gather inside the domains, ring all-reduce of S/L across
// them, phases not overlapped; one alpha and beta for both levels.
double hierarchical_cost(int n, double S, double al, double be, int domain_size) {
  const double dn = static_cast<double>(n);
  const double L = cost_domain_size(n, domain_size), N = dn / L;
  return (2.0 * (L - 1.0) + 2.0 * (N - 1.0)) * al +
         (2.0 * (L - 1.0) / L + 2.0 * (N - 1.0) / (N * L)) * S * be;
}

}  // namespace

namespace detail {

void check_two_level(const char* who, const CollParams& p, int domain_size) {
  const int n = p.ranks;
  const int L = domain_size == 0 ? n : domain_size;
  if (L < 1 || n % L != 0)
    bad_param(who, "domain_size " + std::to_string(domain_size) + " does not divide ranks " +
                       std::to_string(n));
  if (p.slices < 1) bad_param(who, "slices must be >= 1 (got " + std::to_string(p.slices) + ")");
}

TwoLevelLayout two_level_layout(const char* who, const CollParams& p, int domain_size) {
  check_two_level(who, p, domain_size);
  const int n = p.ranks;
  TwoLevelLayout t;
  t.L = domain_size == 0 ? n : domain_size;
  t.N = n / t.L;
  for (const Range& ch : split_range(Range{0, p.count}, p.channels)) {
    t.blk.emplace_back();
    t.sub.emplace_back();
    for (const Range& sl : split_range(ch, p.slices)) {
      t.blk.back().push_back(split_range(sl, t.L));
      t.sub.back().emplace_back();
      for (const Range& b : t.blk.back().back())
        t.sub.back().back().push_back(split_range(b, t.N));
    }
  }
  return t;
}

int cost_domain_size(int n, int domain_size) {
  const int l = domain_size == 0 ? n : domain_size;
  if (l < 1 || n % l != 0)
    throw InternalError("alpha_beta_time_s: domain_size " + std::to_string(domain_size) +
                        " does not divide n " + std::to_string(n));
  return l;
}

}  // namespace detail

Schedule allreduce_hierarchical(const CollParams& p, int domain_size) {
  const uint64_t chunk = check_params(kWho, p, false);
  const int n = p.ranks;
  const TwoLevelLayout lay = two_level_layout(kWho, p, domain_size);
  const int L = lay.L, N = lay.N;
  const auto& blk = lay.blk;
  const auto& sub = lay.sub;
  Schedule sched = empty_schedule("hierarchical", n, p.count);
  if (n == 1) return sched;
  const uint64_t p2 = static_cast<uint64_t>(L - 1);          // first phase-2 step
  const uint64_t p3 = p2 + 2 * static_cast<uint64_t>(N - 1);  // first phase-3 step
  const uint64_t S = p3 + static_cast<uint64_t>(L - 1);       // steps per slice
  const std::size_t M = static_cast<std::size_t>(p.slices);
  const Tags tags(kWho, p.channels, std::max<uint64_t>(S * M, 1), chunk, blk[0][0][0].count);
  const int built = p.rank_limit > 0 ? std::min(p.rank_limit, n) : n;
  for (int r = 0; r < built; ++r) {
    RankBuilder rb(kWho, ops_of(sched, r));
    const int k = r / L, l = r % L;
    const int next_local = k * L + (l + 1) % L, prev_local = k * L + mod_n(l - 1, L);
    const int next_dom = ((k + 1) % N) * L + l, prev_dom = mod_n(k - 1, N) * L + l;
    // window[c]: this rank's recvs of the last phase-1 step of the previous slice in
    // channel c; the next slice's first sends wait for them.
    std::vector<std::vector<uint32_t>> window(blk.size());
    auto ub = [](int x) { return static_cast<std::size_t>(x); };
    for (std::size_t i = 0; i < M; ++i) {
      const uint64_t base = S * i;
      // One step: for every channel, send `give(c)` to `to` and receive `take(c)` from
      // `from`; `first` marks the slice's first step (it carries the window deps) and
      // `last1` the last phase-1 step (its recvs become the next slice's window).
      auto step = [&](uint64_t st, int to, int from, RecvMode mode, bool first, bool last1,
                      auto give, auto take) {
        for (std::size_t c = 0; c < blk.size(); ++c) {
          const Range g = give(c);
          static const std::vector<uint32_t> none;
          for (uint64_t j = 0; j < num_pieces(g, chunk); ++j)
            rb.send(to, tags(static_cast<int>(c), base + st, j), piece_of(g, j, chunk),
                    first ? window[c] : none, -1, static_cast<int32_t>(c));
        }
        for (std::size_t c = 0; c < blk.size(); ++c) {
          const Range t = take(c);
          if (last1) window[c].clear();
          for (uint64_t j = 0; j < num_pieces(t, chunk); ++j) {
            const uint32_t op = rb.recv(from, tags(static_cast<int>(c), base + st, j),
                                        piece_of(t, j, chunk), mode, -1, static_cast<int32_t>(c));
            if (last1) window[c].push_back(op);
          }
        }
      };
      for (int s = 0; s + 1 < L; ++s)
        step(static_cast<uint64_t>(s), next_local, prev_local, RecvMode::kReduceSum, s == 0,
             s + 2 == L, [&](std::size_t c) { return blk[c][i][ub(mod_n(l - 1 - s, L))]; },
             [&](std::size_t c) { return blk[c][i][ub(mod_n(l - 2 - s, L))]; });
      for (int t = 0; t < 2 * (N - 1); ++t)
        step(p2 + static_cast<uint64_t>(t), next_dom, prev_dom,
             t <= N - 2 ? RecvMode::kReduceSum : RecvMode::kCopy, false, false,
             [&](std::size_t c) { return sub[c][i][ub(l)][ub(mod_n(k - t, N))]; },
             [&](std::size_t c) { return sub[c][i][ub(l)][ub(mod_n(k - 1 - t, N))]; });
      for (int s = 0; s + 1 < L; ++s)
        step(p3 + static_cast<uint64_t>(s), next_local, prev_local, RecvMode::kCopy, false,
             false, [&](std::size_t c) { return blk[c][i][ub(mod_n(l - s, L))]; },
             [&](std::size_t c) { return blk[c][i][ub(mod_n(l - 1 - s, L))]; });
    }
  }
  return sched;
}

namespace detail {

void register_hierarchical(AlgorithmRegistry& r) {
  r.add(algo_entry(
      Collective::kAllReduce, "hierarchical", kPipelined | kLevels,
      "L = domain size, N = n/L: (2(L-1) + 2(N-1)) alpha + (2(L-1)/L + 2(N-1)/(N L)) S beta",
      allreduce_hierarchical, hierarchical_cost, [](const CollParams& p, int domain_size) {
        check_params(kWho, p, false);
        check_two_level(kWho, p, domain_size);
      }));
}

}  // namespace detail

}  // namespace fabricsim::coll
