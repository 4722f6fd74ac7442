// Crossbar allocators (models/switch/arbiter.h): PortSet cyclic search, iSLIP and
// round-robin matching. Plain C++, no SystemC kernel.
#include "models/switch/arbiter.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/core/errors.h"
#include "models/core/rng.h"

namespace fabricsim {
namespace {

// ---------------------------------------------------------------------------------------
// Helpers

// Reference: first member of `members` (restricted to `mask`) at or after `from`, wrapping.
int ref_next_cyclic(const std::vector<bool>& members, const std::vector<bool>& mask, int from) {
  const int n = int(members.size());
  for (int d = 0; d < n; ++d) {
    const int i = (from + d) % n;
    if (members[i] && mask[i]) return i;
  }
  return -1;
}

PortSet make_set(int n, const std::vector<bool>& bits) {
  PortSet s(n);
  for (int i = 0; i < n; ++i)
    if (bits[i]) s.set(i);
  return s;
}

PortSet full_set(int n) {
  PortSet s(n);
  for (int i = 0; i < n; ++i) s.set(i);
  return s;
}

// A request matrix kept by rows and by columns, as the switch keeps it.
struct Requests {
  std::vector<PortSet> rows, cols;
  Requests(int in, int out) : rows(in, PortSet(out)), cols(out, PortSet(in)) {}
  void add(int i, int o) {
    rows[i].set(o);
    cols[o].set(i);
  }
  bool has(int i, int o) const { return rows[i].test(o); }
  int inputs() const { return int(rows.size()); }
  int outputs() const { return int(cols.size()); }
};

Requests full_requests(int in, int out) {
  Requests r(in, out);
  for (int i = 0; i < in; ++i)
    for (int o = 0; o < out; ++o) r.add(i, o);
  return r;
}

Requests random_requests(Rng& rng, int in, int out, uint64_t per_mille) {
  Requests r(in, out);
  for (int i = 0; i < in; ++i)
    for (int o = 0; o < out; ++o)
      if (rng.below(1000) < per_mille) r.add(i, o);
  return r;
}

PortSet random_subset(Rng& rng, int n, uint64_t per_mille) {
  PortSet s(n);
  for (int i = 0; i < n; ++i)
    if (rng.below(1000) < per_mille) s.set(i);
  return s;
}

// The invariants every allocator's output must satisfy, whatever its policy.
::testing::AssertionResult valid_matching(const Requests& r, const PortSet& free_in,
                                          const PortSet& free_out, const std::vector<int>& m) {
  if (int(m.size()) != r.inputs())
    return ::testing::AssertionFailure()
           << "match has " << m.size() << " entries for " << r.inputs() << " inputs";
  std::vector<int> owner(r.outputs(), -1);
  for (int i = 0; i < r.inputs(); ++i) {
    const int o = m[i];
    if (o == -1) continue;
    if (o < 0 || o >= r.outputs())
      return ::testing::AssertionFailure() << "input " << i << " matched to bad output " << o;
    if (owner[o] != -1)
      return ::testing::AssertionFailure()
             << "output " << o << " matched to inputs " << owner[o] << " and " << i;
    owner[o] = i;
    if (!r.has(i, o))
      return ::testing::AssertionFailure()
             << "input " << i << " matched to output " << o << " it did not request";
    if (!free_in.test(i))
      return ::testing::AssertionFailure() << "busy input " << i << " was matched";
    if (!free_out.test(o))
      return ::testing::AssertionFailure() << "busy output " << o << " was matched";
  }
  return ::testing::AssertionSuccess();
}

// Maximal: no free unmatched input requests a free unmatched output.
::testing::AssertionResult maximal_matching(const Requests& r, const PortSet& free_in,
                                            const PortSet& free_out, const std::vector<int>& m) {
  std::vector<bool> out_used(r.outputs(), false);
  for (int i = 0; i < r.inputs(); ++i)
    if (m[i] >= 0) out_used[m[i]] = true;
  for (int i = 0; i < r.inputs(); ++i) {
    if (m[i] >= 0 || !free_in.test(i)) continue;
    for (int o = 0; o < r.outputs(); ++o)
      if (!out_used[o] && free_out.test(o) && r.has(i, o))
        return ::testing::AssertionFailure()
               << "not maximal: free input " << i << " and free output " << o
               << " are both unmatched but " << i << " requests " << o;
  }
  return ::testing::AssertionSuccess();
}

int matched_count(const std::vector<int>& m) {
  return int(std::count_if(m.begin(), m.end(), [](int o) { return o >= 0; }));
}

// True if every input is matched (then, with in == out, m is a permutation: the validity
// check already rules out an output being used twice).
bool perfect(const std::vector<int>& m) {
  return std::all_of(m.begin(), m.end(), [](int o) { return o >= 0; });
}

const int kSizes[] = {1, 63, 64, 65, 130};

// ---------------------------------------------------------------------------------------
// PortSet

TEST(PortSet, SetResetTestAnyClear) {
  for (int n : kSizes) {
    PortSet s(n);
    EXPECT_EQ(s.size(), n);
    EXPECT_FALSE(s.any()) << "n=" << n;
    s.set(n - 1);
    EXPECT_TRUE(s.test(n - 1));
    EXPECT_TRUE(s.any());
    if (n > 1) {
      EXPECT_FALSE(s.test(n - 2));
      s.set(0);
      s.reset(n - 1);
      EXPECT_FALSE(s.test(n - 1));
      EXPECT_TRUE(s.test(0));
    }
    s.clear();
    EXPECT_FALSE(s.any()) << "n=" << n;
  }
}

TEST(PortSet, AssignAndIsIntersection) {
  const int n = 130;
  PortSet a(n), b(n), c(n);
  for (int i = 0; i < n; i += 2) a.set(i);  // evens
  for (int i = 0; i < n; i += 3) b.set(i);  // multiples of 3
  c.set(1);                                 // overwritten by assign_and
  c.assign_and(a, b);
  for (int i = 0; i < n; ++i) EXPECT_EQ(c.test(i), i % 6 == 0) << "i=" << i;
}

TEST(PortSet, ForEachVisitsMembersInAscendingOrderAcrossWords) {
  const int n = 130;
  PortSet s(n);
  const std::vector<int> members{0, 1, 62, 63, 64, 65, 100, 127, 128, 129};
  // Insert out of order: the visit order must not depend on insertion order.
  for (auto it = members.rbegin(); it != members.rend(); ++it) s.set(*it);
  std::vector<int> seen;
  s.for_each([&](int i) { seen.push_back(i); });
  EXPECT_EQ(seen, members);

  PortSet empty(n);
  int calls = 0;
  empty.for_each([&](int) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(PortSet, NextCyclicEmptyIsMinusOne) {
  for (int n : kSizes) {
    PortSet s(n);
    for (int from = 0; from < n; ++from) EXPECT_EQ(s.next_cyclic(from), -1) << "n=" << n;
  }
  PortSet zero(0);
  EXPECT_EQ(zero.next_cyclic(0), -1);
}

TEST(PortSet, NextCyclicSizeOne) {
  PortSet s(1);
  s.set(0);
  EXPECT_EQ(s.next_cyclic(0), 0);
}

// Hand-picked cases that cross a 64-bit word boundary in both directions.
TEST(PortSet, NextCyclicWrapsAcrossWordBoundaries) {
  {
    PortSet s(130);
    s.set(5);
    EXPECT_EQ(s.next_cyclic(100), 5);  // wraps from word 1 past word 2 back into word 0
    EXPECT_EQ(s.next_cyclic(129), 5);  // from the very last bit
    EXPECT_EQ(s.next_cyclic(5), 5);    // "at or after": from itself
    EXPECT_EQ(s.next_cyclic(6), 5);    // all the way around
  }
  {
    PortSet s(130);
    s.set(64);
    EXPECT_EQ(s.next_cyclic(0), 64);   // forward from word 0 into word 1
    EXPECT_EQ(s.next_cyclic(63), 64);  // last bit of word 0 -> first of word 1
    EXPECT_EQ(s.next_cyclic(65), 64);  // wraps through word 2 and word 0
  }
  {
    PortSet s(65);
    s.set(63);
    EXPECT_EQ(s.next_cyclic(64), 63);  // the single bit of word 1, then wrap to word 0
    s.set(64);
    EXPECT_EQ(s.next_cyclic(64), 64);
    EXPECT_EQ(s.next_cyclic(0), 63);
  }
  {
    PortSet s(64);
    s.set(0);
    EXPECT_EQ(s.next_cyclic(63), 0);
    s.set(63);
    EXPECT_EQ(s.next_cyclic(63), 63);
    EXPECT_EQ(s.next_cyclic(1), 63);
  }
  {
    PortSet s(63);
    s.set(0);
    EXPECT_EQ(s.next_cyclic(62), 0);
  }
  {
    PortSet s(130);
    s.set(129);
    EXPECT_EQ(s.next_cyclic(0), 129);
    EXPECT_EQ(s.next_cyclic(128), 129);
    EXPECT_EQ(s.next_cyclic(129), 129);
  }
}

// Exhaustive over `from`, against a brute-force reference, for random sets of several
// densities (sparse sets make the wrap-around path the common one).
TEST(PortSet, NextCyclicMatchesReferenceForRandomSets) {
  Rng rng(1, "portset");
  const uint64_t densities[] = {5, 30, 200, 500, 950};
  for (int n : kSizes) {
    for (uint64_t d : densities) {
      for (int trial = 0; trial < 20; ++trial) {
        std::vector<bool> bits(n), all(n, true);
        for (int i = 0; i < n; ++i) bits[i] = rng.below(1000) < d;
        const PortSet s = make_set(n, bits);
        for (int from = 0; from < n; ++from)
          ASSERT_EQ(s.next_cyclic(from), ref_next_cyclic(bits, all, from))
              << "n=" << n << " density=" << d << " trial=" << trial << " from=" << from;
      }
    }
  }
}

TEST(PortSet, NextCyclicMaskedMatchesReferenceForRandomSets) {
  Rng rng(2, "portset_masked");
  const uint64_t densities[] = {10, 100, 500, 900};
  for (int n : kSizes) {
    for (uint64_t d : densities) {
      for (int trial = 0; trial < 20; ++trial) {
        std::vector<bool> bits(n), mask(n);
        for (int i = 0; i < n; ++i) {
          bits[i] = rng.below(1000) < d;
          mask[i] = rng.below(1000) < 500;
        }
        const PortSet s = make_set(n, bits), m = make_set(n, mask);
        for (int from = 0; from < n; ++from)
          ASSERT_EQ(s.next_cyclic_masked(m, from), ref_next_cyclic(bits, mask, from))
              << "n=" << n << " density=" << d << " trial=" << trial << " from=" << from;
      }
    }
  }
}

TEST(PortSet, NextCyclicMaskedIgnoresMembersOutsideMask) {
  PortSet s(130), mask(130);
  s.set(3);
  s.set(70);
  s.set(129);
  mask.set(3);
  mask.set(129);
  EXPECT_EQ(s.next_cyclic_masked(mask, 4), 129);  // 70 is in s but not in the mask
  EXPECT_EQ(s.next_cyclic_masked(mask, 0), 3);
  mask.clear();
  mask.set(70);
  EXPECT_EQ(s.next_cyclic_masked(mask, 71), 70);  // the only candidate, reached by wrapping
  mask.clear();
  EXPECT_EQ(s.next_cyclic_masked(mask, 0), -1);
}

// ---------------------------------------------------------------------------------------
// Factory

TEST(ArbiterFactory, KnownNamesAndUnknownName) {
  const auto& names = arbiter_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "islip"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "round_robin"), names.end());
  for (const std::string& name : names) EXPECT_NE(make_arbiter(name, 4, 4, 1), nullptr);
  EXPECT_THROW(make_arbiter("pim", 4, 4, 1), InternalError);
}

// ---------------------------------------------------------------------------------------
// iSLIP

// With every pointer at 0 and every input requesting every output, all outputs grant
// input 0, which accepts only output 0: the first single-iteration call matches one pair.
TEST(ISlip, FirstCallWithSynchronisedPointersMatchesOnePair) {
  const int n = 8;
  auto arb = make_arbiter("islip", n, n, 1);
  const Requests r = full_requests(n, n);
  const PortSet fi = full_set(n), fo = full_set(n);
  std::vector<int> m;
  arb->match(r.rows, r.cols, fi, fo, m);
  ASSERT_TRUE(valid_matching(r, fi, fo, m));
  EXPECT_EQ(matched_count(m), 1);
  EXPECT_EQ(m[0], 0);
}

// McKeown 1999: under a full request matrix, one-iteration iSLIP desynchronises its grant
// pointers within N calls, after which every call is a perfect matching (100% throughput).
void expect_desynchronises(int n) {
  auto arb = make_arbiter("islip", n, n, 1);
  const Requests r = full_requests(n, n);
  const PortSet fi = full_set(n), fo = full_set(n);
  std::vector<int> m;
  int first_perfect = -1;
  const int calls = 20 * n + 100;
  for (int c = 0; c < calls; ++c) {
    arb->match(r.rows, r.cols, fi, fo, m);
    ASSERT_TRUE(valid_matching(r, fi, fo, m)) << "n=" << n << " call " << c;
    if (perfect(m)) {
      if (first_perfect < 0) first_perfect = c;
    } else {
      ASSERT_LT(first_perfect, 0) << "n=" << n << ": call " << c << " matched only "
                                  << matched_count(m) << " of " << n
                                  << " after the pointers had desynchronised at call "
                                  << first_perfect;
    }
  }
  ASSERT_GE(first_perfect, 0) << "n=" << n << ": never a perfect matching";
  EXPECT_LT(first_perfect, n) << "n=" << n << ": desynchronisation took more than N calls";
}

TEST(ISlip, FullLoadDesynchronisesToPerfectMatchingN8) { expect_desynchronises(8); }

// From synchronised pointers, each call desynchronises one more output: call c (0-based)
// matches exactly c + 1 pairs, so the N-th call is the first perfect matching.
TEST(ISlip, FullLoadRampsUpOnePairPerCallFromSynchronisedPointers) {
  const int n = 8;
  auto arb = make_arbiter("islip", n, n, 1);
  const Requests r = full_requests(n, n);
  const PortSet fi = full_set(n), fo = full_set(n);
  std::vector<int> m;
  for (int c = 0; c < n; ++c) {
    arb->match(r.rows, r.cols, fi, fo, m);
    EXPECT_EQ(matched_count(m), c + 1) << "call " << c;
  }
}

TEST(ISlip, FullLoadDesynchronisesToPerfectMatchingOtherSizes) {
  for (int n : {2, 3, 4, 16, 64, 65}) expect_desynchronises(n);
}

// Pointers move only on first-iteration accepts. 3x3 full requests, 3 iterations:
// call 1: it1 all outputs grant in0, in0 accepts out0 (g0=1, a0=1); it2 out1,out2 grant in1,
// in1 accepts out1; it3 out2 grants in2 -> identity matching, pointers g=[1,0,0] a=[1,0,0].
// call 2: out0 grants in1, out1 and out2 grant in0; in0 accepts out1 (a0=1), in1 accepts
// out0; it2 out2 grants in2 -> {0->1, 1->0, 2->2}. Had the it2/it3 accepts moved pointers
// too (g1=2, g2=0, a1=2, a2=0), call 2 would give {0->2, 1->0, 2->1} instead.
TEST(ISlip, PointersMoveOnlyOnFirstIterationAccepts) {
  auto arb = make_arbiter("islip", 3, 3, 3);
  const Requests r = full_requests(3, 3);
  const PortSet fi = full_set(3), fo = full_set(3);
  std::vector<int> m;
  arb->match(r.rows, r.cols, fi, fo, m);
  EXPECT_EQ(m, (std::vector<int>{0, 1, 2}));
  arb->match(r.rows, r.cols, fi, fo, m);
  EXPECT_EQ(m, (std::vector<int>{1, 0, 2}));
}

// The textbook request-grant-accept (McKeown 1999) on plain vectors, pointers kept by
// the caller: the reference the arbiter's shortcuts (one free input, one free output)
// must reproduce call for call, pointer moves included.
struct RefISlip {
  int n_in, n_out, iters;
  std::vector<int> grant_ptr, accept_ptr;
  RefISlip(int in, int out, int it)
      : n_in(in), n_out(out), iters(it), grant_ptr(out, 0), accept_ptr(in, 0) {}
  std::vector<int> match(const Requests& r, const PortSet& free_in, const PortSet& free_out) {
    std::vector<int> m(n_in, -1);
    std::vector<bool> fin(n_in), fout(n_out);
    for (int i = 0; i < n_in; ++i) fin[i] = free_in.test(i);
    for (int o = 0; o < n_out; ++o) fout[o] = free_out.test(o);
    for (int it = 0; it < iters; ++it) {
      std::vector<std::vector<bool>> grants(n_in, std::vector<bool>(n_out, false));
      bool any = false;
      for (int o = 0; o < n_out; ++o) {
        if (!fout[o]) continue;
        std::vector<bool> req(n_in);
        for (int i = 0; i < n_in; ++i) req[i] = r.has(i, o);
        const int i = ref_next_cyclic(req, fin, grant_ptr[o]);
        if (i < 0) continue;
        grants[i][o] = true;
        any = true;
      }
      if (!any) break;
      for (int i = 0; i < n_in; ++i) {
        const int o = ref_next_cyclic(grants[i], std::vector<bool>(n_out, true), accept_ptr[i]);
        if (o < 0) continue;
        m[i] = o;
        fin[i] = false;
        fout[o] = false;
        if (it == 0) {
          accept_ptr[i] = (o + 1) % n_out;
          grant_ptr[o] = (i + 1) % n_in;
        }
      }
    }
    return m;
  }
};

// Random request matrices and free sets, many of them with one free input or one free
// output (the arbiter's shortcuts), over thousands of calls whose pointers carry over:
// every matching equals the reference's. Sizes span one word, two inline words and the
// heap-backed sets (130 ports).
TEST(ISlip, ShortcutsForOneFreeInputOrOutputMatchTheTextbookAlgorithm) {
  Rng rng(7, "islip_shortcuts");
  int lone_in_calls = 0, lone_out_calls = 0, matched_lone = 0;
  for (int n : {3, 8, 64, 72, 130}) {
    for (int iters : {1, 2, 4}) {
      auto arb = make_arbiter("islip", n, n, iters);
      RefISlip ref(n, n, iters);
      std::vector<int> m;
      for (int c = 0; c < 400; ++c) {
        const Requests r = random_requests(rng, n, n, 50 + rng.below(400));
        PortSet fi = random_subset(rng, n, 500), fo = random_subset(rng, n, 500);
        const uint64_t shape = rng.below(4);
        if (shape == 0) {  // one free input
          fi = PortSet(n);
          fi.set(int(rng.below(uint64_t(n))));
          ++lone_in_calls;
        } else if (shape == 1) {  // one free output
          fo = PortSet(n);
          fo.set(int(rng.below(uint64_t(n))));
          ++lone_out_calls;
        }
        arb->match(r.rows, r.cols, fi, fo, m);
        const std::vector<int> want = ref.match(r, fi, fo);
        ASSERT_EQ(m, want) << "n=" << n << " iterations=" << iters << " call " << c;
        if (shape < 2 && matched_count(m) == 1) ++matched_lone;
      }
    }
  }
  // The shortcuts were taken, and often matched something (not only empty results).
  EXPECT_GT(lone_in_calls, 1000);
  EXPECT_GT(lone_out_calls, 1000);
  EXPECT_GT(matched_lone, 1000);
}

TEST(PortSet, OnlyNamesTheLoneMember) {
  for (int n : {1, 64, 65, 128, 130, 200}) {
    PortSet s(n);
    EXPECT_EQ(s.only(), -1) << n;
    s.set(n - 1);
    EXPECT_EQ(s.only(), n - 1) << n;
    if (n > 1) {
      s.set(0);
      EXPECT_EQ(s.only(), -2) << n;
      s.reset(n - 1);
      EXPECT_EQ(s.only(), 0) << n;
    }
  }
}

// Grant pointer moves one past the accepted input, so a loser wins next time.
// in0 requests {0,1}, in1 requests {0}. Call 1: out0 and out1 grant in0, in0 accepts out0,
// in1 gets nothing (one iteration). Call 2: out0's pointer is now 1, it grants in1; out1
// grants in0; both accept: a perfect matching.
TEST(ISlip, GrantPointerPassesTheTurnOn) {
  Requests r(2, 2);
  r.add(0, 0);
  r.add(0, 1);
  r.add(1, 0);
  auto arb = make_arbiter("islip", 2, 2, 1);
  const PortSet fi = full_set(2), fo = full_set(2);
  std::vector<int> m;
  arb->match(r.rows, r.cols, fi, fo, m);
  EXPECT_EQ(m, (std::vector<int>{0, -1}));
  arb->match(r.rows, r.cols, fi, fo, m);
  EXPECT_EQ(m, (std::vector<int>{1, 0}));
}

// Output side: 4 inputs all request output 0 only; the grant pointer moves one past each
// accepted input, so the inputs take strict turns and each gets 100 of 400 grants.
TEST(ISlip, GrantPointerSharesOneOutputEqually) {
  const int n = 4;
  auto arb = make_arbiter("islip", n, n, 1);
  Requests r(n, n);
  for (int i = 0; i < n; ++i) r.add(i, 0);
  const PortSet fi = full_set(n), fo = full_set(n);
  std::vector<int> grants(n, 0);
  std::vector<int> m;
  for (int c = 0; c < 400; ++c) {
    arb->match(r.rows, r.cols, fi, fo, m);
    ASSERT_EQ(matched_count(m), 1) << "call " << c;
    const int winner = int(std::find(m.begin(), m.end(), 0) - m.begin());
    EXPECT_EQ(winner, c % n) << "call " << c;
    ++grants[winner];
  }
  EXPECT_EQ(grants, std::vector<int>(n, 100));
}

// Input side: one input requests two outputs, both of which grant it every time; the accept
// pointer moves one past the accepted output, so it alternates 0, 1, 0, 1, ...
TEST(ISlip, AcceptPointerAlternatesBetweenGrantingOutputs) {
  auto arb = make_arbiter("islip", 1, 2, 1);
  Requests r(1, 2);
  r.add(0, 0);
  r.add(0, 1);
  const PortSet fi = full_set(1), fo = full_set(2);
  std::vector<int> m;
  for (int c = 0; c < 100; ++c) {
    arb->match(r.rows, r.cols, fi, fo, m);
    ASSERT_EQ(m[0], c % 2) << "call " << c;
  }
}

// Zero iterations is treated as one (make_arbiter clamps), not as "never match".
TEST(ISlip, ZeroIterationsBehavesAsOne) {
  auto arb = make_arbiter("islip", 4, 4, 0);
  const Requests r = full_requests(4, 4);
  const PortSet fi = full_set(4), fo = full_set(4);
  std::vector<int> m;
  arb->match(r.rows, r.cols, fi, fo, m);
  EXPECT_EQ(matched_count(m), 1);
}

TEST(ISlip, BusyPortsAreNeverMatched) {
  const int n = 8;
  auto arb = make_arbiter("islip", n, n, n);
  const Requests r = full_requests(n, n);
  PortSet fi = full_set(n), fo = full_set(n);
  fi.reset(0);
  fi.reset(5);
  fo.reset(3);
  std::vector<int> m;
  for (int c = 0; c < 50; ++c) {
    arb->match(r.rows, r.cols, fi, fo, m);
    ASSERT_TRUE(valid_matching(r, fi, fo, m)) << "call " << c;
    EXPECT_EQ(m[0], -1);
    EXPECT_EQ(m[5], -1);
    // 6 free inputs, 7 free outputs, full requests: a maximal matching pairs all 6 inputs.
    EXPECT_EQ(matched_count(m), 6) << "call " << c;
  }
}

TEST(ISlip, NoRequestsNoMatches) {
  const int n = 8;
  auto arb = make_arbiter("islip", n, n, 4);
  const Requests r(n, n);
  std::vector<int> m(n, 7);  // stale contents must be overwritten
  arb->match(r.rows, r.cols, full_set(n), full_set(n), m);
  EXPECT_EQ(m, std::vector<int>(n, -1));
}

struct Shape {
  int in, out;
};
const Shape kShapes[] = {{8, 8}, {5, 9}, {9, 5}, {16, 16}, {64, 64}, {65, 70}, {130, 130}};

// Any iteration count, any request matrix, any free sets: the matching is valid, and a
// single iteration already matches at least one pair whenever a free pair is requested.
TEST(ISlip, RandomMatchingsAreAlwaysValid) {
  Rng rng(3, "islip_valid");
  for (const Shape& s : kShapes) {
    for (int iters : {1, 2, 4}) {
      auto arb = make_arbiter("islip", s.in, s.out, iters);
      for (int c = 0; c < 200; ++c) {
        const uint64_t density = 20 + rng.below(700);
        const Requests r = random_requests(rng, s.in, s.out, density);
        const PortSet fi = random_subset(rng, s.in, 800), fo = random_subset(rng, s.out, 800);
        std::vector<int> m;
        arb->match(r.rows, r.cols, fi, fo, m);
        ASSERT_TRUE(valid_matching(r, fi, fo, m))
            << s.in << "x" << s.out << " iters=" << iters << " call " << c;
        bool any_pair = false;
        for (int i = 0; i < s.in && !any_pair; ++i)
          for (int o = 0; o < s.out && !any_pair; ++o)
            any_pair = fi.test(i) && fo.test(o) && r.has(i, o);
        if (any_pair) {
          ASSERT_GE(matched_count(m), 1) << s.in << "x" << s.out << " call " << c;
        }
      }
    }
  }
}

// Each productive iteration adds at least one pair, so min(in, out) iterations always reach
// a maximal matching: no free unmatched input requests a free unmatched output.
TEST(ISlip, EnoughIterationsGiveMaximalMatching) {
  Rng rng(4, "islip_maximal");
  for (const Shape& s : kShapes) {
    const int iters = std::min(s.in, s.out);
    auto arb = make_arbiter("islip", s.in, s.out, iters);
    for (int c = 0; c < 200; ++c) {
      const uint64_t density = 10 + rng.below(600);
      const Requests r = random_requests(rng, s.in, s.out, density);
      const PortSet fi = random_subset(rng, s.in, 850), fo = random_subset(rng, s.out, 850);
      std::vector<int> m;
      arb->match(r.rows, r.cols, fi, fo, m);
      ASSERT_TRUE(valid_matching(r, fi, fo, m)) << s.in << "x" << s.out << " call " << c;
      ASSERT_TRUE(maximal_matching(r, fi, fo, m)) << s.in << "x" << s.out << " call " << c;
    }
  }
}

// ---------------------------------------------------------------------------------------
// Round robin

// 4 inputs all request output 0 forever: the grant pointer rotates, so over 400 calls each
// input gets exactly 100 grants, in strict turn 0,1,2,3,0,...
TEST(RoundRobinArbiter, FourInputsShareOneOutputEqually) {
  const int n = 4;
  auto arb = make_arbiter("round_robin", n, n, 1);
  Requests r(n, n);
  for (int i = 0; i < n; ++i) r.add(i, 0);
  const PortSet fi = full_set(n), fo = full_set(n);
  std::vector<int> grants(n, 0);
  std::vector<int> m;
  for (int c = 0; c < 400; ++c) {
    arb->match(r.rows, r.cols, fi, fo, m);
    ASSERT_TRUE(valid_matching(r, fi, fo, m)) << "call " << c;
    ASSERT_EQ(matched_count(m), 1) << "call " << c;
    const int winner = int(std::find(m.begin(), m.end(), 0) - m.begin());
    EXPECT_EQ(winner, c % n) << "call " << c;
    ++grants[winner];
  }
  EXPECT_EQ(grants, std::vector<int>(n, 100));
}

// Outputs take turns to choose first: one input requesting two outputs goes to each of
// them half the time.
TEST(RoundRobinArbiter, OutputsTakeTurnsToChooseFirst) {
  auto arb = make_arbiter("round_robin", 1, 2, 1);
  Requests r(1, 2);
  r.add(0, 0);
  r.add(0, 1);
  const PortSet fi = full_set(1), fo = full_set(2);
  std::vector<int> per_output(2, 0);
  std::vector<int> m;
  for (int c = 0; c < 100; ++c) {
    arb->match(r.rows, r.cols, fi, fo, m);
    ASSERT_GE(m[0], 0);
    ++per_output[m[0]];
  }
  EXPECT_EQ(per_output, (std::vector<int>{50, 50}));
}

// Outputs grant in sequence and each grants an unmatched requesting input if one exists,
// so an output left unmatched had no unmatched requester at its turn, nor later: maximal.
TEST(RoundRobinArbiter, RandomMatchingsAreValidAndMaximal) {
  Rng rng(5, "rr");
  for (const Shape& s : kShapes) {
    auto arb = make_arbiter("round_robin", s.in, s.out, 1);
    for (int c = 0; c < 200; ++c) {
      const uint64_t density = 10 + rng.below(600);
      const Requests r = random_requests(rng, s.in, s.out, density);
      const PortSet fi = random_subset(rng, s.in, 800), fo = random_subset(rng, s.out, 800);
      std::vector<int> m;
      arb->match(r.rows, r.cols, fi, fo, m);
      ASSERT_TRUE(valid_matching(r, fi, fo, m)) << s.in << "x" << s.out << " call " << c;
      ASSERT_TRUE(maximal_matching(r, fi, fo, m)) << s.in << "x" << s.out << " call " << c;
    }
  }
}

}  // namespace
}  // namespace fabricsim
