// Halving-doubling all-reduce (algorithms.h, "halving_doubling"): Rabenseifner's recursive
// halving reduce-scatter and recursive doubling all-gather on the largest power of two of
// ranks, the others folded in and out.
#include <cstddef>
#include <vector>

#include "models/collectives/algorithms/common.h"

namespace fabricsim::coll {

using namespace detail;

namespace {

constexpr const char* kWho = "allreduce_halving_doubling";

// n a power of two: 2 log2(n) steps; else the fold adds one whole-vector step each way.
double halving_doubling_cost(int n, double S, double al, double be, int) {
  const int lg = floor_log2(n);
  const double p = static_cast<double>(int64_t{1} << lg);
  if ((int64_t{1} << lg) == int64_t{n}) return 2.0 * lg * al + 2.0 * spread(n) * S * be;
  return (2.0 * lg + 2.0) * al + (2.0 * (p - 1.0) / p + 2.0) * S * be;
}

}  // namespace

Schedule allreduce_halving_doubling(const CollParams& p) {
  const uint64_t chunk = check_params(kWho, p, false);
  const int n = p.ranks;
  Schedule sched = empty_schedule("halving_doubling", n, p.count);
  if (n == 1) return sched;
  int k = 0;
  while ((int64_t{2} << k) <= n) ++k;
  const int pw = 1 << k;  // largest power of two <= n
  const int rem = n - pw;
  const uint64_t fold_in = 0, fold_out = 2u * static_cast<uint64_t>(k) + 1;
  const std::vector<Range> ch = split_range(Range{0, p.count}, p.channels);
  // blk[c][b]: core block b of channel c; blocks_range spans blocks [b0, b1).
  std::vector<std::vector<Range>> blk;
  for (const Range& r : ch) blk.push_back(split_range(r, pw));
  auto blocks_range = [&](std::size_t c, int b0, int b1) {
    const Range first = blk[c][static_cast<std::size_t>(b0)];
    const Range last = blk[c][static_cast<std::size_t>(b1 - 1)];
    return Range{first.offset, last.offset + last.count - first.offset};
  };
  const Tags tags(kWho, p.channels, fold_out + 1, chunk, ch[0].count);
  auto real_rank = [rem](int v) { return v < rem ? 2 * v + 1 : v + rem; };

  for (int r = 0; r < n; ++r) {
    RankBuilder rb(kWho, ops_of(sched, r));
    // Sends / recvs every piece of one range per channel, channel-major.
    auto send_all = [&](int peer, uint64_t step, const std::vector<Range>& per_ch) {
      for (std::size_t c = 0; c < per_ch.size(); ++c)
        for (uint64_t j = 0; j < num_pieces(per_ch[c], chunk); ++j)
          rb.send(peer, tags(static_cast<int>(c), step, j), piece_of(per_ch[c], j, chunk), {},
                  -1, static_cast<int32_t>(c));
    };
    auto recv_all = [&](int peer, uint64_t step, const std::vector<Range>& per_ch, RecvMode mode) {
      for (std::size_t c = 0; c < per_ch.size(); ++c)
        for (uint64_t j = 0; j < num_pieces(per_ch[c], chunk); ++j)
          rb.recv(peer, tags(static_cast<int>(c), step, j), piece_of(per_ch[c], j, chunk), mode,
                  -1, static_cast<int32_t>(c));
    };
    if (r < 2 * rem && r % 2 == 0) {  // folded out: hand the data over, get the result back
      send_all(r + 1, fold_in, ch);
      recv_all(r + 1, fold_out, ch, RecvMode::kCopy);
      continue;
    }
    if (r < 2 * rem) recv_all(r - 1, fold_in, ch, RecvMode::kReduceSum);
    const int v = r < 2 * rem ? r / 2 : r - rem;
    // Recursive halving: distance d = pw/2 .. 1, keep the half of [lo, lo+2d) holding v.
    for (int s = 1; s <= k; ++s) {
      const int d = pw >> s;
      const int lo = v & ~(2 * d - 1);
      const bool keep_low = (v & d) == 0;
      const int send_lo = keep_low ? lo + d : lo;
      const int keep_lo = keep_low ? lo : lo + d;
      std::vector<Range> give, keep;
      for (std::size_t c = 0; c < ch.size(); ++c) {
        give.push_back(blocks_range(c, send_lo, send_lo + d));
        keep.push_back(blocks_range(c, keep_lo, keep_lo + d));
      }
      const int peer = real_rank(v ^ d);
      send_all(peer, static_cast<uint64_t>(s), give);
      recv_all(peer, static_cast<uint64_t>(s), keep, RecvMode::kReduceSum);
    }
    // Recursive doubling: distance d = 1 .. pw/2, exchange the aligned d-block ranges.
    for (int s = 1; s <= k; ++s) {
      const int d = 1 << (s - 1);
      const int mine = v & ~(d - 1);
      const int theirs = (v ^ d) & ~(d - 1);
      std::vector<Range> give, take;
      for (std::size_t c = 0; c < ch.size(); ++c) {
        give.push_back(blocks_range(c, mine, mine + d));
        take.push_back(blocks_range(c, theirs, theirs + d));
      }
      const int peer = real_rank(v ^ d);
      const uint64_t step = static_cast<uint64_t>(k + s);
      send_all(peer, step, give);
      recv_all(peer, step, take, RecvMode::kCopy);
    }
    if (r < 2 * rem) send_all(r - 1, fold_out, ch);
  }
  return sched;
}

namespace detail {

void register_halving_doubling(AlgorithmRegistry& r) {
  r.add(algo_entry(
      Collective::kAllReduce, "halving_doubling", 0,
      "2 log2(n) alpha + 2(n-1)/n S beta (n a power of two); else, p = 2^floor(log2 n): "
      "(2 log2(p) + 2) alpha + (2(p-1)/p + 2) S beta",
      one_level(allreduce_halving_doubling), halving_doubling_cost, checks_params(kWho)));
}

}  // namespace detail

}  // namespace fabricsim::coll
