// Oracles shared by the collective algorithm tests (tests/unit/algorithms/): the documented
// result of every collective, an independent textbook model of every algorithm's traffic,
// the dependency rule, tags and program order of algorithms.h, and the textbook volumes.
// They tell algorithms apart by collective and name, never through the registry's traits,
// so that the traits are checked rather than trusted.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "models/collectives/algorithms.h"
#include "models/collectives/program.h"
#include "tests/unit/coll_test_util.h"

namespace fabricsim::coll::algotest {

using testutil::Buffers;

inline int mod(int x, int n) { return ((x % n) + n) % n; }
inline std::size_t at(int i) { return static_cast<std::size_t>(i); }

// True if `a` is the algorithm named `name` (of any collective).
inline bool named(const AlgoInfo& a, const char* name) { return std::string(a.name) == name; }

inline uint64_t chunk_elems(const CollParams& p) {
  return std::max<uint64_t>(1, p.chunk_bytes / p.elem_bytes);
}

// Checks `out` (final buffers) against the documented result of `a`'s collective for
// inputs `in`.
::testing::AssertionResult check_result(const AlgoInfo& a, const CollParams& p, const Buffers& in,
                                        const Buffers& out);

// Elements and messages per directed (sender, receiver) pair.
struct PairTraffic {
  uint64_t elems = 0, messages = 0;
  bool operator==(const PairTraffic& o) const { return elems == o.elems && messages == o.messages; }
};
using TrafficMap = std::map<std::pair<int, int>, PairTraffic>;

// The sends of `s` per directed pair.
TrafficMap traffic_of(const Schedule& s);

// Builds make_schedule(a, p, domain) and checks it: shape and buffer size, the exact
// result in program order and in random valid orders (functional executor), the traffic
// per directed pair against the textbook model, the dependency rule (if check_dep_rule),
// tags and program order.
void check_config(const AlgoInfo& a, const CollParams& p, bool check_dep_rule, int domain = 0);

// Textbook volumes in closed form on n ranks (count = 120 n, one chunk per message).
void check_textbook_volume(const AlgoInfo& a, int n, int channels);

}  // namespace fabricsim::coll::algotest
