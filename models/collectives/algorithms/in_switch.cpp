// In-switch (NVLS) algorithms (algorithms.h): all_reduce, reduce_scatter and all_gather
// nvls, whose reductions and multicasts run in switches linked to every rank, and
// all_reduce hierarchical_nvls, the hierarchical all-reduce with its domain phases done by
// each domain's switches.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "models/collectives/algorithms/common.h"

namespace fabricsim::coll {

using namespace detail;

namespace {

constexpr const char* kHierarchicalNvls = "allreduce_hierarchical_nvls";
constexpr const char* kAllReduceNvls = "allreduce_nvls";
constexpr const char* kReduceScatterNvls = "reduce_scatter_nvls";
constexpr const char* kAllGatherNvls = "all_gather_nvls";

// Reduce round trip, then multicast (allreduce_nvls).
double allreduce_nvls_cost(int n, double S, double al, double be, int) {
  const double dn = static_cast<double>(n);
  return 2.0 * al + (dn + 1.0) / dn * S * be;
}
double half_nvls_cost(int, double S, double al, double be, int) { return al + S * be; }
double hierarchical_nvls_cost(int n, double S, double al, double be, int domain_size) {
  const double dn = static_cast<double>(n);
  const double L = cost_domain_size(n, domain_size), N = dn / L;
  return 2.0 * N * al + ((L + 1.0) / L + 2.0 * (N - 1.0) / (N * L)) * S * be;
}

constexpr uint64_t kNvlsSlots = 2;  // tag step field: 0 = reduce, 1 = store
// all_gather stores in flight per channel and rank: NCCL_STEPS, the slots of a connection
// (one 512 KiB Simple step per piece at the shipped chunk size).
constexpr uint64_t kNvlsStoreSlots = 8;

// Per-rank pieces of a block-per-rank layout: pieces[c] = the pieces of channel c of
// `block` (channel-major: channel c's range is split into n blocks, or block-major: the
// block is split into channels).
struct NvlsLayout {
  std::vector<std::vector<std::vector<Range>>> pieces;  // [rank][channel] -> pieces
};

NvlsLayout nvls_layout(const CollParams& p, uint64_t chunk, bool block_major) {
  NvlsLayout l;
  l.pieces.assign(static_cast<std::size_t>(p.ranks),
                  std::vector<std::vector<Range>>(static_cast<std::size_t>(p.channels)));
  auto cut = [&](Range r, int rank, int c) {
    auto& v = l.pieces[static_cast<std::size_t>(rank)][static_cast<std::size_t>(c)];
    for (uint64_t j = 0; j < num_pieces(r, chunk); ++j) v.push_back(piece_of(r, j, chunk));
  };
  if (block_major) {
    const std::vector<Range> blocks = split_range(Range{0, p.count}, p.ranks);
    for (int q = 0; q < p.ranks; ++q) {
      const std::vector<Range> ch = split_range(blocks[static_cast<std::size_t>(q)], p.channels);
      for (int c = 0; c < p.channels; ++c) cut(ch[static_cast<std::size_t>(c)], q, c);
    }
  } else {
    const std::vector<Range> ch = split_range(Range{0, p.count}, p.channels);
    for (int c = 0; c < p.channels; ++c) {
      const std::vector<Range> blocks = split_range(ch[static_cast<std::size_t>(c)], p.ranks);
      for (int q = 0; q < p.ranks; ++q) cut(blocks[static_cast<std::size_t>(q)], q, c);
    }
  }
  return l;
}

// reduce: rank r reduces its own pieces (each kNvlsReduce depends on the one
// kNvlsWindow pieces earlier in its channel: a bounded number of reductions in flight per
// channel, as NCCL's per-channel slots); store: it multicasts them (after the reduction
// of the piece when `reduce` is also set); every rank receives every rank's stores.
Schedule nvls_schedule(const char* who, const CollParams& p, bool block_major, bool reduce,
                       bool store) {
  const uint64_t chunk = check_params(who, p, false);
  Schedule sched = empty_schedule("nvls", p.ranks, p.count);
  if (p.ranks == 1 || p.count == 0) return sched;
  const NvlsLayout l = nvls_layout(p, chunk, block_major);
  const Tags tag(who, p.channels, kNvlsSlots, chunk, p.count);
  for (int r = 0; r < p.ranks; ++r) {
    std::vector<Op>& ops = sched.programs[static_cast<std::size_t>(r)].ops;
    // recv_of[c][j]: this rank's kRecv ops of piece j of channel c, one per owner.
    std::vector<std::vector<std::vector<uint32_t>>> recv_of(
        static_cast<std::size_t>(p.channels));
    if (store) {  // recvs first, no deps: posted up front; from r, r+1, .. (staggered)
      for (int k = 0; k < p.ranks; ++k) {
        const int q = mod_n(r + k, p.ranks);
        for (int c = 0; c < p.channels; ++c) {
          const auto& pcs = l.pieces[static_cast<std::size_t>(q)][static_cast<std::size_t>(c)];
          auto& rc = recv_of[static_cast<std::size_t>(c)];
          if (rc.size() < pcs.size()) rc.resize(pcs.size());
          for (uint64_t j = 0; j < pcs.size(); ++j) {
            rc[j].push_back(static_cast<uint32_t>(ops.size()));
            Op op;
            op.kind = OpKind::kRecv;
            op.peer = q;
            op.tag = tag(c, 1, j);
            op.offset = pcs[j].offset;
            op.count = pcs[j].count;
            op.mode = RecvMode::kCopy;
            ops.push_back(op);
          }
        }
      }
    }
    const auto& mine = l.pieces[static_cast<std::size_t>(r)];
    std::vector<std::vector<uint32_t>> reduce_op(mine.size());
    uint64_t most = 0;
    for (const auto& v : mine) most = std::max<uint64_t>(most, v.size());
    for (uint64_t j = 0; j < most; ++j) {  // piece-major over channels
      for (int c = 0; c < p.channels; ++c) {
        const auto& pcs = mine[static_cast<std::size_t>(c)];
        if (j >= pcs.size()) continue;
        int64_t reduced = -1;  // this piece's kNvlsReduce, if any
        if (reduce) {
          Op op;
          op.kind = OpKind::kNvlsReduce;
          op.tag = tag(c, 0, j);
          op.offset = pcs[j].offset;
          op.count = pcs[j].count;
          if (j >= kNvlsWindow)
            op.deps.push_back(reduce_op[static_cast<std::size_t>(c)][j - kNvlsWindow]);
          reduce_op[static_cast<std::size_t>(c)].push_back(static_cast<uint32_t>(ops.size()));
          reduced = static_cast<int64_t>(ops.size());
          ops.push_back(op);
        }
        if (store) {
          Op op;
          op.kind = OpKind::kNvlsStore;
          op.tag = tag(c, 1, j);
          op.offset = pcs[j].offset;
          op.count = pcs[j].count;
          if (reduced >= 0) op.deps.push_back(static_cast<uint32_t>(reduced));
          // all_gather: the store of piece j goes once every rank's piece j -
          // kNvlsStoreSlots of this channel has arrived here (the multicast buffer's slots
          // are free again): without it every rank multicasts its whole block at once and
          // the switches' egress queues hold (n-1)/n of it.
          if (!reduce && j >= kNvlsStoreSlots) {
            const auto& prev = recv_of[static_cast<std::size_t>(c)];
            if (j - kNvlsStoreSlots < prev.size())
              for (uint32_t d : prev[j - kNvlsStoreSlots]) op.deps.push_back(d);
          }
          ops.push_back(op);
        }
      }
    }
  }
  return sched;
}

}  // namespace

Schedule allreduce_nvls(const CollParams& p) {
  return nvls_schedule(kAllReduceNvls, p, /*block_major=*/false, true, true);
}
Schedule reduce_scatter_nvls(const CollParams& p) {
  return nvls_schedule(kReduceScatterNvls, p, /*block_major=*/true, true, false);
}
Schedule all_gather_nvls(const CollParams& p) {
  return nvls_schedule(kAllGatherNvls, p, /*block_major=*/true, false, true);
}

Schedule allreduce_hierarchical_nvls(const CollParams& p, int domain_size) {
  const char* who = kHierarchicalNvls;
  const uint64_t chunk = check_params(who, p, false);
  const int n = p.ranks;
  const TwoLevelLayout lay = two_level_layout(who, p, domain_size);
  const int L = lay.L, N = lay.N;
  const auto& blk = lay.blk;
  const auto& sub = lay.sub;
  Schedule sched = empty_schedule("hierarchical_nvls", n, p.count);
  sched.nvls_group = L;
  if (n == 1) return sched;
  // Steps per slice: 0 = NVLS reduce, 1 .. 2(N-1) = ring across domains, 2N-1 = store.
  const uint64_t S = 2 * static_cast<uint64_t>(N);
  const std::size_t M = static_cast<std::size_t>(p.slices);
  const Tags tags(who, p.channels, S * M, chunk, blk[0][0][0].count);
  auto ub = [](int x) { return static_cast<std::size_t>(x); };
  for (int r = 0; r < n; ++r) {
    RankBuilder rb(who, ops_of(sched, r));
    const int k = r / L, l = r % L;
    const int next_dom = ((k + 1) % N) * L + l, prev_dom = mod_n(k - 1, N) * L + l;
    // reduces[c]: this rank's kNvlsReduce ops in channel c so far (all slices).
    std::vector<std::vector<uint32_t>> reduces(blk.size());
    for (std::size_t i = 0; i < M; ++i) {
      const uint64_t base = S * i;
      // Phase 1: reduce own block l over the domain, sub-block by sub-block in the order
      // the ring across domains sends them (k, k-1, ..), each cut into pieces; each
      // reduction waits for the one kNvlsWindow earlier in its channel.
      for (std::size_t c = 0; c < blk.size(); ++c) {
        uint64_t j = 0;
        for (int t = 0; t < N; ++t) {
          const Range g = sub[c][i][ub(l)][ub(mod_n(k - t, N))];
          for (uint64_t q = 0; q < num_pieces(g, chunk); ++q, ++j) {
            auto& red = reduces[c];
            std::vector<uint32_t> deps;
            if (red.size() >= kNvlsWindow) deps.push_back(red[red.size() - kNvlsWindow]);
            red.push_back(rb.nvls_reduce(tags(static_cast<int>(c), base, j),
                                         piece_of(g, q, chunk), std::move(deps)));
          }
        }
      }
      // Phase 2: ring all-reduce of block l across the domains (one rail).
      for (int t = 0; t < 2 * (N - 1); ++t) {
        const uint64_t st = base + 1 + static_cast<uint64_t>(t);
        const RecvMode mode = t <= N - 2 ? RecvMode::kReduceSum : RecvMode::kCopy;
        for (std::size_t c = 0; c < blk.size(); ++c) {
          const Range g = sub[c][i][ub(l)][ub(mod_n(k - t, N))];
          for (uint64_t j = 0; j < num_pieces(g, chunk); ++j)
            rb.send(next_dom, tags(static_cast<int>(c), st, j), piece_of(g, j, chunk), {}, -1,
                    static_cast<int32_t>(c));
        }
        for (std::size_t c = 0; c < blk.size(); ++c) {
          const Range g = sub[c][i][ub(l)][ub(mod_n(k - 1 - t, N))];
          for (uint64_t j = 0; j < num_pieces(g, chunk); ++j)
            rb.recv(prev_dom, tags(static_cast<int>(c), st, j), piece_of(g, j, chunk), mode, -1,
                    static_cast<int32_t>(c));
        }
      }
      // Phase 3: multicast block l to the domain, sub-block by sub-block in the order the
      // ring finishes them (k+1, k, k-1, ..), each cut into pieces; receive every block of
      // the domain (own included) from its owner, in the same order.
      const uint64_t st = base + S - 1;
      auto gather = [&](int owner, auto&& each) {
        for (std::size_t c = 0; c < blk.size(); ++c) {
          uint64_t j = 0;
          for (int t = 0; t < N; ++t) {
            const Range g = sub[c][i][ub(owner)][ub(mod_n(k + 1 - t, N))];
            for (uint64_t q = 0; q < num_pieces(g, chunk); ++q, ++j)
              each(tags(static_cast<int>(c), st, j), piece_of(g, q, chunk));
          }
        }
      };
      gather(l, [&](uint64_t tag, Range g) { rb.nvls_store(tag, g); });
      for (int d = 0; d < L; ++d) {  // from l, l+1, .. (staggered)
        const int q = (l + d) % L;
        gather(q, [&](uint64_t tag, Range g) { rb.recv(k * L + q, tag, g, RecvMode::kCopy); });
      }
    }
  }
  return sched;
}

namespace detail {

void register_in_switch(AlgorithmRegistry& r) {
  // hierarchical_nvls before nvls: the all_reduce order of algorithms_for.
  r.add(algo_entry(
      Collective::kAllReduce, "hierarchical_nvls", kPipelined | kInSwitch | kLevels | kNccl,
      "L = domain size, N = n/L: 2N alpha + ((L+1)/L + 2(N-1)/(N L)) S beta (NVLS "
      "switches in every domain)",
      allreduce_hierarchical_nvls, hierarchical_nvls_cost,
      [](const CollParams& p, int domain_size) {
        check_params(kHierarchicalNvls, p, false);
        check_two_level(kHierarchicalNvls, p, domain_size);
      }));
  r.add(algo_entry(Collective::kAllReduce, "nvls", kPipelined | kInSwitch | kNccl,
                   "2 alpha + (n+1)/n S beta (in-switch reduction; NVLS switches only)",
                   one_level(allreduce_nvls), allreduce_nvls_cost, checks_params(kAllReduceNvls)));
  r.add(algo_entry(Collective::kReduceScatter, "nvls", kPipelined | kInSwitch | kNccl,
                   "alpha + S beta (NVLS switches only)", one_level(reduce_scatter_nvls),
                   half_nvls_cost, checks_params(kReduceScatterNvls)));
  r.add(algo_entry(Collective::kAllGather, "nvls", kPipelined | kInSwitch | kNccl,
                   "alpha + S beta (NVLS switches only)", one_level(all_gather_nvls),
                   half_nvls_cost, checks_params(kAllGatherNvls)));
}

}  // namespace detail

}  // namespace fabricsim::coll
