// Torus collectives (algorithms.h, "torus"): on ranks that form a torus (CollParams::torus,
// x fastest), bidirectional rings per dimension. Every channel's range is halved: the
// first half rides rings in the + direction of each dimension, the second in the -
// direction, so both directions of every link of the dimension carry data at once.
// all_reduce: ring reduce-scatter along x over the channel half (rank at x owns block x),
// then along y over that block, then z; then ring all-gathers in reverse order (z, y, x).
// A dimension of size 1 is skipped; without a torus (or with a product other than the
// ranks) the ranks form one ring. Per rank and direction on the wire in one dimension of
// size k with D elements: (k-1)/k x D/2; all-reduce time on an uncontended torus with
// links of B per direction: sum over dimensions of 2 (k-1)/k x D_d / (2 B), D_x = S,
// D_y = S / n_x, D_z = S / (n_x n_y). Layout and tags: one step slot per ring step
// (2 sum (k-1) for all-reduce), the + half's pieces first (j), then the - half's.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "models/collectives/algorithms/common.h"
#include "models/core/errors.h"

namespace fabricsim::coll {

using namespace detail;

namespace {

constexpr const char* kWho = "torus";

std::vector<int> dims_of(const CollParams& p) {
  int prod = 1;
  for (int d : p.torus) prod *= d;
  if (p.torus.empty() || prod != p.ranks) return {p.ranks};
  return p.torus;
}

Schedule torus_schedule(const CollParams& p) {
  const uint64_t chunk = check_params(kWho, p, false);
  const int n = p.ranks;
  const std::vector<int> dims = dims_of(p);
  const uint64_t buffer = p.count;
  Schedule sched = empty_schedule("torus", n, buffer);
  if (n == 1) return sched;
  uint64_t steps = 0;
  for (int k : dims) steps += uint64_t(k - 1);
  const uint64_t slots = std::max<uint64_t>(1, 2 * steps);
  std::vector<Range> chans = split_range(Range{0, buffer}, p.channels);
  uint64_t largest = 0;
  for (const Range& c : chans) largest = std::max(largest, c.count);
  const Tags tags(kWho, p.channels, slots, chunk, largest);
  for (int r = 0; r < n; ++r) {
    RankBuilder rb(kWho, ops_of(sched, r));
    int coord[8] = {}, stride[8] = {};
    for (size_t d = 0, rest = size_t(r), s = 1; d < dims.size(); ++d) {
      coord[d] = int(rest % size_t(dims[d]));
      rest /= size_t(dims[d]);
      stride[d] = int(s);
      s *= size_t(dims[d]);
    }
    auto neighbour = [&](size_t d, int dir) {
      const int c = mod_n(coord[d] + dir, dims[d]);
      return r + (c - coord[d]) * stride[d];
    };
    // cur[c][h]: the range channel c's half h works on at this stage; owned blocks nest.
    std::vector<std::array<Range, 2>> cur(chans.size());
    for (size_t c = 0; c < chans.size(); ++c) {
      const std::vector<Range> halves = split_range(chans[c], 2);
      cur[c] = {halves[0], halves[1]};
    }
    uint64_t slot = 0;
    // One ring step in dimension d: half 0 sends give(0) to +1 and receives take(0) from
    // -1; half 1 mirrored. Pieces of half 1 follow those of half 0 in the tag's index.
    // `stage`: the ranges the step's blocks are cut from; half 1's piece indices start
    // after the pieces of half 0's whole stage range (the same on every rank of the ring:
    // it depends only on the coordinates of the dimensions already done).
    // Stages run one after the other: the first step of a dimension's stage waits for
    // every op of the stage before it when that stage was another dimension's (the
    // phase-by-phase algorithm whose time is the sum over stages; docs/optical.md,
    // "Torus collectives"). `done` collects the ops of the current stage, `barrier` those
    // of the one before.
    std::vector<uint32_t> done, barrier;
    auto step = [&](size_t d, RecvMode mode, const std::vector<std::array<Range, 2>>& stage,
                    auto give, auto take) {
      const int to[2] = {neighbour(d, +1), neighbour(d, -1)};
      // Pieces of the two halves alternate in program order, so that a DMA serving
      // messages oldest first feeds both directions at once.
      for (size_t c = 0; c < chans.size(); ++c) {
        const uint64_t j0[2] = {0, num_pieces(stage[c][0], chunk)};
        const Range g[2] = {give(c, 0), give(c, 1)};
        const uint64_t np = std::max(num_pieces(g[0], chunk), num_pieces(g[1], chunk));
        for (uint64_t j = 0; j < np; ++j)
          for (int h = 0; h < 2; ++h)
            if (j < num_pieces(g[h], chunk))
              done.push_back(rb.send(to[h], tags(int(c), slot, j0[h] + j),
                                     piece_of(g[h], j, chunk), barrier, -1, int32_t(c)));
      }
      for (size_t c = 0; c < chans.size(); ++c) {
        const uint64_t j0[2] = {0, num_pieces(stage[c][0], chunk)};
        const Range t[2] = {take(c, 0), take(c, 1)};
        const uint64_t np = std::max(num_pieces(t[0], chunk), num_pieces(t[1], chunk));
        for (uint64_t j = 0; j < np; ++j)
          for (int h = 0; h < 2; ++h)
            if (j < num_pieces(t[h], chunk))
              done.push_back(rb.recv(to[1 - h], tags(int(c), slot, j0[h] + j),
                                     piece_of(t[h], j, chunk), mode, -1, int32_t(c)));
      }
      ++slot;
      barrier.clear();  // only the stage's first step waits
    };
    // A new stage in another dimension than the last: its first step waits for all of it.
    size_t last_dim = SIZE_MAX;
    auto begin_stage = [&](size_t d) {
      if (last_dim != SIZE_MAX && d != last_dim) {
        barrier.swap(done);
        done.clear();
      }
      last_dim = d;
    };
    // Block index of step s for half h (0: + ring, 1: - ring) at coordinate l of size k.
    auto rs_give = [](int l, int s, int k, int h) { return h == 0 ? mod_n(l - 1 - s, k) : mod_n(l + 1 + s, k); };
    auto rs_take = [](int l, int s, int k, int h) { return h == 0 ? mod_n(l - 2 - s, k) : mod_n(l + 2 + s, k); };
    auto ag_give = [](int l, int s, int k, int h) { return h == 0 ? mod_n(l - s, k) : mod_n(l + s, k); };
    auto ag_take = [](int l, int s, int k, int h) { return h == 0 ? mod_n(l - 1 - s, k) : mod_n(l + 1 + s, k); };
    // stack[level][c][h]: the range at each reduce-scatter stage (level 0 = the halves).
    std::vector<std::vector<std::array<Range, 2>>> stack{cur};
    std::vector<size_t> active;
    for (size_t d = 0; d < dims.size(); ++d)
      if (dims[d] > 1) active.push_back(d);
    for (size_t d : active) {
      const int k = dims[d], l = coord[d];
      const auto stage = cur;
      auto block = [&](size_t c, int h, int b) { return split_range(stage[c][size_t(h)], k)[size_t(b)]; };
      begin_stage(d);
      for (int s = 0; s + 1 < k; ++s)
        step(d, RecvMode::kReduceSum, stage,
             [&](size_t c, int h) { return block(c, h, rs_give(l, s, k, h)); },
             [&](size_t c, int h) { return block(c, h, rs_take(l, s, k, h)); });
      for (size_t c = 0; c < chans.size(); ++c)
        for (int h = 0; h < 2; ++h) cur[c][size_t(h)] = block(c, h, l);
      stack.push_back(cur);
    }
    for (size_t a = active.size(); a-- > 0;) {
      const size_t d = active[a];
      const int k = dims[d], l = coord[d];
      const auto& stage = stack[a];  // the ranges this stage gathers into
      auto block = [&](size_t c, int h, int b) { return split_range(stage[c][size_t(h)], k)[size_t(b)]; };
      begin_stage(d);
      for (int s = 0; s + 1 < k; ++s)
        step(d, RecvMode::kCopy, stage,
             [&](size_t c, int h) { return block(c, h, ag_give(l, s, k, h)); },
             [&](size_t c, int h) { return block(c, h, ag_take(l, s, k, h)); });
    }
  }
  return sched;
}

double torus_cost(int n, double S, double al, double be, int) {
  const double dn = static_cast<double>(n);
  return 2.0 * (dn - 1.0) * al + 2.0 * (dn - 1.0) / dn * S * be;
}

}  // namespace

Schedule allreduce_torus(const CollParams& p) { return torus_schedule(p); }

namespace detail {

void register_torus(AlgorithmRegistry& r) {
  r.add(algo_entry(Collective::kAllReduce, "torus", kPipelined | kTorus,
                   "2(n-1) alpha + 2(n-1)/n S beta (one ring's bound; on a torus each "
                   "dimension's two directions carry half each)",
                   one_level(allreduce_torus), torus_cost, checks_params(kWho)));
}

}  // namespace detail

}  // namespace fabricsim::coll
