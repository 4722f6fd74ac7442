// Double binary tree all-reduce: the trees' shape, depth and balance, and the tree's deps
// (children's sums up, the parent's copy down, the flow-control window). Pure C++, no
// SystemC.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "models/collectives/algorithms.h"
#include "models/collectives/functional.h"
#include "models/collectives/program.h"
#include "models/collectives/ring_allreduce.h"
#include "tests/unit/algorithms/oracles.h"
#include "tests/unit/coll_test_util.h"

namespace fabricsim::coll {
namespace {

using namespace algotest;
using namespace testutil;

TEST(DoubleBinaryTree, ShapeDepthAndBalance) {
  for (int n = 1; n <= 64; ++n) {
    SCOPED_TRACE("n=" + std::to_string(n));
    int depth_want = 0;
    while ((1 << depth_want) < n) ++depth_want;
    std::vector<int> inner_in(at(n), 0), children_total(at(n), 0);
    for (int t = 0; t < 2; ++t) {
      const std::vector<int> par = double_binary_tree_parents(n, t);
      ASSERT_EQ(par.size(), at(n));
      std::vector<int> children(at(n), 0);
      int roots = 0, depth = 0;
      for (int r = 0; r < n; ++r) {
        if (par[at(r)] < 0) {
          ++roots;
        } else {
          ASSERT_LT(par[at(r)], n);
          ASSERT_NE(par[at(r)], r);
          ++children[at(par[at(r)])];
        }
        int d = 0;  // walk to the root; a cycle would exceed n steps
        for (int x = r; par[at(x)] >= 0; x = par[at(x)]) ASSERT_LE(++d, n);
        depth = std::max(depth, d);
      }
      EXPECT_EQ(roots, 1);
      EXPECT_EQ(depth, depth_want);
      for (int r = 0; r < n; ++r) {
        EXPECT_LE(children[at(r)], 2) << "tree " << t << " rank " << r;
        if (children[at(r)] > 0) ++inner_in[at(r)];
        children_total[at(r)] += children[at(r)];
      }
    }
    for (int r = 0; r < n && n > 1; ++r) {
      if (n % 2 == 1 && r == 0) {
        EXPECT_EQ(inner_in[0], 2);  // one child in each tree
        EXPECT_EQ(children_total[0], 2);
      } else {
        EXPECT_EQ(inner_in[at(r)], 1) << "rank " << r;
      }
    }
  }
  // NCCL's illustrations (src/graph/trees.cc): n = 14 tree 0; n = 12 mirror; n = 13 shift.
  const std::vector<int> t14 = double_binary_tree_parents(14, 0);
  EXPECT_EQ(t14, (std::vector<int>{-1, 2, 4, 2, 8, 6, 4, 6, 0, 10, 12, 10, 8, 12}));
  const std::vector<int> m12 = double_binary_tree_parents(12, 1);
  EXPECT_EQ(m12[11], -1);
  EXPECT_EQ(m12[3], 11);
  EXPECT_EQ(m12[7], 3);
  EXPECT_EQ(m12[1], 3);
  const std::vector<int> s13 = double_binary_tree_parents(13, 1);
  EXPECT_EQ(s13, (std::vector<int>{9, -1, 3, 5, 3, 9, 7, 5, 7, 1, 11, 0, 11}));
  EXPECT_TRUE(throws_internal([] { double_binary_tree_parents(0, 0); }, "ranks must be >= 1"));
  EXPECT_TRUE(throws_internal([] { double_binary_tree_parents(4, 2); }, "tree must be 0 or 1"));
}

TEST(TreeSchedule, UpSendsWaitForChildrenAndDownSendsForParent) {
  // 3 nodes of 2 ranks: a chain of 2 in every node, the heads in a double binary tree.
  const CollParams p{6, 6 * 40 + 5, 4, 2, 4 * 7, 0};
  const Schedule s = allreduce_tree(p, 2);
  for (int ch = 0; ch < 2; ++ch)
  for (int t = 0; t < 2; ++t) {
    const std::vector<int> par = tree_parents(6, 2, ch, t);
    for (int r = 0; r < 6; ++r) {
      const auto& ops = s.programs[at(r)].ops;
      for (const Op& op : ops) {
        if (op.kind != OpKind::kSend || (op.tag >> 32) % 4 / 2 != static_cast<uint64_t>(t) ||
            (op.tag >> 32) / 4 != static_cast<uint64_t>(ch))
          continue;
        const bool up = (op.tag >> 32) % 2 == 0;
        if (up) {
          EXPECT_EQ(op.peer, par[at(r)]);
          // Exactly the reduce recvs of the same piece from this rank's children, plus
          // from piece 8 on the window dep: the down recv of piece j-8.
          std::set<int> from;
          const uint64_t piece = op.tag & 0xffffffffull;
          int window_deps = 0;
          for (uint32_t d : op.deps) {
            if (ops[d].mode == RecvMode::kCopy) {
              ++window_deps;
              EXPECT_EQ(ops[d].tag, op.tag + (1ull << 32) - 8);
              EXPECT_EQ(ops[d].peer, par[at(r)]);
              continue;
            }
            EXPECT_EQ(ops[d].mode, RecvMode::kReduceSum);
            EXPECT_EQ(ops[d].tag, op.tag);
            from.insert(ops[d].peer);
          }
          std::set<int> kids;
          for (int c = 0; c < 6; ++c)
            if (par[at(c)] == r) kids.insert(c);
          EXPECT_EQ(from, kids) << "rank " << r;
          EXPECT_EQ(window_deps, piece >= 8 ? 1 : 0) << "rank " << r;
        } else {
          EXPECT_EQ(par[at(op.peer)], r);
          for (uint32_t d : op.deps) {
            if (par[at(r)] >= 0) {
              EXPECT_EQ(op.deps.size(), 1u);
              EXPECT_EQ(ops[d].peer, par[at(r)]);
              EXPECT_EQ(ops[d].mode, RecvMode::kCopy);
            } else {
              EXPECT_EQ(ops[d].mode, RecvMode::kReduceSum);  // the root's own sum
            }
          }
        }
      }
    }
  }
}

TEST(TreeParents, ChainInEveryNodeAndDoubleBinaryTreeAcrossNodes) {
  // 4 nodes of 8 (32 ranks), channel 1, tree 0: the heads are local 2, the chains run
  // 2 <- 3 <- ... <- 1 in every node, the heads form double_binary_tree_parents(4, 0).
  const std::vector<int> par = tree_parents(32, 8, 1, 0);
  const std::vector<int> node_par = double_binary_tree_parents(4, 0);
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(par[at(k * 8 + 2)], node_par[at(k)] < 0 ? -1 : node_par[at(k)] * 8 + 2);
    for (int i = 1; i < 8; ++i) EXPECT_EQ(par[at(k * 8 + (2 + i) % 8)], k * 8 + (2 + i - 1) % 8);
  }
  // One node: a single chain from the head (2c + t) mod n.
  EXPECT_EQ(tree_parents(4, 0, 0, 1), (std::vector<int>{3, -1, 1, 2}));
  EXPECT_TRUE(throws_internal([] { tree_parents(6, 4, 0, 0); }, "does not divide"));
}

}  // namespace
}  // namespace fabricsim::coll
