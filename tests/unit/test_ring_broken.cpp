// Broken ring schedules are caught: a dropped or forward dependency, a wrong tag, a cyclic
// wait, found by validate() or by the functional executor (wrong sums in some valid
// execution order, or a deadlock). Pure C++, no SystemC.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/collectives/functional.h"
#include "models/collectives/program.h"
#include "models/collectives/ring_allreduce.h"
#include "models/core/errors.h"
#include "tests/unit/coll_test_util.h"

namespace fabricsim::coll {
namespace {

using namespace testutil;

// ---------------------------------------------------------------------------------------
// Broken schedules.

Schedule small_ring() { return ring_allreduce(RingParams{4, 4 * 6 + 1, 4, 1, 4 * 2}); }

// Index of the first op of `rank` matching `pred`.
std::size_t find_op(const Schedule& s, int rank, const std::function<bool(const Op&)>& pred) {
  const auto& ops = s.programs[static_cast<std::size_t>(rank)].ops;
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (pred(ops[i])) return i;
  ADD_FAILURE() << "no matching op on rank " << rank;
  return 0;
}

TEST(RingBroken, DroppedDepGivesWrongSum) {
  Schedule s = small_ring();
  // Rank 0's first send at step 1 forwards the block it reduces at step 0; without the
  // dep it may forward the unreduced block.
  const std::size_t i = find_op(s, 0, [](const Op& op) {
    return op.kind == OpKind::kSend && !op.deps.empty();
  });
  s.programs[0].ops[i].deps.clear();
  EXPECT_NO_THROW(validate(s));  // structurally fine: only behaviour shows the bug

  const Buffers in = make_inputs(4, s.count);
  const std::vector<double> want = elementwise_sum(in, s.count);
  auto all_correct = [&](const FunctionalResult& res) {
    for (const auto& b : res.buffers)
      if (!same_buffer(b, want)) return false;
    return true;
  };
  // Program order runs the now dep-free send before rank 3's data has arrived.
  EXPECT_FALSE(all_correct(run_functional(s, in)));
  int wrong = 0;
  for (uint64_t seed = 1; seed <= 16; ++seed) wrong += all_correct(run_functional(s, in, seed)) ? 0 : 1;
  EXPECT_GT(wrong, 0);
}

TEST(RingBroken, RandomOrderExposesRaceProgramOrderMisses) {
  // Rank 1 forwards what it reduced, but its send lacks the dep on the recv. The FIFO
  // order happens to run the recv first; random orders must find the other outcome.
  Schedule s;
  s.algorithm = "handmade";
  s.ranks = 2;
  s.count = 1;
  s.programs.resize(2);
  Op send01;
  send01.kind = OpKind::kSend;
  send01.peer = 1;
  send01.tag = 1;
  send01.count = 1;
  Op recv10;
  recv10.kind = OpKind::kRecv;
  recv10.peer = 1;
  recv10.tag = 2;
  recv10.count = 1;
  s.programs[0].ops = {send01, recv10};
  Op recv01 = send01;
  recv01.kind = OpKind::kRecv;
  recv01.peer = 0;
  recv01.mode = RecvMode::kReduceSum;
  Op send10 = recv10;
  send10.kind = OpKind::kSend;
  send10.peer = 0;
  s.programs[1].ops = {recv01, send10};  // send10 should depend on op 0
  ASSERT_NO_THROW(validate(s));

  const Buffers in{{1.0}, {10.0}};
  EXPECT_EQ(run_functional(s, in).buffers[0][0], 11.0);
  std::set<double> outcomes;
  for (uint64_t seed = 1; seed <= 32; ++seed)
    outcomes.insert(run_functional(s, in, seed).buffers[0][0]);
  EXPECT_EQ(outcomes, (std::set<double>{10.0, 11.0}));

  s.programs[1].ops[1].deps = {0};  // fixed: every order agrees
  for (uint64_t seed = 0; seed <= 32; ++seed)
    EXPECT_EQ(run_functional(s, in, seed).buffers[0][0], 11.0) << "seed " << seed;
}

TEST(RingBroken, WrongTagCaughtByValidateAndDeadlock) {
  Schedule s = small_ring();
  const std::size_t i =
      find_op(s, 2, [](const Op& op) { return op.kind == OpKind::kRecv; });
  s.programs[2].ops[i].tag ^= 1ull << 31;
  EXPECT_TRUE(throws_internal([&] { validate(s); }, "no matching"));
  EXPECT_TRUE(throws_internal([&] { run_functional(s, make_inputs(4, s.count)); },
                              "deadlock"));
  for (uint64_t seed : {3ull, 77ull})
    EXPECT_TRUE(throws_internal([&] { run_functional(s, make_inputs(4, s.count), seed); },
                                "waits for a message that was not sent"));
}

TEST(RingBroken, WrongTagOnSendLeavesMessageUnreceived) {
  Schedule s = small_ring();
  const std::size_t i =
      find_op(s, 1, [](const Op& op) { return op.kind == OpKind::kSend && !op.deps.empty(); });
  s.programs[1].ops[i].tag ^= 1ull << 30;
  EXPECT_TRUE(throws_internal([&] { validate(s); }, "no matching"));
  // The recv waiting for the original tag never completes.
  EXPECT_TRUE(throws_internal([&] { run_functional(s, make_inputs(4, s.count)); },
                              "deadlock"));
}

TEST(RingBroken, ForwardDepCaughtByValidate) {
  Schedule s = small_ring();
  auto& ops = s.programs[3].ops;
  ops[0].deps.push_back(static_cast<uint32_t>(ops.size() - 1));
  EXPECT_TRUE(throws_internal([&] { validate(s); }, "does not point to an earlier op"));
  s = small_ring();
  s.programs[3].ops[5].deps.push_back(5);  // self-dependency
  EXPECT_TRUE(throws_internal([&] { validate(s); }, "rank 3 op 5"));
  // The executor, which does not validate, sees the self-dependency as a deadlock.
  EXPECT_TRUE(throws_internal([&] { run_functional(s, make_inputs(4, s.count)); },
                              "deadlock"));
}

TEST(RingBroken, CyclicWaitIsValidButDeadlocks) {
  // Each rank receives before it sends to the other: structurally valid, never runs.
  Schedule s;
  s.algorithm = "cycle";
  s.ranks = 2;
  s.count = 4;
  s.programs.resize(2);
  for (int r = 0; r < 2; ++r) {
    Op recv;
    recv.kind = OpKind::kRecv;
    recv.peer = 1 - r;
    recv.tag = 9;
    recv.count = 4;
    Op send = recv;
    send.kind = OpKind::kSend;
    send.deps = {0};
    s.programs[static_cast<std::size_t>(r)].ops = {recv, send};
  }
  EXPECT_NO_THROW(validate(s));
  EXPECT_TRUE(throws_internal([&] { run_functional(s, make_inputs(2, 4)); },
                              "deadlock: 4 of 4 ops cannot run"));
}

TEST(ValidateErrors, NamesTheProblem) {
  auto with = [](const std::function<void(Schedule&)>& edit) {
    Schedule s = small_ring();
    edit(s);
    return s;
  };
  const auto first_send = [](const Op& op) { return op.kind == OpKind::kSend; };
  const auto first_recv = [](const Op& op) { return op.kind == OpKind::kRecv; };
  EXPECT_TRUE(throws_internal([&] { validate(with([](Schedule& s) { s.ranks = 5; })); },
                              "4 programs for 5 ranks"));
  EXPECT_TRUE(throws_internal(
      [&] {
        validate(with([&](Schedule& s) { s.programs[1].ops[find_op(s, 1, first_send)].peer = 1; }));
      },
      "peer is the rank itself"));
  EXPECT_TRUE(throws_internal(
      [&] {
        validate(with([&](Schedule& s) { s.programs[1].ops[find_op(s, 1, first_send)].peer = 4; }));
      },
      "peer 4 out of range [0, 4)"));
  EXPECT_TRUE(throws_internal(
      [&] {
        validate(with([&](Schedule& s) {
          s.programs[2].ops[find_op(s, 2, first_recv)].offset =
              std::numeric_limits<uint64_t>::max();
        }));
      },
      "exceeds the buffer of 25 elements"));
  EXPECT_TRUE(throws_internal(
      [&] {
        validate(with([&](Schedule& s) { s.programs[2].ops[find_op(s, 2, first_recv)].count += 1; }));
      },
      "expects"));
  // A second send with a tag already used on the same pair.
  EXPECT_TRUE(throws_internal(
      [&] {
        validate(with([&](Schedule& s) {
          auto& ops = s.programs[0].ops;
          ops.push_back(ops[find_op(s, 0, first_send)]);
          ops.back().deps.clear();
        }));
      },
      "sends share the tag"));
  // A second recv for one send.
  EXPECT_TRUE(throws_internal(
      [&] {
        validate(with([&](Schedule& s) {
          auto& ops = s.programs[0].ops;
          ops.push_back(ops[find_op(s, 0, first_recv)]);
        }));
      },
      "matched by 2 recvs"));
  // A send nobody receives: validate and the executor both object.
  const Schedule orphan = with([&](Schedule& s) {
    Op extra;
    extra.kind = OpKind::kSend;
    extra.peer = 2;
    extra.tag = 0xabc;
    extra.count = 3;
    s.programs[0].ops.push_back(extra);
  });
  EXPECT_TRUE(throws_internal([&] { validate(orphan); }, "no matching recv"));
  EXPECT_TRUE(throws_internal([&] { run_functional(orphan, make_inputs(4, orphan.count)); },
                              "never received"));
}

TEST(FunctionalErrors, BadInputs) {
  const Schedule s = small_ring();
  EXPECT_TRUE(throws_internal([&] { run_functional(s, make_inputs(3, s.count)); },
                              "3 input buffers for 4 ranks"));
  EXPECT_TRUE(throws_internal([&] { run_functional(s, make_inputs(4, s.count - 1)); },
                              "has 24 elements, the schedule needs 25"));
}

}  // namespace
}  // namespace fabricsim::coll
