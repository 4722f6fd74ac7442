// NCCL's tree all-reduce (algorithms.h, "tree"): a chain inside every node and a double
// binary tree across the nodes (two complementary trees, each carrying half of every
// channel), reduce up and broadcast down per piece.
#include <algorithm>
#include <array>
#include <utility>
#include <cstddef>
#include <string>
#include <vector>

#include "models/collectives/algorithms/common.h"
#include "models/core/errors.h"

namespace fabricsim::coll {

using namespace detail;

namespace {

constexpr const char* kWho = "allreduce_tree";

// Tree flow-control window in pieces (algorithms.h, tree).
constexpr uint64_t kTreeWindow = 8;

// NCCL's binary tree (ncclGetBtree): parent of rank r, -1 for the root 0.
int btree_parent(int n, int r) {
  if (r == 0) return -1;
  const int bit = r & -r;  // lowest set bit
  const int up = (r ^ bit) | (bit << 1);
  return up < n ? up : (r ^ bit);
}

// NCCL's tree (algorithms.h, tree): a chain through the L ranks of every node and, across
// the N nodes, a binary tree of the chains' heads: 2 (L - 1 + ceil(log2 N)) dependent
// steps up and down; a rank sends and receives 2S over both trees (NCCL's 1/2 tree
// bandwidth ratio).
double tree_cost(int n, double S, double al, double be, int domain_size) {
  const int L = cost_domain_size(n, domain_size);
  const int depth = (L - 1) + ceil_log2(n / L);
  return 2.0 * depth * al + 2.0 * S * be;
}

}  // namespace

std::vector<int> double_binary_tree_parents(int ranks, int tree) {
  if (ranks < 1)
    throw InternalError("double_binary_tree_parents: ranks must be >= 1 (got " +
                        std::to_string(ranks) + ")");
  if (tree != 0 && tree != 1)
    throw InternalError("double_binary_tree_parents: tree must be 0 or 1 (got " +
                        std::to_string(tree) + ")");
  const int n = ranks;
  std::vector<int> parent(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    int q;
    if (tree == 0) {
      q = btree_parent(n, r);
    } else if (n % 2 == 1) {  // shift: rank r plays tree-0 rank r-1
      const int u = btree_parent(n, mod_n(r - 1, n));
      q = u < 0 ? -1 : (u + 1) % n;
    } else {  // mirror: rank r plays tree-0 rank n-1-r
      const int u = btree_parent(n, n - 1 - r);
      q = u < 0 ? -1 : n - 1 - u;
    }
    parent[static_cast<std::size_t>(r)] = q;
  }
  return parent;
}

int tree_head(int domain_size, int channel, int tree) {
  return mod_n(2 * channel + tree, domain_size);
}

std::vector<int> tree_parents(int ranks, int domain_size, int channel, int tree,
                              const std::vector<std::vector<int>>* rings) {
  if (domain_size < 0 || (domain_size > 0 && (ranks < 1 || ranks % domain_size != 0)))
    throw InternalError("tree_parents: domain_size " + std::to_string(domain_size) +
                        " does not divide ranks " + std::to_string(ranks));
  const int L = domain_size == 0 ? ranks : domain_size, N = ranks / L;
  if (N == 1 && rings && !rings->empty()) {
    // One node with the topology's rings: the chain follows the ring of this (channel,
    // tree), from its element at the head index, so the chains use the rings' links.
    const int k = 2 * channel + tree;
    const std::vector<int>& ring = (*rings)[static_cast<std::size_t>(k) % rings->size()];
    if (static_cast<int>(ring.size()) != ranks)
      throw InternalError("tree_parents: a ring of " + std::to_string(ring.size()) + " ranks");
    const int h = tree_head(ranks, channel, tree);
    std::vector<int> parent(static_cast<std::size_t>(ranks));
    for (int i = 0; i < ranks; ++i)
      parent[static_cast<std::size_t>(ring[static_cast<std::size_t>(mod_n(h + i, ranks))])] =
          i == 0 ? -1 : ring[static_cast<std::size_t>(mod_n(h + i - 1, ranks))];
    return parent;
  }
  const std::vector<int> node_parent = double_binary_tree_parents(N, tree);
  const int h = tree_head(L, channel, tree);
  std::vector<int> parent(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    const int k = r / L, pos = mod_n(r % L - h, L);
    const int up = node_parent[static_cast<std::size_t>(k)];
    parent[static_cast<std::size_t>(r)] =
        pos > 0 ? k * L + mod_n(h + pos - 1, L) : (up < 0 ? -1 : up * L + h);
  }
  return parent;
}

// NCCL's Tree/Simple piece (CollParams::tree_nccl_chunks): halve the piece of `bytes`
// while a stream of `stream_bytes` has fewer than 8 D, 4 D, D pieces and the piece is above
// 128, 64, 32 KiB.
uint64_t nccl_tree_chunk_bytes(uint64_t bytes, uint64_t stream_bytes, int depth) {
  const uint64_t d = static_cast<uint64_t>(depth);
  const std::array<std::pair<uint64_t, uint64_t>, 3> rules = {
      {{8 * d, 128 * 1024}, {4 * d, 64 * 1024}, {d, 32 * 1024}}};
  for (const auto& [pieces, floor] : rules)
    while (stream_bytes / bytes < pieces && bytes > floor) bytes /= 2;
  return bytes;
}

Schedule allreduce_tree(const CollParams& p, int domain_size) {
  uint64_t chunk = check_params(kWho, p, false);
  const int n = p.ranks;
  Schedule sched = empty_schedule("tree", n, p.count);
  if (n == 1) return sched;
  // half[c][t]: the part of channel c's range that tree t carries.
  std::vector<std::vector<Range>> half;
  for (const Range& ch : split_range(Range{0, p.count}, p.channels))
    half.push_back(split_range(ch, 2));
  if (p.tree_nccl_chunks) {
    const int L = domain_size > 0 && domain_size < n && n % domain_size == 0 ? domain_size : n;
    const int depth = (L - 1) + ceil_log2(n / L);
    const uint64_t bytes = nccl_tree_chunk_bytes(chunk * p.elem_bytes,
                                                 half[0][0].count * p.elem_bytes, depth);
    chunk = std::max<uint64_t>(1, bytes / p.elem_bytes);
  }
  const Tags tags(kWho, p.channels, 4, chunk, half[0][0].count);
  const uint64_t max_pieces = num_pieces(half[0][0], chunk);  // the largest part
  // parent[c][t][r] and children[c][t][r] of every (channel, tree).
  const std::size_t nch = half.size();
  std::vector<std::array<std::vector<int>, 2>> parent(nch);
  std::vector<std::array<std::vector<std::vector<int>>, 2>> children(nch);
  for (std::size_t c = 0; c < nch; ++c)
    for (int t = 0; t < 2; ++t) {
      auto& par = parent[c][static_cast<std::size_t>(t)];
      par = tree_parents(n, domain_size, static_cast<int>(c), t, p.rings);
      auto& kids = children[c][static_cast<std::size_t>(t)];
      kids.resize(static_cast<std::size_t>(n));
      for (int r = 0; r < n; ++r)
        if (par[static_cast<std::size_t>(r)] >= 0)
          kids[static_cast<std::size_t>(par[static_cast<std::size_t>(r)])].push_back(r);
    }
  for (int r = 0; r < n; ++r) {
    RankBuilder rb(kWho, ops_of(sched, r));
    const std::size_t ur = static_cast<std::size_t>(r);
    // down_recv[c][t][j]: op index of the down recv of piece j (window deps).
    std::vector<std::array<std::vector<uint32_t>, 2>> down_recv(nch);
    for (uint64_t j = 0; j < max_pieces; ++j) {
      for (std::size_t c = 0; c < nch; ++c) {
        for (int t = 0; t < 2; ++t) {
          const std::size_t ut = static_cast<std::size_t>(t);
          const Range part = half[c][ut];
          if (j >= num_pieces(part, chunk)) continue;
          const Range piece = piece_of(part, j, chunk);
          const uint64_t up = tags(static_cast<int>(c), 2u * static_cast<uint64_t>(t), j);
          const uint64_t down = tags(static_cast<int>(c), 2u * static_cast<uint64_t>(t) + 1, j);
          const int par = parent[c][ut][ur];
          const std::vector<int>& kids = children[c][ut][ur];
          // Per (channel, tree) one thread block reduces up and another broadcasts down
          // (NCCL's split tree kernel).
          const int32_t up_stream = static_cast<int32_t>(4 * c + 2 * ut);
          const int32_t down_stream = up_stream + 1;
          auto& downs = down_recv[c][ut];
          // Reduce up: sum the children's partial sums, pass the result to the parent; at
          // most kTreeWindow pieces ahead of the results coming back down.
          for (int child : kids) rb.recv(child, up, piece, RecvMode::kReduceSum, up_stream);
          if (par >= 0) {
            std::vector<uint32_t> window;
            if (j >= kTreeWindow) window.push_back(downs[j - kTreeWindow]);
            rb.send(par, up, piece, window, up_stream);
          }
          // Broadcast down: the root starts from its sum, the others from the parent's copy.
          if (par >= 0) downs.push_back(rb.recv(par, down, piece, RecvMode::kCopy, down_stream));
          for (int child : kids) rb.send(child, down, piece, {}, down_stream);
        }
      }
    }
  }
  return sched;
}

namespace detail {

void register_tree(AlgorithmRegistry& r) {
  r.add(algo_entry(Collective::kAllReduce, "tree", kPipelined | kNccl,
                   "2 (L - 1 + ceil(log2 N)) alpha + 2 S beta (L ranks per node, N nodes)",
                   allreduce_tree, tree_cost, [](const CollParams& p, int domain_size) {
                     check_params(kWho, p, false);
                     (void)cost_domain_size(p.ranks, domain_size);
                   }));
}

}  // namespace detail

}  // namespace fabricsim::coll
