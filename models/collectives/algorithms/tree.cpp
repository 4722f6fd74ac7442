// Double binary tree all-reduce (algorithms.h, "tree"): NCCL's two complementary binary
// trees, each carrying half of every channel, reduce up and broadcast down per piece.
#include <array>
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

// Up and down the depth-D trees; NCCL's 1/2 tree bandwidth ratio (algorithms.h).
double tree_cost(int n, double S, double al, double be, int) {
  const int depth = ceil_log2(n);
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

Schedule allreduce_tree(const CollParams& p) {
  const uint64_t chunk = check_params(kWho, p, false);
  const int n = p.ranks;
  Schedule sched = empty_schedule("tree", n, p.count);
  if (n == 1) return sched;
  // half[c][t]: the part of channel c's range that tree t carries.
  std::vector<std::vector<Range>> half;
  for (const Range& ch : split_range(Range{0, p.count}, p.channels))
    half.push_back(split_range(ch, 2));
  const Tags tags(kWho, p.channels, 4, chunk, half[0][0].count);
  const uint64_t max_pieces = num_pieces(half[0][0], chunk);  // the largest part
  std::vector<int> parent[2];
  std::vector<std::vector<int>> children[2];
  for (int t = 0; t < 2; ++t) {
    parent[t] = double_binary_tree_parents(n, t);
    children[t].resize(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r)
      if (parent[t][static_cast<std::size_t>(r)] >= 0)
        children[t][static_cast<std::size_t>(parent[t][static_cast<std::size_t>(r)])].push_back(r);
  }
  for (int r = 0; r < n; ++r) {
    RankBuilder rb(kWho, ops_of(sched, r));
    const std::size_t ur = static_cast<std::size_t>(r);
    // down_recv[c][t][j]: op index of the down recv of piece j (window deps).
    std::vector<std::array<std::vector<uint32_t>, 2>> down_recv(half.size());
    for (uint64_t j = 0; j < max_pieces; ++j) {
      for (std::size_t c = 0; c < half.size(); ++c) {
        for (int t = 0; t < 2; ++t) {
          const Range part = half[c][static_cast<std::size_t>(t)];
          if (j >= num_pieces(part, chunk)) continue;
          const Range piece = piece_of(part, j, chunk);
          const uint64_t up = tags(static_cast<int>(c), 2u * static_cast<uint64_t>(t), j);
          const uint64_t down = tags(static_cast<int>(c), 2u * static_cast<uint64_t>(t) + 1, j);
          const int par = parent[t][ur];
          // Per (channel, tree) one thread block reduces up and another broadcasts down
          // (NCCL's split tree kernel).
          const int32_t up_stream = static_cast<int32_t>(4 * c + 2 * static_cast<std::size_t>(t));
          const int32_t down_stream = up_stream + 1;
          auto& downs = down_recv[c][static_cast<std::size_t>(t)];
          // Reduce up: sum the children's partial sums, pass the result to the parent; at
          // most kTreeWindow pieces ahead of the results coming back down.
          for (int child : children[t][ur])
            rb.recv(child, up, piece, RecvMode::kReduceSum, up_stream);
          if (par >= 0) {
            std::vector<uint32_t> window;
            if (j >= kTreeWindow) window.push_back(downs[j - kTreeWindow]);
            rb.send(par, up, piece, window, up_stream);
          }
          // Broadcast down: the root starts from its sum, the others from the parent's copy.
          if (par >= 0) downs.push_back(rb.recv(par, down, piece, RecvMode::kCopy, down_stream));
          for (int child : children[t][ur]) rb.send(child, down, piece, {}, down_stream);
        }
      }
    }
  }
  return sched;
}

namespace detail {

void register_tree(AlgorithmRegistry& r) {
  r.add(algo_entry(Collective::kAllReduce, "tree", kPipelined, "2 ceil(log2 n) alpha + 2 S beta",
                   one_level(allreduce_tree), tree_cost, checks_params(kWho)));
}

}  // namespace detail

}  // namespace fabricsim::coll
