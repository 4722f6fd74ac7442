// The registry is the only seam an algorithm needs: a star all-reduce defined and
// registered in this file alone is listed, costed, checked and scheduled by the library's
// entry points, and its schedule computes the all-reduce in the functional executor. Also
// the registry's traits (has_levels, flat_algorithms_for, uses_nvls_switches), the slices
// rule of make_schedule and add's own checks. Pure C++, no SystemC.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "models/collectives/algorithms.h"
#include "models/collectives/functional.h"
#include "models/collectives/program.h"
#include "models/core/errors.h"
#include "tests/unit/algorithms/oracles.h"
#include "tests/unit/coll_test_util.h"

namespace fabricsim::coll {
namespace {

using namespace algotest;
using namespace testutil;

// Star all-reduce: every other rank sends its whole buffer to rank 0 (tag step 0), which
// sums them and sends the sum back (step 1, deps: its n-1 reduce recvs). No pieces, no
// channels: one message per leaf each way.
void check_star(const CollParams& p, int) {
  if (p.ranks < 1)
    throw InternalError("star: ranks must be >= 1 (got " + std::to_string(p.ranks) + ")");
}

Schedule star_schedule(const CollParams& p, int domain_size) {
  check_star(p, domain_size);
  Schedule s;
  s.algorithm = "star";
  s.ranks = p.ranks;
  s.count = p.count;
  s.programs.resize(at(p.ranks));
  if (p.count == 0) return s;
  const uint64_t up = 0, down = uint64_t{1} << 32;
  auto op = [&](OpKind kind, int peer, uint64_t tag) {
    Op o;
    o.kind = kind;
    o.peer = peer;
    o.tag = tag;
    o.offset = 0;
    o.count = p.count;
    return o;
  };
  std::vector<Op>& center = s.programs[0].ops;
  std::vector<uint32_t> sums;
  for (int leaf = 1; leaf < p.ranks; ++leaf) {
    sums.push_back(static_cast<uint32_t>(center.size()));
    Op recv = op(OpKind::kRecv, leaf, up);
    recv.mode = RecvMode::kReduceSum;
    center.push_back(recv);
  }
  for (int leaf = 1; leaf < p.ranks; ++leaf) {
    Op send = op(OpKind::kSend, leaf, down);
    send.deps = sums;
    center.push_back(send);
  }
  for (int leaf = 1; leaf < p.ranks; ++leaf) {
    std::vector<Op>& ops = s.programs[at(leaf)].ops;
    ops.push_back(op(OpKind::kSend, 0, up));
    Op recv = op(OpKind::kRecv, 0, down);
    recv.mode = RecvMode::kCopy;
    ops.push_back(recv);
  }
  return s;
}

// Rank 0's port carries (n-1) S each way, in two dependent steps.
double star_cost(int n, double S, double al, double be, int) {
  return 2.0 * al + 2.0 * (n - 1) * S * be;
}

AlgoInfo star_entry() {
  return algo_entry(Collective::kAllReduce, "star", 0, "2 alpha + 2(n-1) S beta", star_schedule,
                    star_cost, check_star);
}

// Registers an entry for the scope of one test, so that no other test sees it.
class ScopedEntry {
 public:
  explicit ScopedEntry(const AlgoInfo& e) : entry_(algorithm_registry().add(e)) {}
  ~ScopedEntry() { algorithm_registry().remove(entry_.collective_name, entry_.name); }
  ScopedEntry(const ScopedEntry&) = delete;
  ScopedEntry& operator=(const ScopedEntry&) = delete;
  const AlgoInfo& entry() const { return entry_; }

 private:
  const AlgoInfo& entry_;
};

const std::vector<std::string> kBuiltInAllReduce{
    "ring", "tree", "halving_doubling", "direct", "hierarchical", "hierarchical_nvls", "nvls",
    "torus"};

TEST(AlgorithmRegistry, AlgorithmFromATestFileIsFoundCostedAndExact) {
  {
    const ScopedEntry star(star_entry());
    std::vector<std::string> want = kBuiltInAllReduce;
    want.push_back("star");
    EXPECT_EQ(algorithms_for("all_reduce"), want);  // last: ring stays the default
    EXPECT_EQ(algorithm_table().size(), 18u);
    const AlgoInfo& a = algo_info("all_reduce", "star");
    EXPECT_STREQ(a.collective_name, "all_reduce");
    EXPECT_FALSE(a.pipelined || a.rooted || a.in_switch || a.levels);
    EXPECT_FALSE(has_levels("all_reduce", "star"));
    EXPECT_FALSE(uses_nvls_switches("star"));
    EXPECT_EQ(flat_algorithms_for("all_reduce"),
              (std::vector<std::string>{"ring", "tree", "halving_doubling", "direct", "torus", "star"}));
    EXPECT_DOUBLE_EQ(alpha_beta_time_s(a, 4, 1e6, 2e-6, 1e-9), 4e-6 + 6e-3);
    EXPECT_EQ(alpha_beta_time_s(a, 1, 1e6, 2e-6, 1e-9), 0.0);

    for (int n = 1; n <= 9; ++n)
      for (uint64_t count :
           {uint64_t{0}, uint64_t{1}, uint64_t{7} * static_cast<uint64_t>(n) + 3}) {
        SCOPED_TRACE("ranks=" + std::to_string(n) + " count=" + std::to_string(count));
        const CollParams p{n, count, 4, 1, 64, 0};
        const Schedule s = make_schedule("all_reduce", "star", p);
        EXPECT_EQ(s.algorithm, "star");
        ASSERT_NO_THROW(validate(s));
        const Buffers in = make_inputs(n, s.count);
        EXPECT_TRUE(check_result(a, p, in, run_functional(s, in).buffers));
        for (uint64_t seed : {1ull, 99ull})
          EXPECT_TRUE(check_result(a, p, in, run_functional(s, in, seed).buffers))
              << "seed " << seed;
      }
    // make_schedule runs the entry's check and the registry's slices rule.
    EXPECT_TRUE(throws_internal(
        [] {
          make_schedule("all_reduce", "star", CollParams{0, 4, 4, 1, 8, 0});
        },
        "star: ranks must be >= 1"));
    EXPECT_TRUE(throws_internal(
        [] {
          make_schedule("all_reduce", "star", CollParams{4, 4, 4, 1, 8, 0, 2});
        },
        "slices 2 for all_reduce star, which has no levels to pipeline"));
    EXPECT_TRUE(throws_internal([] { ScopedEntry again(star_entry()); },
                                "all_reduce/star: already registered"));
  }
  EXPECT_EQ(algorithms_for("all_reduce"), kBuiltInAllReduce);
  EXPECT_EQ(algorithm_table().size(), 17u);
  EXPECT_TRUE(throws_internal([] { algo_info("all_reduce", "star"); },
                              "unknown algorithm 'star' for collective 'all_reduce'"));
  EXPECT_TRUE(throws_internal([] { algorithm_registry().remove("all_reduce", "star"); },
                              "all_reduce/star is not registered"));
}

TEST(AlgorithmRegistry, AddKeepsTheTableGroupedAndRefusesIncompleteEntries) {
  // A second alltoall direct goes between alltoall direct and sendrecv direct, leaving
  // every other entry where it was.
  AlgoInfo e = algo_info("alltoall", "direct");
  e.name = "direct2";
  const AlgoInfo* first_sendrecv = &algo_info("sendrecv", "direct");
  {
    const ScopedEntry added(e);
    EXPECT_EQ(algorithms_for("alltoall"),
              (std::vector<std::string>{"pairwise", "direct", "direct2"}));
    EXPECT_EQ(&algo_info("sendrecv", "direct"), first_sendrecv);  // references stay valid
    EXPECT_EQ(&added.entry(), &algo_info("alltoall", "direct2"));
    std::vector<std::string> order;
    for (const AlgoInfo& a : algorithm_table())
      order.push_back(std::string(a.collective_name) + "/" + a.name);
    ASSERT_EQ(order.size(), 18u);
    EXPECT_EQ(order[15], "alltoall/direct");
    EXPECT_EQ(order[16], "alltoall/direct2");
    EXPECT_EQ(order[17], "sendrecv/direct");
  }
  EXPECT_EQ(&algo_info("sendrecv", "direct"), first_sendrecv);

  AlgoInfo no_gen = algo_info("sendrecv", "direct");
  no_gen.name = "other";
  no_gen.schedule = nullptr;
  EXPECT_TRUE(throws_internal([&] { algorithm_registry().add(no_gen); },
                              "sendrecv/other: cost, schedule, alpha_beta and check"));
  AlgoInfo no_name = algo_info("sendrecv", "direct");
  no_name.name = "";
  EXPECT_TRUE(throws_internal([&] { algorithm_registry().add(no_name); }, "no name"));
  EXPECT_EQ(algorithm_table().size(), 17u);
}

TEST(AlgorithmRegistry, TraitsOfTheBuiltIns) {
  for (const AlgoInfo& a : algorithm_table()) {
    const std::string name = a.name;
    const bool two_level = a.collective == Collective::kAllReduce &&
                           (name == "hierarchical" || name == "hierarchical_nvls");
    EXPECT_EQ(a.levels, two_level) << a.collective_name << "/" << name;
    EXPECT_EQ(has_levels(a.collective_name, name), two_level) << a.collective_name << "/" << name;
    EXPECT_EQ(a.in_switch, name == "nvls" || name == "hierarchical_nvls")
        << a.collective_name << "/" << name;
  }
  EXPECT_FALSE(has_levels("all_reduce", "auto"));
  EXPECT_FALSE(has_levels("gather", "hierarchical"));
  EXPECT_EQ(flat_algorithms_for("all_reduce"),
            (std::vector<std::string>{"ring", "tree", "halving_doubling", "direct", "torus"}));
  EXPECT_EQ(flat_algorithms_for("reduce_scatter"), (std::vector<std::string>{"ring"}));
  EXPECT_EQ(flat_algorithms_for("alltoall"), (std::vector<std::string>{"pairwise", "direct"}));
  EXPECT_TRUE(throws_internal([] { flat_algorithms_for("gather"); }, "unknown collective"));
  EXPECT_TRUE(uses_nvls_switches("nvls"));
  EXPECT_TRUE(uses_nvls_switches("hierarchical_nvls"));
  EXPECT_FALSE(uses_nvls_switches("ring"));
  EXPECT_FALSE(uses_nvls_switches("auto"));
  // Slices pipeline levels: make_schedule refuses them elsewhere, takes them where they apply.
  CollParams p{8, 64, 4, 1, 64, 0, 2};
  for (const char* name : {"ring", "tree", "direct"})
    EXPECT_TRUE(throws_internal([&] { make_schedule("all_reduce", name, p); },
                                "which has no levels to pipeline (slices must be 1)"))
        << name;
  EXPECT_TRUE(throws_internal([&] { make_schedule("alltoall", "pairwise", p); }, "slices 2"));
  EXPECT_NO_THROW(make_schedule("all_reduce", "hierarchical", p, 4));
  p.slices = 0;
  EXPECT_TRUE(throws_internal([&] { make_schedule("all_reduce", "hierarchical", p, 4); },
                              "allreduce_hierarchical: slices must be >= 1 (got 0)"));
  EXPECT_TRUE(throws_internal([&] { make_schedule("all_reduce", "ring", p); }, "slices 0"));
}

}  // namespace
}  // namespace fabricsim::coll
