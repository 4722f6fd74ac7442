// Collective algorithm library: every generator on 1..33 ranks computes its documented
// result exactly in program order and in random valid orders, with the textbook traffic
// (checked against an independent model of who sends what to whom), the documented
// dependency rule, tags and program order; plus the double binary tree, the algorithm
// table, nccl-tests busbw factors and alpha-beta costs. Pure C++, no SystemC.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "models/collectives/algorithms.h"
#include "models/collectives/functional.h"
#include "models/collectives/program.h"
#include "models/collectives/ring.h"
#include "models/core/errors.h"
#include "tests/unit/coll_test_util.h"

namespace fabricsim::coll {
namespace {

using namespace testutil;

int mod(int x, int n) { return ((x % n) + n) % n; }
std::size_t at(int i) { return static_cast<std::size_t>(i); }

// Offsets of split_even(total, parts) laid out from `base`.
std::vector<uint64_t> offsets(uint64_t base, const std::vector<uint64_t>& sizes) {
  std::vector<uint64_t> off;
  for (uint64_t s : sizes) {
    off.push_back(base);
    base += s;
  }
  return off;
}

// True if `a` is the algorithm named `name` (of any collective).
bool named(const AlgoInfo& a, const char* name) { return std::string(a.name) == name; }

uint64_t chunk_elems(const CollParams& p) {
  return std::max<uint64_t>(1, p.chunk_bytes / p.elem_bytes);
}

// ---------------------------------------------------------------------------------------
// Expected results, from the semantics in algorithms.h.

// Compares [from, to) of got and want, reporting the first mismatch.
::testing::AssertionResult same_range(const std::vector<double>& got,
                                      const std::vector<double>& want, uint64_t from, uint64_t to,
                                      const std::string& what) {
  if (got.size() < to || want.size() < to)
    return ::testing::AssertionFailure() << what << ": buffer too short";
  for (uint64_t i = from; i < to; ++i)
    if (got[i] != want[i])
      return ::testing::AssertionFailure()
             << what << ": element " << i << ": got " << got[i] << ", want " << want[i];
  return ::testing::AssertionSuccess();
}

// Checks `out` (final buffers) against the documented result for inputs `in`.
::testing::AssertionResult check_result(const AlgoInfo& a, const CollParams& p, const Buffers& in,
                                        const Buffers& out) {
  const int n = p.ranks;
  const uint64_t C = p.count;
  const uint64_t buf = in[0].size();
  std::vector<double> sum(buf, 0.0);
  for (const auto& b : in)
    for (uint64_t i = 0; i < buf; ++i) sum[i] += b[i];
  const std::vector<uint64_t> bl = split_even(C, n);
  const std::vector<uint64_t> bo = offsets(0, bl);
  for (int r = 0; r < n; ++r) {
    const auto& got = out[at(r)];
    const std::string who = "rank " + std::to_string(r);
    ::testing::AssertionResult res = ::testing::AssertionSuccess();
    switch (a.collective) {
      case Collective::kAllReduce:
        res = same_range(got, sum, 0, buf, who);
        break;
      case Collective::kReduceScatter:
        res = same_range(got, sum, bo[at(r)], bo[at(r)] + bl[at(r)], who + " block");
        break;
      case Collective::kAllGather:
        for (int b = 0; b < n && res; ++b)
          res = same_range(got, in[at(b)], bo[at(b)], bo[at(b)] + bl[at(b)],
                           who + " block " + std::to_string(b));
        break;
      case Collective::kBroadcast:
        res = same_range(got, in[at(p.root)], 0, buf, who);
        break;
      case Collective::kReduce:
        if (r == p.root) res = same_range(got, sum, 0, buf, who + " (root)");
        break;
      case Collective::kAllToAll: {
        const uint64_t slot = ceil_div(C, static_cast<uint64_t>(n));
        std::vector<double> want = in[at(r)];  // everything not written stays as it was
        for (int j = 0; j < n; ++j)
          if (j != r)
            for (uint64_t i = 0; i < bl[at(r)]; ++i)
              want[C + static_cast<uint64_t>(j) * slot + i] = in[at(j)][bo[at(r)] + i];
        res = same_range(got, want, 0, buf, who);
        break;
      }
      case Collective::kSendRecv: {
        std::vector<double> want = in[at(r)];
        if (n > 1)
          for (uint64_t i = 0; i < C; ++i) want[C + i] = in[at(mod(r - 1, n))][i];
        res = same_range(got, want, 0, buf, who);
        break;
      }
    }
    if (!res) return res;
  }
  return ::testing::AssertionSuccess();
}

// ---------------------------------------------------------------------------------------
// Independent traffic model: the textbook messages of each algorithm as
// (sender, receiver, per-channel element counts), before cutting into pieces.

struct Logical {
  int src, dst;
  uint64_t elems;
};

std::vector<Logical> textbook_messages(const AlgoInfo& a, const CollParams& p, int domain = 0) {
  const int n = p.ranks;
  const int nch = p.channels;
  std::vector<Logical> out;
  if (n == 1) return out;
  const std::vector<uint64_t> ch = split_even(p.count, nch);
  const std::vector<uint64_t> bl = split_even(p.count, n);
  auto add = [&](int src, int dst, uint64_t elems) {
    if (elems > 0) out.push_back({src, dst, elems});
  };
  // Block-major: channel parts of a block.
  auto per_channel_of_block = [&](int src, int dst, uint64_t block) {
    for (uint64_t part : split_even(block, nch)) add(src, dst, part);
  };
  switch (a.collective) {
    case Collective::kAllReduce:
      for (int c = 0; c < nch; ++c) {
        const uint64_t cc = ch[at(c)];
        if (named(a, "ring")) {
            const auto b = split_even(cc, n);
            for (int r = 0; r < n; ++r)
              for (int s = 0; s < 2 * (n - 1); ++s) add(r, (r + 1) % n, b[at(mod(r - s, n))]);
          } else if (named(a, "tree")) {
            const auto halves = split_even(cc, 2);
            for (int t = 0; t < 2; ++t) {
              const auto par = double_binary_tree_parents(n, t);
              for (int r = 0; r < n; ++r)
                if (par[at(r)] >= 0) {
                  add(r, par[at(r)], halves[at(t)]);
                  add(par[at(r)], r, halves[at(t)]);
                }
            }
          } else if (named(a, "halving_doubling")) {
            int pw = 1;
            while (pw * 2 <= n) pw *= 2;
            const int rem = n - pw;
            const auto b = split_even(cc, pw);
            auto span = [&](int lo, int d) {
              uint64_t s = 0;
              for (int i = lo; i < lo + d; ++i) s += b[at(i)];
              return s;
            };
            auto real = [&](int v) { return v < rem ? 2 * v + 1 : v + rem; };
            for (int r = 0; r < 2 * rem; r += 2) {
              add(r, r + 1, cc);
              add(r + 1, r, cc);
            }
            for (int v = 0; v < pw; ++v)
              for (int d = pw / 2; d >= 1; d /= 2) {
                const int u = v ^ d;
                add(real(v), real(u), span(u & ~(d - 1), d));  // halving: the partner's half
                add(real(v), real(u), span(v & ~(d - 1), d));  // doubling: my d blocks
              }
          } else if (named(a, "direct")) {
            const auto b = split_even(cc, n);
            for (int r = 0; r < n; ++r)
              for (int j = 0; j < n; ++j)
                if (j != r) {
                  add(r, j, b[at(j)]);
                  add(r, j, b[at(r)]);
                }
          } else if (named(a, "hierarchical")) {
            // Per slice of the channel: reduce-scatter ring inside every domain, ring
            // all-reduce of block l across the domains among local index l, all-gather
            // ring inside.
            const int L = domain == 0 ? n : domain, N = n / L;
            for (uint64_t sc : split_even(cc, p.slices)) {
            const auto b = split_even(sc, L);
            for (int k = 0; k < N; ++k)
              for (int l = 0; l < L; ++l) {
                const int r = k * L + l, next = k * L + (l + 1) % L;
                const auto sb = split_even(b[at(l)], N);
                for (int s = 0; s + 1 < L; ++s) add(r, next, b[at(mod(l - 1 - s, L))]);
                for (int t = 0; t < 2 * (N - 1); ++t)
                  add(r, ((k + 1) % N) * L + l, sb[at(mod(k - t, N))]);
                for (int s = 0; s + 1 < L; ++s) add(r, next, b[at(mod(l - s, L))]);
              }
            }
          } else {
            ADD_FAILURE() << "no model for " << a.name;
          }
      }
      break;
    case Collective::kReduceScatter:
      for (int r = 0; r < n; ++r)
        for (int s = 0; s < n - 1; ++s)
          per_channel_of_block(r, (r + 1) % n, bl[at(mod(r - 1 - s, n))]);
      break;
    case Collective::kAllGather:
      for (int r = 0; r < n; ++r)
        for (int s = 0; s < n - 1; ++s) per_channel_of_block(r, (r + 1) % n, bl[at(mod(r - s, n))]);
      break;
    case Collective::kBroadcast:
      for (int q = 0; q < n - 1; ++q)
        for (uint64_t cc : ch) add((p.root + q) % n, (p.root + q + 1) % n, cc);
      break;
    case Collective::kReduce:
      for (int q = 0; q < n - 1; ++q)
        for (uint64_t cc : ch) add((p.root + 1 + q) % n, (p.root + 2 + q) % n, cc);
      break;
    case Collective::kAllToAll:
      for (int r = 0; r < n; ++r)
        for (int j = 0; j < n; ++j)
          if (j != r) per_channel_of_block(r, j, bl[at(j)]);
      break;
    case Collective::kSendRecv:
      for (int r = 0; r < n; ++r)
        for (uint64_t cc : ch) add(r, (r + 1) % n, cc);
      break;
  }
  return out;
}

struct PairTraffic {
  uint64_t elems = 0, messages = 0;
  bool operator==(const PairTraffic& o) const { return elems == o.elems && messages == o.messages; }
};
using TrafficMap = std::map<std::pair<int, int>, PairTraffic>;

TrafficMap traffic_of(const Schedule& s) {
  TrafficMap m;
  for (int r = 0; r < s.ranks; ++r)
    for (const Op& op : s.programs[at(r)].ops)
      if (op.kind == OpKind::kSend) {
        PairTraffic& t = m[{r, op.peer}];
        t.elems += op.count;
        ++t.messages;
      }
  return m;
}

TrafficMap traffic_of(const std::vector<Logical>& msgs, uint64_t chunk) {
  TrafficMap m;
  for (const Logical& l : msgs) {
    PairTraffic& t = m[{l.src, l.dst}];
    t.elems += l.elems;
    t.messages += ceil_div(l.elems, chunk);
  }
  return m;
}

std::string describe(const TrafficMap& m) {
  std::string s;
  for (const auto& kv : m)
    s += " " + std::to_string(kv.first.first) + "->" + std::to_string(kv.first.second) + ":" +
         std::to_string(kv.second.elems) + "/" + std::to_string(kv.second.messages);
  return s;
}

// ---------------------------------------------------------------------------------------
// The dependency rule of algorithms.h, re-derived per element: a send depends on the
// latest kCopy recv of each element of its range and every kReduceSum recv after it;
// recvs have no deps. Pairwise sends may have up to 2 extra (lockstep) deps on ops of
// earlier steps.

// The tag's upper field c * S + s; within one channel it orders steps.
uint64_t step_field(uint64_t tag) { return tag >> 32; }
uint64_t piece_field(uint64_t tag) { return tag & 0xffffffffull; }

::testing::AssertionResult check_deps(const AlgoInfo& a, const Schedule& s, int slices = 1,
                                      int domain = 0) {
  const bool lockstep = named(a, "pairwise");
  const bool window = named(a, "tree");
  // Hierarchical with slices: the first-step sends of slice i >= 1 also depend on every
  // recv of this rank in the last phase-1 step of slice i-1 (same channel).
  const bool slice_window = named(a, "hierarchical") && slices > 1;
  const int hL = domain == 0 ? s.ranks : domain;
  const uint64_t per_slice =
      2 * static_cast<uint64_t>(hL - 1) + 2 * static_cast<uint64_t>(s.ranks / hL - 1);
  for (int r = 0; r < s.ranks; ++r) {
    const auto& ops = s.programs[at(r)].ops;
    std::vector<std::vector<uint32_t>> writers(s.count);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      if (op.kind == OpKind::kRecv) {
        if (!op.deps.empty())
          return ::testing::AssertionFailure() << describe_op(r, i, op) << " has deps";
        for (uint64_t e = op.offset; e < op.offset + op.count; ++e) {
          if (op.mode == RecvMode::kCopy) writers[e].clear();
          writers[e].push_back(static_cast<uint32_t>(i));
        }
        continue;
      }
      if (op.kind != OpKind::kSend)
        return ::testing::AssertionFailure() << describe_op(r, i, op) << ": unexpected kind";
      std::set<uint32_t> want;
      for (uint64_t e = op.offset; e < op.offset + op.count; ++e)
        want.insert(writers[e].begin(), writers[e].end());
      const std::set<uint32_t> got(op.deps.begin(), op.deps.end());
      if (got.size() != op.deps.size())
        return ::testing::AssertionFailure() << describe_op(r, i, op) << ": duplicate deps";
      if (slice_window) {
        const uint64_t hi = step_field(op.tag);
        const uint64_t step = hi % (per_slice * static_cast<uint64_t>(slices));
        std::set<uint32_t> window_recvs;
        if (hL > 1 && step % per_slice == 0 && step >= per_slice)
          for (std::size_t k = 0; k < i; ++k)
            if (ops[k].kind == OpKind::kRecv &&
                step_field(ops[k].tag) == hi - per_slice + static_cast<uint64_t>(hL - 2))
              window_recvs.insert(static_cast<uint32_t>(k));
        want.insert(window_recvs.begin(), window_recvs.end());
        if (got != want)
          return ::testing::AssertionFailure() << describe_op(r, i, op) << ": " << got.size()
                                               << " deps, rule and slice window give "
                                               << want.size();
        continue;
      }
      if (window) {
        // The rule's deps plus, for an up send of piece j >= 8, the down recv of piece
        // j-8 of the same channel and tree (step 2t+1 for up step 2t).
        std::set<uint32_t> extra;
        for (uint32_t d : got)
          if (!want.count(d)) extra.insert(d);
        if (!std::includes(got.begin(), got.end(), want.begin(), want.end()) || extra.size() > 1)
          return ::testing::AssertionFailure() << describe_op(r, i, op) << ": deps";
        const uint64_t piece = piece_field(op.tag);
        const bool wants_window = step_field(op.tag) % 2 == 0 && piece >= 8;
        if (wants_window != (extra.size() == 1))
          return ::testing::AssertionFailure() << describe_op(r, i, op) << ": window dep";
        if (!extra.empty()) {
          const Op& w = ops[*extra.begin()];
          if (w.kind != OpKind::kRecv || w.mode != RecvMode::kCopy ||
              step_field(w.tag) != step_field(op.tag) + 1 || piece_field(w.tag) + 8 != piece)
            return ::testing::AssertionFailure()
                   << describe_op(r, i, op) << ": window dep " << describe_op(r, *extra.begin(), w);
        }
        continue;
      }
      if (!lockstep) {
        if (got != want)
          return ::testing::AssertionFailure() << describe_op(r, i, op) << ": " << got.size()
                                               << " deps, rule gives " << want.size();
        continue;
      }
      std::size_t extra = 0;
      for (uint32_t d : got) {
        if (want.count(d)) continue;
        ++extra;
        // A lockstep dep: an op of an earlier step (same channel), piece <= this one.
        if (step_field(ops[d].tag) >= step_field(op.tag) ||
            piece_field(ops[d].tag) > piece_field(op.tag))
          return ::testing::AssertionFailure()
                 << describe_op(r, i, op) << ": lockstep dep " << describe_op(r, d, ops[d])
                 << " is not an earlier step";
      }
      if (extra > 2 || !std::includes(got.begin(), got.end(), want.begin(), want.end()))
        return ::testing::AssertionFailure()
               << describe_op(r, i, op) << ": deps do not follow the rule plus lockstep";
    }
  }
  return ::testing::AssertionSuccess();
}

// ---------------------------------------------------------------------------------------
// Tags and program order.

// Step slots S of each algorithm (algorithms.h).
uint64_t step_slots(const AlgoInfo& a, int n, int domain, int slices = 1) {
  switch (a.collective) {
    case Collective::kAllReduce:
      if (named(a, "hierarchical")) {
        const int L = domain == 0 ? n : domain;
        return (2ull * static_cast<uint64_t>(L - 1) + 2ull * static_cast<uint64_t>(n / L - 1)) *
               static_cast<uint64_t>(slices);
      }
      if (named(a, "ring")) return 2ull * static_cast<uint64_t>(n);
      if (named(a, "tree")) return 4;
      if (named(a, "halving_doubling")) {
        uint64_t k = 0;
        while ((2 << k) <= n) ++k;
        return 2 * k + 2;
      }
      return 2;
    case Collective::kReduceScatter:
    case Collective::kAllGather:
      return static_cast<uint64_t>(n - 1);
    case Collective::kAllToAll:
      return static_cast<uint64_t>(n);
    default:
      return 1;
  }
}

::testing::AssertionResult check_tags_and_order(const AlgoInfo& a, const CollParams& p,
                                                const Schedule& s, int domain) {
  const uint64_t slots = std::max<uint64_t>(1, step_slots(a, p.ranks, domain, p.slices));
  const bool piece_major =
      named(a, "tree") || a.collective == Collective::kBroadcast ||
      a.collective == Collective::kReduce || a.collective == Collective::kSendRecv;
  const bool all_sends_first =
      a.collective == Collective::kAllToAll && named(a, "direct");
  for (int r = 0; r < s.ranks; ++r) {
    const auto& ops = s.programs[at(r)].ops;
    uint64_t prev_step = 0, prev_piece = 0;
    bool seen_recv = false;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      const uint64_t hi = op.tag >> 32, piece = op.tag & 0xffffffffull;
      const uint64_t c = hi / slots, step = hi % slots;
      if (c >= static_cast<uint64_t>(p.channels))
        return ::testing::AssertionFailure() << describe_op(r, i, op) << ": channel field";
      // Every op moves one non-empty piece of at most a chunk.
      if (op.count == 0 || op.count > chunk_elems(p))
        return ::testing::AssertionFailure() << describe_op(r, i, op) << ": piece size";
      if (piece_major) {
        // Sendrecv: sends, then recvs, each piece-major; the others fully piece-major.
        if (a.collective == Collective::kSendRecv && op.kind == OpKind::kRecv && !seen_recv) {
          seen_recv = true;
          prev_piece = 0;
        }
        if (a.collective == Collective::kSendRecv && seen_recv && op.kind == OpKind::kSend)
          return ::testing::AssertionFailure() << describe_op(r, i, op) << ": send after recvs";
        if (piece < prev_piece)
          return ::testing::AssertionFailure() << describe_op(r, i, op) << ": piece order";
        prev_piece = piece;
      } else if (all_sends_first) {
        if (op.kind == OpKind::kRecv)
          seen_recv = true;
        else if (seen_recv)
          return ::testing::AssertionFailure() << describe_op(r, i, op) << ": send after recvs";
      } else {
        // Step-wise: steps never go back; within a step, sends before recvs.
        if (step < prev_step)
          return ::testing::AssertionFailure() << describe_op(r, i, op) << ": step order";
        if (step > prev_step) seen_recv = false;
        if (op.kind == OpKind::kRecv)
          seen_recv = true;
        else if (seen_recv)
          return ::testing::AssertionFailure()
                 << describe_op(r, i, op) << ": send after a recv of the same step";
        prev_step = step;
      }
    }
  }
  return ::testing::AssertionSuccess();
}

// ---------------------------------------------------------------------------------------
// The sweep.

void check_config(const AlgoInfo& a, const CollParams& p, bool check_dep_rule, int domain = 0) {
  const int n = p.ranks;
  const Schedule s = make_schedule(a.collective_name, a.name, p, domain);
  ASSERT_EQ(s.ranks, n);
  ASSERT_EQ(s.programs.size(), at(n));
  ASSERT_EQ(s.count, buffer_elems(a.collective, n, p.count));
  EXPECT_EQ(s.algorithm, a.name);
  ASSERT_NO_THROW(validate(s));

  const Buffers in = make_inputs(n, s.count);
  const FunctionalResult res = run_functional(s, in);
  EXPECT_TRUE(check_result(a, p, in, res.buffers)) << "program order";
  for (uint64_t seed : {0x9e3779b97f4a7c15ull, 12345ull}) {
    const FunctionalResult shuffled = run_functional(s, in, seed);
    EXPECT_TRUE(check_result(a, p, in, shuffled.buffers)) << "seed " << seed;
    EXPECT_EQ(shuffled.messages, res.messages);
  }

  // Traffic: per directed pair, elements and messages equal the textbook model.
  const uint64_t chunk = chunk_elems(p);
  const TrafficMap got = traffic_of(s);
  const TrafficMap want = traffic_of(textbook_messages(a, p, domain), chunk);
  EXPECT_TRUE(got == want) << "schedule:" << describe(got) << "\nmodel:   " << describe(want);
  uint64_t msgs = 0, elems = 0;
  for (const auto& kv : got) {
    msgs += kv.second.messages;
    elems += kv.second.elems;
  }
  EXPECT_EQ(res.messages, msgs);
  EXPECT_EQ(res.elements_moved, elems);

  if (check_dep_rule) {
    EXPECT_TRUE(check_deps(a, s, p.slices, domain));
  }
  EXPECT_TRUE(check_tags_and_order(a, p, s, domain));
}

// Textbook volumes in closed form, where the data divides evenly (count = 120 n, so every
// block of every channel has the same size) and each message is one chunk.
void check_textbook_volume(const AlgoInfo& a, int n, int channels) {
  const uint64_t un = static_cast<uint64_t>(n), uc = static_cast<uint64_t>(channels);
  const uint64_t C = 120 * un;
  const CollParams p{n, C, 4, channels, 1ull << 40, n / 2};
  const Schedule s = make_schedule(a.collective_name, a.name, p);
  std::vector<uint64_t> sent(un, 0), msgs(un, 0);
  for (int r = 0; r < n; ++r)
    for (const Op& op : s.programs[at(r)].ops)
      if (op.kind == OpKind::kSend) {
        sent[at(r)] += op.count;
        ++msgs[at(r)];
      }
  uint64_t total = 0, total_msgs = 0;
  for (int r = 0; r < n; ++r) {
    total += sent[at(r)];
    total_msgs += msgs[at(r)];
  }
  const std::string ctx = std::string(a.collective_name) + "/" + a.name;
  const uint64_t spread = (un - 1) * C / un;  // (n-1)/n of the data
  int lg = 0;
  while ((1 << lg) < n) ++lg;
  const bool pow2 = (1 << lg) == n;
  switch (a.collective) {
    case Collective::kAllReduce:
      if (named(a, "tree")) {
        EXPECT_EQ(total, 2 * (un - 1) * C) << ctx;
        EXPECT_EQ(total_msgs, n > 1 ? 4 * (un - 1) * uc : 0) << ctx;
        break;
      }
      if (named(a, "halving_doubling") && !pow2) {
        int pw = 1;
        while (pw * 2 <= n) pw *= 2;
        const uint64_t upw = static_cast<uint64_t>(pw), rem = un - upw;
        EXPECT_EQ(total, 2 * (upw - 1) * C + 2 * rem * C) << ctx;
        break;
      }
      for (int r = 0; r < n; ++r) {
        EXPECT_EQ(sent[at(r)], 2 * spread) << ctx << " rank " << r;  // 2(n-1)/n of the data
        const uint64_t want_msgs = named(a, "halving_doubling")
                                       ? 2 * static_cast<uint64_t>(lg) * uc
                                       : 2 * (un - 1) * uc;
        EXPECT_EQ(msgs[at(r)], want_msgs) << ctx << " rank " << r;
      }
      break;
    case Collective::kReduceScatter:
    case Collective::kAllGather:
    case Collective::kAllToAll:
      for (int r = 0; r < n; ++r) {
        EXPECT_EQ(sent[at(r)], spread) << ctx << " rank " << r;  // (n-1)/n of the data
        EXPECT_EQ(msgs[at(r)], (un - 1) * uc) << ctx << " rank " << r;
      }
      break;
    case Collective::kBroadcast:
    case Collective::kReduce: {
      const int last = a.collective == Collective::kBroadcast ? mod(p.root - 1, n) : p.root;
      for (int r = 0; r < n; ++r) {
        EXPECT_EQ(sent[at(r)], r == last ? 0 : C) << ctx << " rank " << r;
        EXPECT_EQ(msgs[at(r)], r == last ? 0 : uc) << ctx << " rank " << r;
      }
      break;
    }
    case Collective::kSendRecv:
      for (int r = 0; r < n; ++r) {
        EXPECT_EQ(sent[at(r)], n > 1 ? C : 0) << ctx << " rank " << r;
        EXPECT_EQ(msgs[at(r)], n > 1 ? uc : 0) << ctx << " rank " << r;
      }
      break;
  }
}

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

// ---------------------------------------------------------------------------------------
// Structure of individual algorithms.

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
  const CollParams p{6, 6 * 40 + 5, 4, 2, 4 * 7, 0};
  const Schedule s = allreduce_tree(p);
  for (int t = 0; t < 2; ++t) {
    const std::vector<int> par = double_binary_tree_parents(6, t);
    for (int r = 0; r < 6; ++r) {
      const auto& ops = s.programs[at(r)].ops;
      for (const Op& op : ops) {
        if (op.kind != OpKind::kSend || (op.tag >> 32) % 4 / 2 != static_cast<uint64_t>(t))
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

TEST(Chains, RootPositionsAndSingleRank) {
  // Broadcast from 2 on 5 ranks: 2 -> 3 -> 4 -> 0 -> 1; reduce to 2: 3 -> 4 -> 0 -> 1 -> 2.
  const CollParams p{5, 10, 4, 1, 1ull << 30, 2};
  const Schedule b = broadcast_ring(p);
  const Schedule r = reduce_ring(p);
  const std::vector<std::pair<int, int>> bcast_edges{{2, 3}, {3, 4}, {4, 0}, {0, 1}};
  const std::vector<std::pair<int, int>> reduce_edges{{3, 4}, {4, 0}, {0, 1}, {1, 2}};
  std::vector<std::pair<int, int>> got_b, got_r;
  for (int q = 0; q < 5; ++q) {
    for (const Op& op : b.programs[at(q)].ops)
      if (op.kind == OpKind::kSend) got_b.push_back({q, op.peer});
    for (const Op& op : r.programs[at(q)].ops)
      if (op.kind == OpKind::kSend) got_r.push_back({q, op.peer});
  }
  std::sort(got_b.begin(), got_b.end());
  std::sort(got_r.begin(), got_r.end());
  auto sorted = [](std::vector<std::pair<int, int>> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  EXPECT_EQ(got_b, sorted(bcast_edges));
  EXPECT_EQ(got_r, sorted(reduce_edges));
  EXPECT_TRUE(b.programs[1].ops.size() == 1 && b.programs[1].ops[0].kind == OpKind::kRecv);
  EXPECT_TRUE(r.programs[2].ops.size() == 1 && r.programs[2].ops[0].mode == RecvMode::kReduceSum);
}

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

TEST(Generators, RingAllReduceIsRingH) {
  const CollParams p{5, 123, 4, 2, 4 * 3, 0};
  const Schedule a = make_schedule("all_reduce", "ring", p);
  const Schedule b = ring_allreduce(RingParams{5, 123, 4, 2, 4 * 3});
  ASSERT_EQ(a.programs.size(), b.programs.size());
  EXPECT_EQ(a.algorithm, "ring");
  for (std::size_t r = 0; r < a.programs.size(); ++r) {
    ASSERT_EQ(a.programs[r].ops.size(), b.programs[r].ops.size());
    for (std::size_t i = 0; i < a.programs[r].ops.size(); ++i) {
      const Op& x = a.programs[r].ops[i];
      const Op& y = b.programs[r].ops[i];
      EXPECT_TRUE(x.kind == y.kind && x.peer == y.peer && x.tag == y.tag && x.offset == y.offset &&
                  x.count == y.count && x.mode == y.mode && x.deps == y.deps);
    }
  }
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

// ---------------------------------------------------------------------------------------
// Table, busbw factors, alpha-beta costs, dispatcher.

TEST(AlgorithmTable, NamesAndDispatch) {
  EXPECT_EQ(algorithms_for("all_reduce"),
            (std::vector<std::string>{"ring", "tree", "halving_doubling", "direct", "hierarchical",
                                      "hierarchical_nvls", "nvls"}));
  EXPECT_EQ(algorithms_for("reduce_scatter"), (std::vector<std::string>{"ring", "nvls"}));
  EXPECT_EQ(algorithms_for("all_gather"), (std::vector<std::string>{"ring", "nvls"}));
  EXPECT_EQ(algorithms_for("broadcast"), (std::vector<std::string>{"ring"}));
  EXPECT_EQ(algorithms_for("reduce"), (std::vector<std::string>{"ring"}));
  EXPECT_EQ(algorithms_for("alltoall"), (std::vector<std::string>{"pairwise", "direct"}));
  EXPECT_EQ(algorithms_for("sendrecv"), (std::vector<std::string>{"direct"}));
  EXPECT_EQ(algorithm_table().size(), 16u);
  std::set<std::pair<std::string, std::string>> seen;
  for (const AlgoInfo& a : algorithm_table()) {
    EXPECT_TRUE(seen.insert({a.collective_name, a.name}).second);
    EXPECT_EQ(&algo_info(a.collective_name, a.name), &a);
    EXPECT_EQ(a.rooted,
              a.collective == Collective::kBroadcast || a.collective == Collective::kReduce);
    EXPECT_NE(std::string(a.cost), "");
  }
  EXPECT_TRUE(throws_internal([] { algorithms_for("allreduce"); },
                              "unknown collective 'allreduce' (known: all_reduce, "
                              "reduce_scatter, all_gather, broadcast, reduce, alltoall, "
                              "sendrecv)"));
  EXPECT_TRUE(throws_internal(
      [] {
        make_schedule("all_reduce", "nvlsx", CollParams{2, 4, 4, 1, 8, 0});
      },
      "unknown algorithm 'nvlsx' for collective 'all_reduce' (known: "
      "ring, tree, halving_doubling, direct, hierarchical, hierarchical_nvls, nvls)"));
  EXPECT_TRUE(throws_internal(
      [] {
        make_schedule("gather", "ring", CollParams{2, 4, 4, 1, 8, 0});
      },
      "unknown collective 'gather'"));
}

TEST(AlgorithmTable, BusBwFactors) {
  for (int n : {1, 2, 3, 8, 33}) {
    const double dn = n;
    EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllReduce, n), 2 * (dn - 1) / dn);
    EXPECT_DOUBLE_EQ(busbw_factor(Collective::kReduceScatter, n), (dn - 1) / dn);
    EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllGather, n), (dn - 1) / dn);
    EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllToAll, n), (dn - 1) / dn);
    EXPECT_DOUBLE_EQ(busbw_factor(Collective::kBroadcast, n), 1.0);
    EXPECT_DOUBLE_EQ(busbw_factor(Collective::kReduce, n), 1.0);
    EXPECT_DOUBLE_EQ(busbw_factor(Collective::kSendRecv, n), 1.0);
  }
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(busbw_factor(algo_info("alltoall", "pairwise"), 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor(algo_info("all_reduce", "tree"), 4), 1.5);
  EXPECT_TRUE(throws_internal([] { busbw_factor(Collective::kAllReduce, 0); }, "n must be >= 1"));
}

TEST(AlgorithmTable, AlphaBetaHandComputed) {
  // alpha = 2 us, beta = 1 ns/byte (1 GB/s), S = 1 MB.
  const double al = 2e-6, be = 1e-9, S = 1e6;
  auto t = [&](const char* c, const char* a, int n) {
    return alpha_beta_time_s(algo_info(c, a), n, S, al, be);
  };
  // n = 8: ring 14 alpha + 1.75 S beta = 28 us + 1750 us.
  EXPECT_NEAR(t("all_reduce", "ring", 8), 1778e-6, 1e-12);
  // tree: depth 3, 6 alpha + 2 S beta = 12 us + 2000 us.
  EXPECT_NEAR(t("all_reduce", "tree", 8), 2012e-6, 1e-12);
  // n = 5: depth 3.
  EXPECT_NEAR(t("all_reduce", "tree", 5), 2012e-6, 1e-12);
  // halving-doubling, n = 8: 6 alpha + 1.75 S beta.
  EXPECT_NEAR(t("all_reduce", "halving_doubling", 8), 1762e-6, 1e-12);
  // n = 6 (p = 4): (2*2 + 2) alpha + (1.5 + 2) S beta = 12 us + 3500 us.
  EXPECT_NEAR(t("all_reduce", "halving_doubling", 6), 3512e-6, 1e-12);
  // direct, n = 4: 2 alpha + 1.5 S beta.
  EXPECT_NEAR(t("all_reduce", "direct", 4), 1504e-6, 1e-12);
  // reduce-scatter / all-gather ring, n = 4: 3 alpha + 0.75 S beta.
  EXPECT_NEAR(t("reduce_scatter", "ring", 4), 756e-6, 1e-12);
  EXPECT_NEAR(t("all_gather", "ring", 4), 756e-6, 1e-12);
  // broadcast / reduce chain, n = 4: 3 alpha + S beta.
  EXPECT_NEAR(t("broadcast", "ring", 4), 1006e-6, 1e-12);
  EXPECT_NEAR(t("reduce", "ring", 4), 1006e-6, 1e-12);
  // alltoall, n = 4: pairwise 3 alpha + 0.75 S beta, direct alpha + 0.75 S beta.
  EXPECT_NEAR(t("alltoall", "pairwise", 4), 756e-6, 1e-12);
  EXPECT_NEAR(t("alltoall", "direct", 4), 752e-6, 1e-12);
  // sendrecv: alpha + S beta.
  EXPECT_NEAR(t("sendrecv", "direct", 2), 1002e-6, 1e-12);
  // n = 2: ring = halving-doubling = direct = 2 alpha + S beta.
  EXPECT_NEAR(t("all_reduce", "ring", 2), 1004e-6, 1e-12);
  EXPECT_NEAR(t("all_reduce", "halving_doubling", 2), 1004e-6, 1e-12);
  EXPECT_NEAR(t("all_reduce", "direct", 2), 1004e-6, 1e-12);
  // Latency-bound (S = 0), n = 64: ring 126 alpha, tree 12 alpha, halving-doubling 12.
  const AlgoInfo& ring = algo_info("all_reduce", "ring");
  EXPECT_NEAR(alpha_beta_time_s(ring, 64, 0, al, be), 126 * al, 1e-15);
  EXPECT_NEAR(alpha_beta_time_s(algo_info("all_reduce", "tree"), 64, 0, al, be), 12 * al, 1e-15);
  EXPECT_NEAR(alpha_beta_time_s(algo_info("all_reduce", "halving_doubling"), 64, 0, al, be),
              12 * al, 1e-15);
  // Every formula is 0 on one rank.
  for (const AlgoInfo& a : algorithm_table())
    EXPECT_EQ(alpha_beta_time_s(a, 1, S, al, be), 0.0) << a.collective_name << "/" << a.name;
  EXPECT_TRUE(throws_internal([&] { alpha_beta_time_s(ring, 0, S, al, be); }, "n must be >= 1"));
  EXPECT_TRUE(throws_internal([&] { alpha_beta_time_s(ring, 4, -1, al, be); }, ">= 0"));
}


// ---------------------------------------------------------------------------------------
// Hierarchical all-reduce on every (domains x ranks per domain) split of 1..33 ranks, and
// the rail-aligned ring orders of the flat ring on two-level systems.

class HierarchicalSplits : public ::testing::TestWithParam<int> {};

TEST_P(HierarchicalSplits, ExactResultsTrafficDepsOrder) {
  const int n = GetParam();
  const uint64_t un = static_cast<uint64_t>(n);
  const AlgoInfo& a = algo_info("all_reduce", "hierarchical");
  for (int L = 1; L <= n; ++L) {
    if (n % L != 0) continue;
    for (uint64_t count : std::set<uint64_t>{0, 1, un - 1, un, 7 * un + 3, 2049})
      for (int channels : {1, 2})
        for (int slices : {1, 3})
        for (bool several : {false, true}) {
          const uint32_t elem_bytes = 4;
          const uint64_t piece =
              ceil_div(std::max<uint64_t>(count, 1), 2 * un * static_cast<uint64_t>(channels));
          const uint64_t chunk_bytes = several ? piece * elem_bytes + 2 : uint64_t{1} << 40;
          const CollParams p{n, count, elem_bytes, channels, chunk_bytes, 0, slices};
          SCOPED_TRACE("ranks=" + std::to_string(n) + " domain=" + std::to_string(L) +
                       " count=" + std::to_string(count) + " channels=" +
                       std::to_string(channels) + " slices=" + std::to_string(slices) +
                       " chunk_elems=" + std::to_string(chunk_elems(p)));
          check_config(a, p, /*check_dep_rule=*/count < 2049, L);
          if (::testing::Test::HasFailure()) return;
        }
    // Volumes: inside a domain 2(L-1)/L of the data per rank, across 2(N-1)/N of a block.
    const int N = n / L;
    const uint64_t C = 120 * un;
    const Schedule s = make_schedule("all_reduce", "hierarchical", CollParams{n, C, 4, 1, 1ull << 40, 0}, L);
    for (int r = 0; r < n; ++r) {
      uint64_t inside = 0, across = 0;
      for (const Op& op : s.programs[at(r)].ops)
        if (op.kind == OpKind::kSend) (op.peer / L == r / L ? inside : across) += op.count;
      EXPECT_EQ(inside, 2 * static_cast<uint64_t>(L - 1) * (C / static_cast<uint64_t>(L)))
          << "rank " << r << " domain " << L;
      EXPECT_EQ(across, 2 * static_cast<uint64_t>(N - 1) * (C / un)) << "rank " << r << " domain " << L;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks1To33, HierarchicalSplits, ::testing::Range(1, 34),
                         [](const ::testing::TestParamInfo<int>& param_info) {
                           return "n" + std::to_string(param_info.param);
                         });

TEST(Hierarchical, BadDomainSize) {
  EXPECT_TRUE(throws_internal(
      [] { allreduce_hierarchical(CollParams{6, 12, 4, 1, 8, 0}, 4); },
      "domain_size 4 does not divide ranks 6"));
  EXPECT_TRUE(throws_internal([] { rail_ring_orders(6, 4, 1); }, "does not divide ranks 6"));
}

TEST(RailRing, OrdersAreRailAlignedBalancedAndExact) {
  const AlgoInfo& ring = algo_info("all_reduce", "ring");
  for (int N : {1, 2, 3, 4, 5})
    for (int L : {1, 2, 3, 4, 8}) {
      const int n = N * L;
      for (int channels : {1, L, 2 * L}) {
        SCOPED_TRACE("N=" + std::to_string(N) + " L=" + std::to_string(L) +
                     " channels=" + std::to_string(channels));
        const auto orders = rail_ring_orders(n, L, channels);
        ASSERT_EQ(orders.size(), at(channels));
        // nic_out[k * L + l]: channels whose ring leaves domain k from local index l.
        std::vector<int> nic_out(at(n), 0), nic_in(at(n), 0);
        for (const auto& o : orders) {
          ASSERT_EQ(o.size(), at(n));
          EXPECT_EQ(std::set<int>(o.begin(), o.end()).size(), at(n)) << "not a permutation";
          for (int i = 0; i < n; ++i) {
            const int u = o[at(i)], v = o[at((i + 1) % n)];
            if (u / L == v / L) continue;  // inside a domain: the scale-up fabric
            ++nic_out[at(u)];
            ++nic_in[at(v)];
            if (N % 2 == 1 && L == 2) continue;  // no rail-aligned ring exists
            EXPECT_EQ(u % L, v % L) << u << " -> " << v << " changes rail";
          }
          // Each domain is entered once and left once.
          if (N > 1)
            for (int k = 0; k < N; ++k) {
              int inside = 0;
              for (int i = 0; i < n; ++i)
                if (o[at(i)] / L == k && o[at((i + 1) % n)] / L == k) ++inside;
              EXPECT_EQ(inside, L - 1) << "domain " << k;
            }
        }
        if (N % 2 == 0 && channels % L == 0)
          for (int r = 0; r < n; ++r) {
            EXPECT_EQ(nic_out[at(r)], channels / L) << "rank " << r;
            EXPECT_EQ(nic_in[at(r)], channels / L) << "rank " << r;
          }
        // The ring on these orders still computes the exact sum on every rank.
        const CollParams p{n, 7 * static_cast<uint64_t>(n) + 3, 4, channels, 12, 0};
        const Schedule s = make_schedule("all_reduce", "ring", p, L);
        ASSERT_NO_THROW(validate(s));
        const Buffers in = make_inputs(n, s.count);
        EXPECT_TRUE(check_result(ring, p, in, run_functional(s, in).buffers));
        EXPECT_TRUE(check_result(ring, p, in, run_functional(s, in, 99).buffers));
      }
    }
  // One domain or one rank per domain: the plain ring.
  EXPECT_EQ(rail_ring_orders(4, 4, 2)[1], (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(rail_ring_orders(4, 1, 1)[0], (std::vector<int>{0, 1, 2, 3}));
  // 2 domains x 4, channel 1: enter domain 0 at 1, leave at 2; domain 1 the reverse.
  EXPECT_EQ(rail_ring_orders(8, 4, 2)[1], (std::vector<int>{1, 3, 0, 2, 6, 7, 4, 5}));
}

TEST(AlgorithmTable, HierarchicalAlphaBetaHandComputed) {
  const double al = 2e-6, be = 1e-9, S = 1e6;
  const AlgoInfo& h = algo_info("all_reduce", "hierarchical");
  // 16 = 2 x 8: (14 + 2) alpha + (1.75 + 2 * 0.5 / 8) S beta = 32 us + 1875 us.
  EXPECT_NEAR(alpha_beta_time_s(h, 16, S, al, be, 8), 1907e-6, 1e-12);
  // One domain: the ring's volume, 2(n-1) alpha.
  EXPECT_NEAR(alpha_beta_time_s(h, 8, S, al, be, 0), 1778e-6, 1e-12);
  // One rank per domain: a ring across the domains.
  EXPECT_NEAR(alpha_beta_time_s(h, 8, S, al, be, 1), 1778e-6, 1e-12);
  EXPECT_TRUE(throws_internal([&] { alpha_beta_time_s(h, 6, S, al, be, 4); }, "does not divide"));
}

}  // namespace
}  // namespace fabricsim::coll
