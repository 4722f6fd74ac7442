// Direct all-reduce (algorithms.h, "direct (all_reduce)"): every rank reduce-scatters to and
// all-gathers from every other rank in two steps.
#include <cstddef>
#include <vector>

#include "models/collectives/algorithms/common.h"

namespace fabricsim::coll {

using namespace detail;

namespace {

constexpr const char* kWho = "allreduce_direct";

double direct_cost(int n, double S, double al, double be, int) {
  return 2.0 * al + 2.0 * spread(n) * S * be;
}

}  // namespace

Schedule allreduce_direct(const CollParams& p) {
  const uint64_t chunk = check_params(kWho, p, false);
  const int n = p.ranks;
  Schedule sched = empty_schedule("direct", n, p.count);
  if (n == 1) return sched;
  std::vector<std::vector<Range>> blk;  // blk[c][b]: block b of channel c
  for (const Range& ch : split_range(Range{0, p.count}, p.channels))
    blk.push_back(split_range(ch, n));
  const Tags tags(kWho, p.channels, 2, chunk, blk[0][0].count);
  for (int r = 0; r < n; ++r) {
    RankBuilder rb(kWho, ops_of(sched, r));
    const std::size_t ur = static_cast<std::size_t>(r);
    for (uint64_t phase = 0; phase < 2; ++phase) {
      // Phase 0 sends block j to its owner j; phase 1 sends the owned, summed block r.
      for (int s = 1; s < n; ++s) {
        const int dst = (r + s) % n;
        for (std::size_t c = 0; c < blk.size(); ++c) {
          const Range b = blk[c][phase == 0 ? static_cast<std::size_t>(dst) : ur];
          for (uint64_t j = 0; j < num_pieces(b, chunk); ++j)
            rb.send(dst, tags(static_cast<int>(c), phase, j), piece_of(b, j, chunk), {}, -1,
                    static_cast<int32_t>(c));
        }
      }
      for (int s = 1; s < n; ++s) {
        const int src = mod_n(r - s, n);
        for (std::size_t c = 0; c < blk.size(); ++c) {
          const Range b = blk[c][phase == 0 ? ur : static_cast<std::size_t>(src)];
          for (uint64_t j = 0; j < num_pieces(b, chunk); ++j)
            rb.recv(src, tags(static_cast<int>(c), phase, j), piece_of(b, j, chunk),
                    phase == 0 ? RecvMode::kReduceSum : RecvMode::kCopy, -1,
                    static_cast<int32_t>(c));
        }
      }
    }
  }
  return sched;
}

namespace detail {

void register_direct(AlgorithmRegistry& r) {
  r.add(algo_entry(Collective::kAllReduce, "direct", 0, "2 alpha + 2(n-1)/n S beta",
                   one_level(allreduce_direct), direct_cost, checks_params(kWho)));
}

}  // namespace detail

}  // namespace fabricsim::coll
