// Halving-doubling all-reduce: partners, ranges and the fold, and a dropped dep caught by
// the result. Pure C++, no SystemC.
#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
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

TEST(HalvingDoubling, StepsPartnersAndRanges) {
  // n = 8, one channel, one chunk: per rank 3 halving + 3 doubling messages with halving
  // sizes C/2, C/4, C/8 and doubling sizes C/8, C/4, C/2, partners v^4, v^2, v^1, v^1, ...
  const uint64_t C = 8 * 16;
  const Schedule s = allreduce_halving_doubling(CollParams{8, C, 4, 1, 1ull << 30, 0});
  for (int r = 0; r < 8; ++r) {
    std::vector<std::pair<int, uint64_t>> sends;
    for (const Op& op : s.programs[at(r)].ops)
      if (op.kind == OpKind::kSend) sends.push_back({op.peer, op.count});
    const std::vector<std::pair<int, uint64_t>> want{{r ^ 4, C / 2}, {r ^ 2, C / 4},
                                                     {r ^ 1, C / 8}, {r ^ 1, C / 8},
                                                     {r ^ 2, C / 4}, {r ^ 4, C / 2}};
    EXPECT_EQ(sends, want) << "rank " << r;
  }
  // n = 6: ranks 0 and 2 fold into 1 and 3, then sit out until the result comes back.
  const Schedule f = allreduce_halving_doubling(CollParams{6, 60, 4, 1, 1ull << 30, 0});
  for (int r : {0, 2}) {
    const auto& ops = f.programs[at(r)].ops;
    ASSERT_EQ(ops.size(), 2u);
    EXPECT_EQ(ops[0].kind, OpKind::kSend);
    EXPECT_EQ(ops[0].peer, r + 1);
    EXPECT_EQ(ops[0].count, 60u);
    EXPECT_EQ(ops[1].kind, OpKind::kRecv);
    EXPECT_EQ(ops[1].mode, RecvMode::kCopy);
    EXPECT_EQ(ops[1].count, 60u);
  }
  const auto& first = f.programs[1].ops.front();
  EXPECT_EQ(first.kind, OpKind::kRecv);
  EXPECT_EQ(first.mode, RecvMode::kReduceSum);
  EXPECT_EQ(first.peer, 0);
}

// A dropped dep is caught by behaviour: halving-doubling's second halving step forwards
// what the first reduced.
TEST(Generators, DroppedDepGivesWrongResult) {
  const CollParams p{4, 4 * 5, 4, 1, 1ull << 30, 0};
  Schedule s = allreduce_halving_doubling(p);
  auto& ops = s.programs[0].ops;
  std::size_t i = 0;
  while (i < ops.size() && !(ops[i].kind == OpKind::kSend && !ops[i].deps.empty())) ++i;
  ASSERT_LT(i, ops.size());
  ops[i].deps.clear();
  ASSERT_NO_THROW(validate(s));
  const Buffers in = make_inputs(4, p.count);
  const AlgoInfo& a = algo_info("all_reduce", "halving_doubling");
  int wrong = check_result(a, p, in, run_functional(s, in).buffers) ? 0 : 1;
  for (uint64_t seed = 1; seed <= 16; ++seed)
    wrong += check_result(a, p, in, run_functional(s, in, seed).buffers) ? 0 : 1;
  EXPECT_GT(wrong, 0);
}

}  // namespace
}  // namespace fabricsim::coll
