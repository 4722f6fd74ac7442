// Oracles shared by the collective algorithm tests (oracles.h).
#include "tests/unit/algorithms/oracles.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "models/collectives/functional.h"
#include "models/collectives/ring_allreduce.h"

namespace fabricsim::coll::algotest {

using namespace testutil;

namespace {

// Offsets of split_even(total, parts) laid out from `base`.
std::vector<uint64_t> offsets(uint64_t base, const std::vector<uint64_t>& sizes) {
  std::vector<uint64_t> off;
  for (uint64_t s : sizes) {
    off.push_back(base);
    base += s;
  }
  return off;
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

}  // namespace

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

namespace {

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
            // NCCL's tree: in every node of L ranks a chain from the head h = (2c + t) mod L
            // (local h, h+1, ...), the heads joined by the double binary tree of the nodes.
            const auto halves = split_even(cc, 2);
            const int L = domain == 0 ? n : domain, N = n / L;
            for (int t = 0; t < 2; ++t) {
              const int h = (2 * c + t) % L;
              const auto node_par = double_binary_tree_parents(N, t);
              for (int k = 0; k < N; ++k)
                for (int i = 0; i < L; ++i) {
                  const int r = k * L + (h + i) % L;
                  const int par = i > 0 ? k * L + (h + i - 1) % L
                                        : (node_par[at(k)] < 0 ? -1 : node_par[at(k)] * L + h);
                  if (par < 0) continue;
                  add(r, par, halves[at(t)]);
                  add(par, r, halves[at(t)]);
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
          } else if (named(a, "torus")) {
            // Bidirectional rings per dimension (x fastest): the channel's halves go + and
            // -; each dimension reduce-scatters the range the previous ones left, the
            // all-gathers retrace them. Range sizes depend on the coordinates done so far.
            std::vector<int> dims = p.torus;
            int prod = 1;
            for (int d : dims) prod *= d;
            if (dims.empty() || prod != n) dims = {n};
            const auto halves = split_even(cc, 2);
            for (int r = 0; r < n; ++r) {
              std::vector<int> coord, stride;
              for (int d = 0, rest = r, st = 1; d < int(dims.size()); ++d) {
                coord.push_back(rest % dims[at(d)]);
                stride.push_back(st);
                rest /= dims[at(d)];
                st *= dims[at(d)];
              }
              for (int h = 0; h < 2; ++h) {
                uint64_t size = halves[at(h)];
                std::vector<std::pair<int, uint64_t>> stages;  // (dimension, range size)
                for (int d = 0; d < int(dims.size()); ++d) {
                  const int k = dims[at(d)];
                  if (k == 1) continue;
                  stages.push_back({d, size});
                  size = split_even(size, k)[at(coord[at(d)])];
                }
                for (int pass = 0; pass < 2; ++pass)
                  for (const auto& sd : stages) {
                    const int d = sd.first, k = dims[at(d)], l = coord[at(d)];
                    const int to = r + (mod(l + (h == 0 ? 1 : -1), k) - l) * stride[at(d)];
                    const auto b = split_even(sd.second, k);
                    for (int st = 0; st + 1 < k; ++st) {
                      const int blk = pass == 0 ? (h == 0 ? l - 1 - st : l + 1 + st)
                                                : (h == 0 ? l - st : l + st);
                      add(r, to, b[at(mod(blk, k))]);
                    }
                  }
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

}  // namespace

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

namespace {

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
      if (named(a, "torus")) return 2ull * static_cast<uint64_t>(n - 1);  // one dimension
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
  uint64_t torus_steps = 0;  // torus: 2 sum (k - 1) over CollParams::torus when it fits
  int prod = 1;
  for (int k : p.torus) {
    prod *= k;
    torus_steps += 2 * static_cast<uint64_t>(k - 1);
  }
  const uint64_t slots = std::max<uint64_t>(
      1, named(a, "torus") && !p.torus.empty() && prod == p.ranks
             ? torus_steps
             : step_slots(a, p.ranks, domain, p.slices));
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

}  // namespace

// ---------------------------------------------------------------------------------------
// The sweep.

void check_config(const AlgoInfo& a, const CollParams& p, bool check_dep_rule, int domain) {
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
        const uint64_t want_msgs = named(a, "halving_doubling") ? 2 * static_cast<uint64_t>(lg) * uc
                                   : named(a, "torus")            ? 4 * (un - 1) * uc  // 2 directions
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

}  // namespace fabricsim::coll::algotest
