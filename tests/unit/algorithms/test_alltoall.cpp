// All-to-all: pairwise lockstep against direct's dep-free messages, and the buffer layout of
// alltoall and sendrecv. Pure C++, no SystemC.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>

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

TEST(AllToAll, PairwiseLockstepAndDirectHasNoDeps) {
  const CollParams p{5, 5 * 12, 4, 1, 4 * 4, 0};  // 12-element blocks, 3 pieces each
  const Schedule pw = alltoall_pairwise(p);
  const Schedule dr = alltoall_direct(p);
  EXPECT_EQ(traffic_of(pw), traffic_of(dr));
  for (int r = 0; r < 5; ++r) {
    for (const Op& op : dr.programs[at(r)].ops) EXPECT_TRUE(op.deps.empty());
    const auto& ops = pw.programs[at(r)].ops;
    for (const Op& op : ops) {
      if (op.kind != OpKind::kSend) continue;
      const uint64_t step = (op.tag >> 32) % 5, piece = op.tag & 0xffffffffull;
      EXPECT_EQ(op.peer, (r + static_cast<int>(step)) % 5);
      if (step == 1) {
        EXPECT_TRUE(op.deps.empty());
        continue;
      }
      // The same piece of the previous step's send and recv.
      ASSERT_EQ(op.deps.size(), 2u);
      std::set<OpKind> kinds;
      for (uint32_t d : op.deps) {
        EXPECT_EQ((ops[d].tag >> 32) % 5, step - 1);
        EXPECT_EQ(ops[d].tag & 0xffffffffull, piece);
        kinds.insert(ops[d].kind);
      }
      EXPECT_EQ(kinds, (std::set<OpKind>{OpKind::kSend, OpKind::kRecv}));
    }
  }
  // Layout: 7 elements over 3 ranks: blocks 3, 2, 2; slots of 3; buffer 7 + 9.
  EXPECT_EQ(buffer_elems(Collective::kAllToAll, 3, 7), 16u);
  EXPECT_EQ(buffer_elems(Collective::kAllToAll, 4, 40), 80u);
  EXPECT_EQ(buffer_elems(Collective::kSendRecv, 4, 40), 80u);
  EXPECT_EQ(buffer_elems(Collective::kAllReduce, 4, 40), 40u);
}

}  // namespace
}  // namespace fabricsim::coll
