// Every (collective, algorithm) of the registry on 1..33 ranks computes its documented
// result exactly in program order and in random valid orders, with the textbook traffic
// (checked against an independent model of who sends what to whom), the documented
// dependency rule, tags and program order, and the textbook volumes; plus what every
// generator shares: no ops on one rank or zero count, bad parameters. Pure C++, no SystemC.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
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

class AlgorithmSweep : public ::testing::TestWithParam<int> {};

TEST_P(AlgorithmSweep, ExactResultsTrafficDepsOrder) {
  const int n = GetParam();
  const uint64_t un = static_cast<uint64_t>(n);
  struct Config {
    uint64_t count;
    int channels;
    bool several_chunks;
  };
  // Counts 0, 1, n-1, n, 7n+3 (divisible by neither n, channels nor chunks) with channels
  // 1 and 2 and chunks giving one and several pieces per message; then a few thousand
  // elements, once with one channel and one chunk, once with two channels and pieces.
  std::vector<Config> configs;
  for (uint64_t count : std::set<uint64_t>{0, 1, un - 1, un, 7 * un + 3})
    for (int channels : {1, 2})
      for (bool several : {false, true}) configs.push_back({count, channels, several});
  const uint64_t big = 2049;
  configs.push_back({big, 1, false});
  configs.push_back({big, 2, true});

  for (const AlgoInfo& a : algorithm_table()) {
    // NVLS schedules use multicast and in-switch reduction ops: tested in NvlsSweep and
    // HierarchicalNvlsSplits (test_nvls_schedule.cpp).
    if (named(a, "nvls") || named(a, "hierarchical_nvls")) continue;
    for (const Config& cfg : configs) {
      const uint32_t elem_bytes = cfg.channels == 1 ? 4 : 8;
      // Several pieces: about 2 per block of a channel (more where blocks are larger, as
      // in the tree), from a byte size that is not a multiple of the element.
      const uint64_t several =
          ceil_div(std::max<uint64_t>(cfg.count, 1), 2 * un * static_cast<uint64_t>(cfg.channels));
      const uint64_t chunk_bytes =
          cfg.several_chunks ? several * elem_bytes + elem_bytes / 2 : uint64_t{1} << 40;
      const CollParams p{
          n, cfg.count, elem_bytes, cfg.channels, chunk_bytes, static_cast<int>(cfg.count % un)};
      SCOPED_TRACE(
          std::string(a.collective_name) + "/" + a.name + " ranks=" + std::to_string(n) +
          " count=" + std::to_string(cfg.count) + " channels=" + std::to_string(cfg.channels) +
          " chunk_elems=" + std::to_string(chunk_elems(p)) + " root=" + std::to_string(p.root));
      // The per-element dependency oracle is the slowest check; the large count adds no
      // structure the smaller ones lack.
      check_config(a, p, /*check_dep_rule=*/cfg.count < big);
      if (::testing::Test::HasFailure()) return;
    }
    for (int channels : {1, 2}) check_textbook_volume(a, n, channels);
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks1To33, AlgorithmSweep, ::testing::Range(1, 34),
                         [](const ::testing::TestParamInfo<int>& param_info) {
                           return "n" + std::to_string(param_info.param);
                         });

TEST(Generators, SingleRankAndZeroCountHaveNoOps) {
  for (const AlgoInfo& a : algorithm_table()) {
    for (const CollParams& p : {CollParams{1, 50, 4, 2, 16, 0}, CollParams{7, 0, 4, 2, 16, 3}}) {
      const Schedule s = make_schedule(a.collective_name, a.name, p);
      for (const Program& prog : s.programs)
        EXPECT_TRUE(prog.ops.empty()) << a.collective_name << "/" << a.name;
    }
  }
}

TEST(Generators, BadParams) {
  const CollParams good{4, 100, 4, 1, 64, 0};
  for (const AlgoInfo& a : algorithm_table()) {
    auto make = [&](const CollParams& p) { make_schedule(a.collective_name, a.name, p); };
    CollParams q = good;
    q.ranks = 0;
    EXPECT_TRUE(throws_internal([&] { make(q); }, "ranks must be >= 1"));
    q = good;
    q.channels = 0;
    EXPECT_TRUE(throws_internal([&] { make(q); }, "channels must be >= 1"));
    q = good;
    q.chunk_bytes = 0;
    EXPECT_TRUE(throws_internal([&] { make(q); }, "chunk_bytes"));
    q = good;
    q.elem_bytes = 0;
    EXPECT_TRUE(throws_internal([&] { make(q); }, "elem_bytes"));
    q = good;
    q.root = 4;
    if (a.rooted) {
      EXPECT_TRUE(throws_internal([&] { make(q); }, "root 4 out of range"));
    } else {
      EXPECT_NO_THROW(make(q)) << a.collective_name << "/" << a.name;
    }
  }
}

}  // namespace
}  // namespace fabricsim::coll
