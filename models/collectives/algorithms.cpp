// Collective algorithm library: schedule generators, algorithm table, alpha-beta costs and
// the dispatcher. Layouts, steps, dependencies, tags and program order are documented in
// algorithms.h.
#include "models/collectives/algorithms.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <iterator>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "models/core/errors.h"

namespace fabricsim::coll {

namespace {

[[noreturn]] void bad_param(const char* who, const std::string& what) {
  throw InternalError(std::string(who) + ": " + what);
}

uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// r mod n in [0, n) for any int r.
int mod_n(int r, int n) { return ((r % n) + n) % n; }

// A contiguous element range of a rank buffer.
struct Range {
  uint64_t offset = 0;
  uint64_t count = 0;
};

// The ranges of split_even(r.count, parts), laid out contiguously from r.offset.
std::vector<Range> split_range(Range r, int parts) {
  std::vector<Range> out;
  out.reserve(static_cast<std::size_t>(parts));
  uint64_t off = r.offset;
  for (uint64_t size : split_even(r.count, parts)) {
    out.push_back(Range{off, size});
    off += size;
  }
  return out;
}

uint64_t num_pieces(Range r, uint64_t chunk) { return ceil_div(r.count, chunk); }

// Piece j of r: chunk elements from r.offset + j*chunk, the last one possibly shorter.
Range piece_of(Range r, uint64_t j, uint64_t chunk) {
  return Range{r.offset + j * chunk, std::min(chunk, r.count - j * chunk)};
}

// Checks the parameters every generator shares and returns the piece size in elements.
uint64_t check_params(const char* who, const CollParams& p, bool rooted) {
  if (p.ranks < 1) bad_param(who, "ranks must be >= 1 (got " + std::to_string(p.ranks) + ")");
  if (p.channels < 1)
    bad_param(who, "channels must be >= 1 (got " + std::to_string(p.channels) + ")");
  if (p.elem_bytes == 0) bad_param(who, "elem_bytes must be >= 1");
  if (p.chunk_bytes == 0) bad_param(who, "chunk_bytes must be > 0");
  if (rooted && (p.root < 0 || p.root >= p.ranks))
    bad_param(who, "root " + std::to_string(p.root) + " out of range [0, " +
                       std::to_string(p.ranks) + ")");
  return ring_chunk_elems(RingParams{p.ranks, p.count, p.elem_bytes, p.channels, p.chunk_bytes});
}

// Tag layout ((c * slots + s) << 32) | j shared by every generator (algorithms.h).
class Tags {
 public:
  Tags(const char* who, int channels, uint64_t slots, uint64_t chunk, uint64_t largest_range)
      : slots_(slots) {
    if (static_cast<uint64_t>(channels) * slots > (1ull << 32))
      bad_param(who, "channels * " + std::to_string(slots) +
                         " steps = " + std::to_string(static_cast<uint64_t>(channels) * slots) +
                         " does not fit the 32-bit step field of the tag");
    if (ceil_div(largest_range, chunk) > (1ull << 32))
      bad_param(who, "a message range of " + std::to_string(largest_range) +
                         " elements needs more than 2^32 chunks of " + std::to_string(chunk) +
                         " elements; raise chunk_bytes");
  }
  uint64_t operator()(int c, uint64_t s, uint64_t j) const {
    return ((static_cast<uint64_t>(c) * slots_ + s) << 32) | j;
  }

 private:
  uint64_t slots_;
};

// Which recvs of one rank last wrote each element, in program order: per element the
// latest kCopy recv and every kReduceSum recv after it. Kept as disjoint segments
// start -> (end, writers); elements in no segment were never written (input data).
class WriteTracker {
 public:
  void record(Range r, RecvMode mode, uint32_t op) {
    if (r.count == 0) return;
    const uint64_t end = r.offset + r.count;
    split_at(r.offset);
    split_at(end);
    uint64_t pos = r.offset;
    auto it = segs_.lower_bound(pos);
    while (pos < end) {
      if (it == segs_.end() || it->first > pos) {  // a gap: never written before
        const uint64_t gap_end = it == segs_.end() ? end : std::min(end, it->first);
        it = std::next(segs_.emplace_hint(it, pos, Segment{gap_end, {op}}));
        pos = gap_end;
        continue;
      }
      // it->first == pos and, after split_at(end), the segment ends at or before end.
      if (mode == RecvMode::kCopy)
        it->second.writers.assign(1, op);
      else
        it->second.writers.push_back(op);
      pos = it->second.end;
      ++it;
    }
  }

  // Sorted, unique recvs that last wrote any element of r.
  std::vector<uint32_t> writers(Range r) const {
    std::vector<uint32_t> out;
    if (r.count == 0) return out;
    const uint64_t end = r.offset + r.count;
    auto it = segs_.upper_bound(r.offset);
    if (it != segs_.begin() && std::prev(it)->second.end > r.offset) --it;
    for (; it != segs_.end() && it->first < end; ++it)
      out.insert(out.end(), it->second.writers.begin(), it->second.writers.end());
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

 private:
  struct Segment {
    uint64_t end = 0;
    std::vector<uint32_t> writers;
  };
  // Makes x a segment boundary if it falls strictly inside a segment.
  void split_at(uint64_t x) {
    auto it = segs_.upper_bound(x);
    if (it == segs_.begin()) return;
    --it;
    if (it->first < x && x < it->second.end) {
      Segment tail{it->second.end, it->second.writers};
      it->second.end = x;
      segs_.emplace_hint(std::next(it), x, std::move(tail));
    }
  }
  std::map<uint64_t, Segment> segs_;
};

// Appends one rank's ops in program order; derives every send's deps from the recvs
// recorded so far (the rule in algorithms.h).
class RankBuilder {
 public:
  RankBuilder(const char* who, std::vector<Op>& ops) : who_(who), ops_(ops) {}

  uint32_t send(int peer, uint64_t tag, Range r, const std::vector<uint32_t>& extra = {}) {
    Op op;
    op.kind = OpKind::kSend;
    op.peer = peer;
    op.tag = tag;
    op.offset = r.offset;
    op.count = r.count;
    op.deps = writes_.writers(r);
    if (!extra.empty()) {
      op.deps.insert(op.deps.end(), extra.begin(), extra.end());
      std::sort(op.deps.begin(), op.deps.end());
      op.deps.erase(std::unique(op.deps.begin(), op.deps.end()), op.deps.end());
    }
    return push(std::move(op));
  }

  // An in-switch reduction of r over the rank's NVLS group: it writes r (like a kCopy
  // recv), so later sends of r depend on it. `deps`: flow-control deps only (the ranges
  // it reads are input on every rank of the group; see allreduce_hierarchical_nvls).
  uint32_t nvls_reduce(uint64_t tag, Range r, std::vector<uint32_t> deps) {
    Op op;
    op.kind = OpKind::kNvlsReduce;
    op.tag = tag;
    op.offset = r.offset;
    op.count = r.count;
    op.deps = std::move(deps);
    const uint32_t index = push(std::move(op));
    writes_.record(r, RecvMode::kCopy, index);
    return index;
  }

  // A multicast store of r to the rank's NVLS group; deps by the rule, as a send.
  uint32_t nvls_store(uint64_t tag, Range r) {
    Op op;
    op.kind = OpKind::kNvlsStore;
    op.tag = tag;
    op.offset = r.offset;
    op.count = r.count;
    op.deps = writes_.writers(r);
    return push(std::move(op));
  }

  uint32_t recv(int peer, uint64_t tag, Range r, RecvMode mode) {
    Op op;
    op.kind = OpKind::kRecv;
    op.peer = peer;
    op.tag = tag;
    op.offset = r.offset;
    op.count = r.count;
    op.mode = mode;
    const uint32_t index = push(std::move(op));
    writes_.record(r, mode, index);
    return index;
  }

 private:
  uint32_t push(Op&& op) {
    if (ops_.size() >= std::numeric_limits<uint32_t>::max())
      bad_param(who_, "rank program exceeds 2^32-1 ops; raise chunk_bytes");
    ops_.push_back(std::move(op));
    return static_cast<uint32_t>(ops_.size() - 1);
  }
  const char* who_;
  std::vector<Op>& ops_;
  WriteTracker writes_;
};

Schedule empty_schedule(const char* algorithm, int ranks, uint64_t buffer) {
  Schedule s;
  s.algorithm = algorithm;
  s.ranks = ranks;
  s.count = buffer;
  s.programs.resize(static_cast<std::size_t>(ranks));
  return s;
}

std::vector<Op>& ops_of(Schedule& s, int r) { return s.programs[static_cast<std::size_t>(r)].ops; }

// sub[b][c]: channel c's part of block b of [0, count) -- the block-major layout.
std::vector<std::vector<Range>> block_major(uint64_t count, int n, int channels) {
  std::vector<std::vector<Range>> sub;
  sub.reserve(static_cast<std::size_t>(n));
  for (const Range& blk : split_range(Range{0, count}, n))
    sub.push_back(split_range(blk, channels));
  return sub;
}

// Both halves of the ring all-reduce, shifted so that block r ends on rank r.
Schedule ring_half(const CollParams& p, bool reduce_scatter) {
  const char* who = reduce_scatter ? "reduce_scatter_ring" : "all_gather_ring";
  const uint64_t chunk = check_params(who, p, false);
  const int n = p.ranks;
  Schedule sched = empty_schedule("ring", n, p.count);
  if (n == 1) return sched;
  const auto sub = block_major(p.count, n, p.channels);
  const Tags tags(who, p.channels, static_cast<uint64_t>(n - 1), chunk, sub[0][0].count);
  const RecvMode mode = reduce_scatter ? RecvMode::kReduceSum : RecvMode::kCopy;
  const std::size_t nch = static_cast<std::size_t>(p.channels);
  for (int r = 0; r < n; ++r) {
    RankBuilder rb(who, ops_of(sched, r));
    const int succ = (r + 1) % n;
    const int pred = (r + n - 1) % n;
    for (int s = 0; s + 1 < n; ++s) {
      // Reduce-scatter sends block r-1-s (its own at s = 0, then the one it reduced at
      // s-1); all-gather sends block r-s. Either way it receives the block before it.
      const int send_block = mod_n(reduce_scatter ? r - 1 - s : r - s, n);
      const int recv_block = mod_n(send_block - 1, n);
      const uint64_t step = static_cast<uint64_t>(s);
      for (std::size_t c = 0; c < nch; ++c) {
        const Range blk = sub[static_cast<std::size_t>(send_block)][c];
        for (uint64_t j = 0; j < num_pieces(blk, chunk); ++j)
          rb.send(succ, tags(static_cast<int>(c), step, j), piece_of(blk, j, chunk));
      }
      for (std::size_t c = 0; c < nch; ++c) {
        const Range blk = sub[static_cast<std::size_t>(recv_block)][c];
        for (uint64_t j = 0; j < num_pieces(blk, chunk); ++j)
          rb.recv(pred, tags(static_cast<int>(c), step, j), piece_of(blk, j, chunk), mode);
      }
    }
  }
  return sched;
}

// Pipelined chain through ranks first, first+1, .., first+n-1 (mod n), each piece
// forwarded on arrival; `mode` is how a rank absorbs the piece it receives.
Schedule chain(const char* who, const CollParams& p, int first, RecvMode mode) {
  const uint64_t chunk = check_params(who, p, true);
  const int n = p.ranks;
  Schedule sched = empty_schedule("ring", n, p.count);
  if (n == 1) return sched;
  const std::vector<Range> ch = split_range(Range{0, p.count}, p.channels);
  const Tags tags(who, p.channels, 1, chunk, ch[0].count);
  const uint64_t max_pieces = num_pieces(ch[0], chunk);  // channel 0 is the largest
  for (int r = 0; r < n; ++r) {
    RankBuilder rb(who, ops_of(sched, r));
    const int pos = mod_n(r - first, n);
    for (uint64_t j = 0; j < max_pieces; ++j) {
      for (std::size_t c = 0; c < ch.size(); ++c) {
        if (j >= num_pieces(ch[c], chunk)) continue;
        const Range piece = piece_of(ch[c], j, chunk);
        const uint64_t tag = tags(static_cast<int>(c), 0, j);
        if (pos > 0) rb.recv((r + n - 1) % n, tag, piece, mode);
        if (pos < n - 1) rb.send((r + 1) % n, tag, piece);  // dep: the recv just above
      }
    }
  }
  return sched;
}

// All-to-all messages (shared by pairwise and direct): at step s = 1..n-1 rank r sends
// input block r+s to rank r+s and receives into slot r-s from rank r-s.
Schedule alltoall(const char* who, const char* name, const CollParams& p, bool lockstep) {
  const uint64_t chunk = check_params(who, p, false);
  const int n = p.ranks;
  const uint64_t slot = ceil_div(p.count, static_cast<uint64_t>(n));
  Schedule sched = empty_schedule(name, n, buffer_elems(Collective::kAllToAll, n, p.count));
  if (n == 1) return sched;
  const auto in = block_major(p.count, n, p.channels);  // in[j][c]: input block j, channel c
  const Tags tags(who, p.channels, static_cast<uint64_t>(n), chunk, in[0][0].count);
  const std::size_t nch = static_cast<std::size_t>(p.channels);
  for (int r = 0; r < n; ++r) {
    RankBuilder rb(who, ops_of(sched, r));
    // Output slot of a block from rank `src`: block r's channel parts, moved to the slot.
    auto out_part = [&](int src, std::size_t c) {
      Range part = in[static_cast<std::size_t>(r)][c];
      part.offset +=
          p.count + static_cast<uint64_t>(src) * slot - in[static_cast<std::size_t>(r)][0].offset;
      return part;
    };
    // Lockstep state: op indices of the latest earlier step's send / recv pieces per channel.
    std::vector<std::vector<uint32_t>> last_send(nch), last_recv(nch);
    auto send_step = [&](int s) {
      const int dst = (r + s) % n;
      for (std::size_t c = 0; c < nch; ++c) {
        const Range blk = in[static_cast<std::size_t>(dst)][c];
        std::vector<uint32_t> sent;
        for (uint64_t j = 0; j < num_pieces(blk, chunk); ++j) {
          std::vector<uint32_t> extra;
          if (lockstep) {
            if (!last_send[c].empty())
              extra.push_back(last_send[c][std::min<std::size_t>(j, last_send[c].size() - 1)]);
            if (!last_recv[c].empty())
              extra.push_back(last_recv[c][std::min<std::size_t>(j, last_recv[c].size() - 1)]);
          }
          sent.push_back(rb.send(dst, tags(static_cast<int>(c), static_cast<uint64_t>(s), j),
                                 piece_of(blk, j, chunk), extra));
        }
        if (!sent.empty()) last_send[c] = std::move(sent);
      }
    };
    auto recv_step = [&](int s) {
      const int src = mod_n(r - s, n);
      for (std::size_t c = 0; c < nch; ++c) {
        const Range part = out_part(src, c);
        std::vector<uint32_t> got;
        for (uint64_t j = 0; j < num_pieces(part, chunk); ++j)
          got.push_back(rb.recv(src, tags(static_cast<int>(c), static_cast<uint64_t>(s), j),
                                piece_of(part, j, chunk), RecvMode::kCopy));
        if (!got.empty()) last_recv[c] = std::move(got);
      }
    };
    if (lockstep) {
      for (int s = 1; s < n; ++s) {
        send_step(s);
        recv_step(s);
      }
    } else {
      for (int s = 1; s < n; ++s) send_step(s);
      for (int s = 1; s < n; ++s) recv_step(s);
    }
  }
  return sched;
}

// Tree flow-control window in pieces (algorithms.h, tree).
constexpr uint64_t kTreeWindow = 8;

// NCCL's binary tree (ncclGetBtree): parent of rank r, -1 for the root 0.
int btree_parent(int n, int r) {
  if (r == 0) return -1;
  const int bit = r & -r;  // lowest set bit
  const int up = (r ^ bit) | (bit << 1);
  return up < n ? up : (r ^ bit);
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Generators.

Schedule reduce_scatter_ring(const CollParams& p) { return ring_half(p, true); }
Schedule all_gather_ring(const CollParams& p) { return ring_half(p, false); }

std::vector<int> double_binary_tree_parents(int ranks, int tree) {
  if (ranks < 1)
    throw InternalError("double_binary_tree_parents: ranks must be >= 1 (got " +
                        std::to_string(ranks) + ")");
  if (tree != 0 && tree != 1)
    throw InternalError("double_binary_tree_parents: tree must be 0 or 1 (got " +
                        std::to_string(tree) + ")");
  const int n = ranks;
  std::vector<int> parent(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    int q;
    if (tree == 0) {
      q = btree_parent(n, r);
    } else if (n % 2 == 1) {  // shift: rank r plays tree-0 rank r-1
      const int u = btree_parent(n, mod_n(r - 1, n));
      q = u < 0 ? -1 : (u + 1) % n;
    } else {  // mirror: rank r plays tree-0 rank n-1-r
      const int u = btree_parent(n, n - 1 - r);
      q = u < 0 ? -1 : n - 1 - u;
    }
    parent[static_cast<std::size_t>(r)] = q;
  }
  return parent;
}

Schedule allreduce_tree(const CollParams& p) {
  const char* who = "allreduce_tree";
  const uint64_t chunk = check_params(who, p, false);
  const int n = p.ranks;
  Schedule sched = empty_schedule("tree", n, p.count);
  if (n == 1) return sched;
  // half[c][t]: the part of channel c's range that tree t carries.
  std::vector<std::vector<Range>> half;
  for (const Range& ch : split_range(Range{0, p.count}, p.channels))
    half.push_back(split_range(ch, 2));
  const Tags tags(who, p.channels, 4, chunk, half[0][0].count);
  const uint64_t max_pieces = num_pieces(half[0][0], chunk);  // the largest part
  std::vector<int> parent[2];
  std::vector<std::vector<int>> children[2];
  for (int t = 0; t < 2; ++t) {
    parent[t] = double_binary_tree_parents(n, t);
    children[t].resize(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r)
      if (parent[t][static_cast<std::size_t>(r)] >= 0)
        children[t][static_cast<std::size_t>(parent[t][static_cast<std::size_t>(r)])].push_back(r);
  }
  for (int r = 0; r < n; ++r) {
    RankBuilder rb(who, ops_of(sched, r));
    const std::size_t ur = static_cast<std::size_t>(r);
    // down_recv[c][t][j]: op index of the down recv of piece j (window deps).
    std::vector<std::array<std::vector<uint32_t>, 2>> down_recv(half.size());
    for (uint64_t j = 0; j < max_pieces; ++j) {
      for (std::size_t c = 0; c < half.size(); ++c) {
        for (int t = 0; t < 2; ++t) {
          const Range part = half[c][static_cast<std::size_t>(t)];
          if (j >= num_pieces(part, chunk)) continue;
          const Range piece = piece_of(part, j, chunk);
          const uint64_t up = tags(static_cast<int>(c), 2u * static_cast<uint64_t>(t), j);
          const uint64_t down = tags(static_cast<int>(c), 2u * static_cast<uint64_t>(t) + 1, j);
          const int par = parent[t][ur];
          auto& downs = down_recv[c][static_cast<std::size_t>(t)];
          // Reduce up: sum the children's partial sums, pass the result to the parent; at
          // most kTreeWindow pieces ahead of the results coming back down.
          for (int child : children[t][ur]) rb.recv(child, up, piece, RecvMode::kReduceSum);
          if (par >= 0) {
            std::vector<uint32_t> window;
            if (j >= kTreeWindow) window.push_back(downs[j - kTreeWindow]);
            rb.send(par, up, piece, window);
          }
          // Broadcast down: the root starts from its sum, the others from the parent's copy.
          if (par >= 0) downs.push_back(rb.recv(par, down, piece, RecvMode::kCopy));
          for (int child : children[t][ur]) rb.send(child, down, piece);
        }
      }
    }
  }
  return sched;
}

Schedule allreduce_halving_doubling(const CollParams& p) {
  const char* who = "allreduce_halving_doubling";
  const uint64_t chunk = check_params(who, p, false);
  const int n = p.ranks;
  Schedule sched = empty_schedule("halving_doubling", n, p.count);
  if (n == 1) return sched;
  int k = 0;
  while ((int64_t{2} << k) <= n) ++k;
  const int pw = 1 << k;  // largest power of two <= n
  const int rem = n - pw;
  const uint64_t fold_in = 0, fold_out = 2u * static_cast<uint64_t>(k) + 1;
  const std::vector<Range> ch = split_range(Range{0, p.count}, p.channels);
  // blk[c][b]: core block b of channel c; blocks_range spans blocks [b0, b1).
  std::vector<std::vector<Range>> blk;
  for (const Range& r : ch) blk.push_back(split_range(r, pw));
  auto blocks_range = [&](std::size_t c, int b0, int b1) {
    const Range first = blk[c][static_cast<std::size_t>(b0)];
    const Range last = blk[c][static_cast<std::size_t>(b1 - 1)];
    return Range{first.offset, last.offset + last.count - first.offset};
  };
  const Tags tags(who, p.channels, fold_out + 1, chunk, ch[0].count);
  auto real_rank = [rem](int v) { return v < rem ? 2 * v + 1 : v + rem; };

  for (int r = 0; r < n; ++r) {
    RankBuilder rb(who, ops_of(sched, r));
    // Sends / recvs every piece of one range per channel, channel-major.
    auto send_all = [&](int peer, uint64_t step, const std::vector<Range>& per_ch) {
      for (std::size_t c = 0; c < per_ch.size(); ++c)
        for (uint64_t j = 0; j < num_pieces(per_ch[c], chunk); ++j)
          rb.send(peer, tags(static_cast<int>(c), step, j), piece_of(per_ch[c], j, chunk));
    };
    auto recv_all = [&](int peer, uint64_t step, const std::vector<Range>& per_ch, RecvMode mode) {
      for (std::size_t c = 0; c < per_ch.size(); ++c)
        for (uint64_t j = 0; j < num_pieces(per_ch[c], chunk); ++j)
          rb.recv(peer, tags(static_cast<int>(c), step, j), piece_of(per_ch[c], j, chunk), mode);
    };
    if (r < 2 * rem && r % 2 == 0) {  // folded out: hand the data over, get the result back
      send_all(r + 1, fold_in, ch);
      recv_all(r + 1, fold_out, ch, RecvMode::kCopy);
      continue;
    }
    if (r < 2 * rem) recv_all(r - 1, fold_in, ch, RecvMode::kReduceSum);
    const int v = r < 2 * rem ? r / 2 : r - rem;
    // Recursive halving: distance d = pw/2 .. 1, keep the half of [lo, lo+2d) holding v.
    for (int s = 1; s <= k; ++s) {
      const int d = pw >> s;
      const int lo = v & ~(2 * d - 1);
      const bool keep_low = (v & d) == 0;
      const int send_lo = keep_low ? lo + d : lo;
      const int keep_lo = keep_low ? lo : lo + d;
      std::vector<Range> give, keep;
      for (std::size_t c = 0; c < ch.size(); ++c) {
        give.push_back(blocks_range(c, send_lo, send_lo + d));
        keep.push_back(blocks_range(c, keep_lo, keep_lo + d));
      }
      const int peer = real_rank(v ^ d);
      send_all(peer, static_cast<uint64_t>(s), give);
      recv_all(peer, static_cast<uint64_t>(s), keep, RecvMode::kReduceSum);
    }
    // Recursive doubling: distance d = 1 .. pw/2, exchange the aligned d-block ranges.
    for (int s = 1; s <= k; ++s) {
      const int d = 1 << (s - 1);
      const int mine = v & ~(d - 1);
      const int theirs = (v ^ d) & ~(d - 1);
      std::vector<Range> give, take;
      for (std::size_t c = 0; c < ch.size(); ++c) {
        give.push_back(blocks_range(c, mine, mine + d));
        take.push_back(blocks_range(c, theirs, theirs + d));
      }
      const int peer = real_rank(v ^ d);
      const uint64_t step = static_cast<uint64_t>(k + s);
      send_all(peer, step, give);
      recv_all(peer, step, take, RecvMode::kCopy);
    }
    if (r < 2 * rem) send_all(r - 1, fold_out, ch);
  }
  return sched;
}

Schedule allreduce_direct(const CollParams& p) {
  const char* who = "allreduce_direct";
  const uint64_t chunk = check_params(who, p, false);
  const int n = p.ranks;
  Schedule sched = empty_schedule("direct", n, p.count);
  if (n == 1) return sched;
  std::vector<std::vector<Range>> blk;  // blk[c][b]: block b of channel c
  for (const Range& ch : split_range(Range{0, p.count}, p.channels))
    blk.push_back(split_range(ch, n));
  const Tags tags(who, p.channels, 2, chunk, blk[0][0].count);
  for (int r = 0; r < n; ++r) {
    RankBuilder rb(who, ops_of(sched, r));
    const std::size_t ur = static_cast<std::size_t>(r);
    for (uint64_t phase = 0; phase < 2; ++phase) {
      // Phase 0 sends block j to its owner j; phase 1 sends the owned, summed block r.
      for (int s = 1; s < n; ++s) {
        const int dst = (r + s) % n;
        for (std::size_t c = 0; c < blk.size(); ++c) {
          const Range b = blk[c][phase == 0 ? static_cast<std::size_t>(dst) : ur];
          for (uint64_t j = 0; j < num_pieces(b, chunk); ++j)
            rb.send(dst, tags(static_cast<int>(c), phase, j), piece_of(b, j, chunk));
        }
      }
      for (int s = 1; s < n; ++s) {
        const int src = mod_n(r - s, n);
        for (std::size_t c = 0; c < blk.size(); ++c) {
          const Range b = blk[c][phase == 0 ? ur : static_cast<std::size_t>(src)];
          for (uint64_t j = 0; j < num_pieces(b, chunk); ++j)
            rb.recv(src, tags(static_cast<int>(c), phase, j), piece_of(b, j, chunk),
                    phase == 0 ? RecvMode::kReduceSum : RecvMode::kCopy);
        }
      }
    }
  }
  return sched;
}

namespace {

// The two-level layout shared by hierarchical and hierarchical_nvls (algorithms.h): checks
// domain_size and slices; blk[c][i][b] is domain block b of slice i of channel c and
// sub[c][i][b][k] its sub-block k.
struct TwoLevelLayout {
  int L = 0, N = 0;
  std::vector<std::vector<std::vector<Range>>> blk;
  std::vector<std::vector<std::vector<std::vector<Range>>>> sub;
};

TwoLevelLayout two_level_layout(const char* who, const CollParams& p, int domain_size) {
  const int n = p.ranks;
  TwoLevelLayout t;
  t.L = domain_size == 0 ? n : domain_size;
  if (t.L < 1 || n % t.L != 0)
    bad_param(who, "domain_size " + std::to_string(domain_size) + " does not divide ranks " +
                       std::to_string(n));
  if (p.slices < 1) bad_param(who, "slices must be >= 1 (got " + std::to_string(p.slices) + ")");
  t.N = n / t.L;
  for (const Range& ch : split_range(Range{0, p.count}, p.channels)) {
    t.blk.emplace_back();
    t.sub.emplace_back();
    for (const Range& sl : split_range(ch, p.slices)) {
      t.blk.back().push_back(split_range(sl, t.L));
      t.sub.back().emplace_back();
      for (const Range& b : t.blk.back().back())
        t.sub.back().back().push_back(split_range(b, t.N));
    }
  }
  return t;
}

}  // namespace

Schedule allreduce_hierarchical(const CollParams& p, int domain_size) {
  const char* who = "allreduce_hierarchical";
  const uint64_t chunk = check_params(who, p, false);
  const int n = p.ranks;
  const TwoLevelLayout lay = two_level_layout(who, p, domain_size);
  const int L = lay.L, N = lay.N;
  const auto& blk = lay.blk;
  const auto& sub = lay.sub;
  Schedule sched = empty_schedule("hierarchical", n, p.count);
  if (n == 1) return sched;
  const uint64_t p2 = static_cast<uint64_t>(L - 1);          // first phase-2 step
  const uint64_t p3 = p2 + 2 * static_cast<uint64_t>(N - 1);  // first phase-3 step
  const uint64_t S = p3 + static_cast<uint64_t>(L - 1);       // steps per slice
  const std::size_t M = static_cast<std::size_t>(p.slices);
  const Tags tags(who, p.channels, std::max<uint64_t>(S * M, 1), chunk, blk[0][0][0].count);
  for (int r = 0; r < n; ++r) {
    RankBuilder rb(who, ops_of(sched, r));
    const int k = r / L, l = r % L;
    const int next_local = k * L + (l + 1) % L, prev_local = k * L + mod_n(l - 1, L);
    const int next_dom = ((k + 1) % N) * L + l, prev_dom = mod_n(k - 1, N) * L + l;
    // window[c]: this rank's recvs of the last phase-1 step of the previous slice in
    // channel c; the next slice's first sends wait for them.
    std::vector<std::vector<uint32_t>> window(blk.size());
    auto ub = [](int x) { return static_cast<std::size_t>(x); };
    for (std::size_t i = 0; i < M; ++i) {
      const uint64_t base = S * i;
      // One step: for every channel, send `give(c)` to `to` and receive `take(c)` from
      // `from`; `first` marks the slice's first step (it carries the window deps) and
      // `last1` the last phase-1 step (its recvs become the next slice's window).
      auto step = [&](uint64_t st, int to, int from, RecvMode mode, bool first, bool last1,
                      auto give, auto take) {
        for (std::size_t c = 0; c < blk.size(); ++c) {
          const Range g = give(c);
          static const std::vector<uint32_t> none;
          for (uint64_t j = 0; j < num_pieces(g, chunk); ++j)
            rb.send(to, tags(static_cast<int>(c), base + st, j), piece_of(g, j, chunk),
                    first ? window[c] : none);
        }
        for (std::size_t c = 0; c < blk.size(); ++c) {
          const Range t = take(c);
          if (last1) window[c].clear();
          for (uint64_t j = 0; j < num_pieces(t, chunk); ++j) {
            const uint32_t op =
                rb.recv(from, tags(static_cast<int>(c), base + st, j), piece_of(t, j, chunk), mode);
            if (last1) window[c].push_back(op);
          }
        }
      };
      for (int s = 0; s + 1 < L; ++s)
        step(static_cast<uint64_t>(s), next_local, prev_local, RecvMode::kReduceSum, s == 0,
             s + 2 == L, [&](std::size_t c) { return blk[c][i][ub(mod_n(l - 1 - s, L))]; },
             [&](std::size_t c) { return blk[c][i][ub(mod_n(l - 2 - s, L))]; });
      for (int t = 0; t < 2 * (N - 1); ++t)
        step(p2 + static_cast<uint64_t>(t), next_dom, prev_dom,
             t <= N - 2 ? RecvMode::kReduceSum : RecvMode::kCopy, false, false,
             [&](std::size_t c) { return sub[c][i][ub(l)][ub(mod_n(k - t, N))]; },
             [&](std::size_t c) { return sub[c][i][ub(l)][ub(mod_n(k - 1 - t, N))]; });
      for (int s = 0; s + 1 < L; ++s)
        step(p3 + static_cast<uint64_t>(s), next_local, prev_local, RecvMode::kCopy, false,
             false, [&](std::size_t c) { return blk[c][i][ub(mod_n(l - s, L))]; },
             [&](std::size_t c) { return blk[c][i][ub(mod_n(l - 1 - s, L))]; });
    }
  }
  return sched;
}

Schedule allreduce_hierarchical_nvls(const CollParams& p, int domain_size) {
  const char* who = "allreduce_hierarchical_nvls";
  const uint64_t chunk = check_params(who, p, false);
  const int n = p.ranks;
  const TwoLevelLayout lay = two_level_layout(who, p, domain_size);
  const int L = lay.L, N = lay.N;
  const auto& blk = lay.blk;
  const auto& sub = lay.sub;
  Schedule sched = empty_schedule("hierarchical_nvls", n, p.count);
  sched.nvls_group = L;
  if (n == 1) return sched;
  // Steps per slice: 0 = NVLS reduce, 1 .. 2(N-1) = ring across domains, 2N-1 = store.
  const uint64_t S = 2 * static_cast<uint64_t>(N);
  const std::size_t M = static_cast<std::size_t>(p.slices);
  const Tags tags(who, p.channels, S * M, chunk, blk[0][0][0].count);
  auto ub = [](int x) { return static_cast<std::size_t>(x); };
  for (int r = 0; r < n; ++r) {
    RankBuilder rb(who, ops_of(sched, r));
    const int k = r / L, l = r % L;
    const int next_dom = ((k + 1) % N) * L + l, prev_dom = mod_n(k - 1, N) * L + l;
    // reduces[c]: this rank's kNvlsReduce ops in channel c so far (all slices).
    std::vector<std::vector<uint32_t>> reduces(blk.size());
    for (std::size_t i = 0; i < M; ++i) {
      const uint64_t base = S * i;
      // Phase 1: reduce own block l over the domain, sub-block by sub-block in the order
      // the ring across domains sends them (k, k-1, ..), each cut into pieces; each
      // reduction waits for the one kNvlsWindow earlier in its channel.
      for (std::size_t c = 0; c < blk.size(); ++c) {
        uint64_t j = 0;
        for (int t = 0; t < N; ++t) {
          const Range g = sub[c][i][ub(l)][ub(mod_n(k - t, N))];
          for (uint64_t q = 0; q < num_pieces(g, chunk); ++q, ++j) {
            auto& red = reduces[c];
            std::vector<uint32_t> deps;
            if (red.size() >= kNvlsWindow) deps.push_back(red[red.size() - kNvlsWindow]);
            red.push_back(rb.nvls_reduce(tags(static_cast<int>(c), base, j),
                                         piece_of(g, q, chunk), std::move(deps)));
          }
        }
      }
      // Phase 2: ring all-reduce of block l across the domains (one rail).
      for (int t = 0; t < 2 * (N - 1); ++t) {
        const uint64_t st = base + 1 + static_cast<uint64_t>(t);
        const RecvMode mode = t <= N - 2 ? RecvMode::kReduceSum : RecvMode::kCopy;
        for (std::size_t c = 0; c < blk.size(); ++c) {
          const Range g = sub[c][i][ub(l)][ub(mod_n(k - t, N))];
          for (uint64_t j = 0; j < num_pieces(g, chunk); ++j)
            rb.send(next_dom, tags(static_cast<int>(c), st, j), piece_of(g, j, chunk));
        }
        for (std::size_t c = 0; c < blk.size(); ++c) {
          const Range g = sub[c][i][ub(l)][ub(mod_n(k - 1 - t, N))];
          for (uint64_t j = 0; j < num_pieces(g, chunk); ++j)
            rb.recv(prev_dom, tags(static_cast<int>(c), st, j), piece_of(g, j, chunk), mode);
        }
      }
      // Phase 3: multicast block l to the domain, sub-block by sub-block in the order the
      // ring finishes them (k+1, k, k-1, ..), each cut into pieces; receive every block of
      // the domain (own included) from its owner, in the same order.
      const uint64_t st = base + S - 1;
      auto gather = [&](int owner, auto&& each) {
        for (std::size_t c = 0; c < blk.size(); ++c) {
          uint64_t j = 0;
          for (int t = 0; t < N; ++t) {
            const Range g = sub[c][i][ub(owner)][ub(mod_n(k + 1 - t, N))];
            for (uint64_t q = 0; q < num_pieces(g, chunk); ++q, ++j)
              each(tags(static_cast<int>(c), st, j), piece_of(g, q, chunk));
          }
        }
      };
      gather(l, [&](uint64_t tag, Range g) { rb.nvls_store(tag, g); });
      for (int d = 0; d < L; ++d) {  // from l, l+1, .. (staggered)
        const int q = (l + d) % L;
        gather(q, [&](uint64_t tag, Range g) { rb.recv(k * L + q, tag, g, RecvMode::kCopy); });
      }
    }
  }
  return sched;
}

std::vector<std::vector<int>> rail_ring_orders(int ranks, int domain_size, int channels) {
  if (domain_size < 1 || ranks < 1 || ranks % domain_size != 0)
    throw InternalError("rail_ring_orders: domain_size " + std::to_string(domain_size) +
                        " does not divide ranks " + std::to_string(ranks));
  if (channels < 1)
    throw InternalError("rail_ring_orders: channels must be >= 1 (got " +
                        std::to_string(channels) + ")");
  const int L = domain_size, N = ranks / L;
  std::vector<std::vector<int>> orders(static_cast<std::size_t>(channels));
  for (int c = 0; c < channels; ++c) {
    std::vector<int>& o = orders[static_cast<std::size_t>(c)];
    if (N == 1 || L == 1) {
      for (int r = 0; r < ranks; ++r) o.push_back(r);
      continue;
    }
    const int a = c % L, b = (c + 1) % L, c3 = (c + 2) % L;
    const bool odd = N % 2 == 1 && L >= 3;
    for (int k = 0; k < N; ++k) {
      int e = k % 2 == 0 ? a : b, x = k % 2 == 0 ? b : a;
      if (odd && k == 0) e = c3;
      if (odd && k == N - 1) x = c3;
      o.push_back(k * L + e);
      for (int i = 1; i < L; ++i) {
        const int li = (e + i) % L;
        if (li != x) o.push_back(k * L + li);
      }
      o.push_back(k * L + x);
    }
  }
  return orders;
}

Schedule broadcast_ring(const CollParams& p) {
  return chain("broadcast_ring", p, p.root, RecvMode::kCopy);
}

Schedule reduce_ring(const CollParams& p) {
  // The chain starts after the root and ends on it.
  return chain("reduce_ring", p, p.ranks >= 1 ? mod_n(p.root + 1, p.ranks) : 0,
               RecvMode::kReduceSum);
}

Schedule alltoall_pairwise(const CollParams& p) {
  return alltoall("alltoall_pairwise", "pairwise", p, true);
}

Schedule alltoall_direct(const CollParams& p) {
  return alltoall("alltoall_direct", "direct", p, false);
}

Schedule sendrecv(const CollParams& p) {
  const char* who = "sendrecv";
  const uint64_t chunk = check_params(who, p, false);
  const int n = p.ranks;
  Schedule sched = empty_schedule("direct", n, buffer_elems(Collective::kSendRecv, n, p.count));
  if (n == 1) return sched;
  const std::vector<Range> ch = split_range(Range{0, p.count}, p.channels);
  const Tags tags(who, p.channels, 1, chunk, ch[0].count);
  const uint64_t max_pieces = num_pieces(ch[0], chunk);
  for (int r = 0; r < n; ++r) {
    RankBuilder rb(who, ops_of(sched, r));
    for (uint64_t j = 0; j < max_pieces; ++j)
      for (std::size_t c = 0; c < ch.size(); ++c)
        if (j < num_pieces(ch[c], chunk))
          rb.send((r + 1) % n, tags(static_cast<int>(c), 0, j), piece_of(ch[c], j, chunk));
    for (uint64_t j = 0; j < max_pieces; ++j)
      for (std::size_t c = 0; c < ch.size(); ++c)
        if (j < num_pieces(ch[c], chunk)) {
          Range out = piece_of(ch[c], j, chunk);
          out.offset += p.count;
          rb.recv((r + n - 1) % n, tags(static_cast<int>(c), 0, j), out, RecvMode::kCopy);
        }
  }
  return sched;
}

// ---------------------------------------------------------------------------------------
// NVLS (in-switch reduction and multicast).

namespace {

constexpr uint64_t kNvlsSlots = 2;  // tag step field: 0 = reduce, 1 = store

// Per-rank pieces of a block-per-rank layout: pieces[c] = the pieces of channel c of
// `block` (channel-major: channel c's range is split into n blocks, or block-major: the
// block is split into channels).
struct NvlsLayout {
  std::vector<std::vector<std::vector<Range>>> pieces;  // [rank][channel] -> pieces
};

NvlsLayout nvls_layout(const CollParams& p, uint64_t chunk, bool block_major) {
  NvlsLayout l;
  l.pieces.assign(static_cast<std::size_t>(p.ranks),
                  std::vector<std::vector<Range>>(static_cast<std::size_t>(p.channels)));
  auto cut = [&](Range r, int rank, int c) {
    auto& v = l.pieces[static_cast<std::size_t>(rank)][static_cast<std::size_t>(c)];
    for (uint64_t j = 0; j < num_pieces(r, chunk); ++j) v.push_back(piece_of(r, j, chunk));
  };
  if (block_major) {
    const std::vector<Range> blocks = split_range(Range{0, p.count}, p.ranks);
    for (int q = 0; q < p.ranks; ++q) {
      const std::vector<Range> ch = split_range(blocks[static_cast<std::size_t>(q)], p.channels);
      for (int c = 0; c < p.channels; ++c) cut(ch[static_cast<std::size_t>(c)], q, c);
    }
  } else {
    const std::vector<Range> ch = split_range(Range{0, p.count}, p.channels);
    for (int c = 0; c < p.channels; ++c) {
      const std::vector<Range> blocks = split_range(ch[static_cast<std::size_t>(c)], p.ranks);
      for (int q = 0; q < p.ranks; ++q) cut(blocks[static_cast<std::size_t>(q)], q, c);
    }
  }
  return l;
}

// reduce: rank r reduces its own pieces (each kNvlsReduce depends on the one
// kNvlsWindow pieces earlier in its channel: a bounded number of reductions in flight per
// channel, as NCCL's per-channel slots); store: it multicasts them (after the reduction
// of the piece when `reduce` is also set); every rank receives every rank's stores.
Schedule nvls_schedule(const char* who, const CollParams& p, bool block_major, bool reduce,
                       bool store) {
  const uint64_t chunk = check_params(who, p, false);
  Schedule sched = empty_schedule("nvls", p.ranks, p.count);
  if (p.ranks == 1 || p.count == 0) return sched;
  const NvlsLayout l = nvls_layout(p, chunk, block_major);
  const Tags tag(who, p.channels, kNvlsSlots, chunk, p.count);
  for (int r = 0; r < p.ranks; ++r) {
    std::vector<Op>& ops = sched.programs[static_cast<std::size_t>(r)].ops;
    if (store) {  // recvs first, no deps: posted up front; from r, r+1, .. (staggered)
      for (int k = 0; k < p.ranks; ++k) {
        const int q = mod_n(r + k, p.ranks);
        for (int c = 0; c < p.channels; ++c) {
          const auto& pcs = l.pieces[static_cast<std::size_t>(q)][static_cast<std::size_t>(c)];
          for (uint64_t j = 0; j < pcs.size(); ++j) {
            Op op;
            op.kind = OpKind::kRecv;
            op.peer = q;
            op.tag = tag(c, 1, j);
            op.offset = pcs[j].offset;
            op.count = pcs[j].count;
            op.mode = RecvMode::kCopy;
            ops.push_back(op);
          }
        }
      }
    }
    const auto& mine = l.pieces[static_cast<std::size_t>(r)];
    std::vector<std::vector<uint32_t>> reduce_op(mine.size());
    uint64_t most = 0;
    for (const auto& v : mine) most = std::max<uint64_t>(most, v.size());
    for (uint64_t j = 0; j < most; ++j) {  // piece-major over channels
      for (int c = 0; c < p.channels; ++c) {
        const auto& pcs = mine[static_cast<std::size_t>(c)];
        if (j >= pcs.size()) continue;
        int64_t reduced = -1;  // this piece's kNvlsReduce, if any
        if (reduce) {
          Op op;
          op.kind = OpKind::kNvlsReduce;
          op.tag = tag(c, 0, j);
          op.offset = pcs[j].offset;
          op.count = pcs[j].count;
          if (j >= kNvlsWindow)
            op.deps.push_back(reduce_op[static_cast<std::size_t>(c)][j - kNvlsWindow]);
          reduce_op[static_cast<std::size_t>(c)].push_back(static_cast<uint32_t>(ops.size()));
          reduced = static_cast<int64_t>(ops.size());
          ops.push_back(op);
        }
        if (store) {
          Op op;
          op.kind = OpKind::kNvlsStore;
          op.tag = tag(c, 1, j);
          op.offset = pcs[j].offset;
          op.count = pcs[j].count;
          if (reduced >= 0) op.deps.push_back(static_cast<uint32_t>(reduced));
          ops.push_back(op);
        }
      }
    }
  }
  return sched;
}

}  // namespace

Schedule allreduce_nvls(const CollParams& p) {
  return nvls_schedule("allreduce_nvls", p, /*block_major=*/false, true, true);
}
Schedule reduce_scatter_nvls(const CollParams& p) {
  return nvls_schedule("reduce_scatter_nvls", p, /*block_major=*/true, true, false);
}
Schedule all_gather_nvls(const CollParams& p) {
  return nvls_schedule("all_gather_nvls", p, /*block_major=*/true, false, true);
}

// ---------------------------------------------------------------------------------------
// Table, costs, dispatcher.

const std::vector<AlgoInfo>& algorithm_table() {
  using A = Algorithm;
  using C = Collective;
  static const std::vector<AlgoInfo> table{
      {C::kAllReduce, A::kRing, "all_reduce", "ring", true, false,
       "2(n-1) alpha + 2(n-1)/n S beta"},
      {C::kAllReduce, A::kTree, "all_reduce", "tree", true, false,
       "2 ceil(log2 n) alpha + 2 S beta"},
      {C::kAllReduce, A::kHalvingDoubling, "all_reduce", "halving_doubling", false, false,
       "2 log2(n) alpha + 2(n-1)/n S beta (n a power of two); else, p = 2^floor(log2 n): "
       "(2 log2(p) + 2) alpha + (2(p-1)/p + 2) S beta"},
      {C::kAllReduce, A::kDirect, "all_reduce", "direct", false, false,
       "2 alpha + 2(n-1)/n S beta"},
      {C::kAllReduce, A::kHierarchical, "all_reduce", "hierarchical", true, false,
       "L = domain size, N = n/L: (2(L-1) + 2(N-1)) alpha + (2(L-1)/L + 2(N-1)/(N L)) S beta"},
      {C::kAllReduce, A::kHierarchicalNvls, "all_reduce", "hierarchical_nvls", true, false,
       "L = domain size, N = n/L: 2N alpha + ((L+1)/L + 2(N-1)/(N L)) S beta (NVLS "
       "switches in every domain)"},
      {C::kAllReduce, A::kNvls, "all_reduce", "nvls", true, false,
       "2 alpha + (n+1)/n S beta (in-switch reduction; NVLS switches only)"},
      {C::kReduceScatter, A::kRing, "reduce_scatter", "ring", true, false,
       "(n-1) alpha + (n-1)/n S beta"},
      {C::kReduceScatter, A::kNvls, "reduce_scatter", "nvls", true, false,
       "alpha + S beta (NVLS switches only)"},
      {C::kAllGather, A::kRing, "all_gather", "ring", true, false, "(n-1) alpha + (n-1)/n S beta"},
      {C::kAllGather, A::kNvls, "all_gather", "nvls", true, false,
       "alpha + S beta (NVLS switches only)"},
      {C::kBroadcast, A::kRing, "broadcast", "ring", true, true, "(n-1) alpha + S beta"},
      {C::kReduce, A::kRing, "reduce", "ring", true, true, "(n-1) alpha + S beta"},
      {C::kAllToAll, A::kPairwise, "alltoall", "pairwise", false, false,
       "(n-1) alpha + (n-1)/n S beta"},
      {C::kAllToAll, A::kDirect, "alltoall", "direct", false, false, "alpha + (n-1)/n S beta"},
      {C::kSendRecv, A::kDirect, "sendrecv", "direct", false, false, "alpha + S beta"},
  };
  return table;
}

namespace {

// "all_reduce, reduce_scatter, ..." in table order, for error messages.
std::string known_collectives() {
  std::vector<std::string> names;
  for (const AlgoInfo& a : algorithm_table())
    if (std::find(names.begin(), names.end(), a.collective_name) == names.end())
      names.push_back(a.collective_name);
  std::string out;
  for (const std::string& s : names) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

std::vector<std::string> algorithms_for(const std::string& collective) {
  std::vector<std::string> out;
  for (const AlgoInfo& a : algorithm_table())
    if (collective == a.collective_name) out.push_back(a.name);
  if (out.empty())
    throw InternalError("algorithms_for: unknown collective '" + collective +
                        "' (known: " + known_collectives() + ")");
  return out;
}

const AlgoInfo& algo_info(const std::string& collective, const std::string& algorithm) {
  const std::vector<std::string> names = algorithms_for(collective);  // throws if unknown
  for (const AlgoInfo& a : algorithm_table())
    if (collective == a.collective_name && algorithm == a.name) return a;
  std::string known;
  for (const std::string& s : names) known += (known.empty() ? "" : ", ") + s;
  throw InternalError("unknown algorithm '" + algorithm + "' for collective '" + collective +
                      "' (known: " + known + ")");
}

uint64_t buffer_elems(Collective c, int ranks, uint64_t count) {
  if (ranks < 1)
    throw InternalError("buffer_elems: ranks must be >= 1 (got " + std::to_string(ranks) + ")");
  const uint64_t n = static_cast<uint64_t>(ranks);
  switch (c) {
    case Collective::kAllToAll:
      return count + n * ceil_div(count, n);
    case Collective::kSendRecv:
      return 2 * count;
    default:
      return count;
  }
}

double busbw_factor(Collective c, int n) {
  if (n < 1) throw InternalError("busbw_factor: n must be >= 1 (got " + std::to_string(n) + ")");
  const double dn = static_cast<double>(n);
  switch (c) {
    case Collective::kAllReduce:
      return 2.0 * (dn - 1.0) / dn;
    case Collective::kReduceScatter:
    case Collective::kAllGather:
    case Collective::kAllToAll:
      return (dn - 1.0) / dn;
    case Collective::kBroadcast:
    case Collective::kReduce:
    case Collective::kSendRecv:
      return 1.0;
  }
  throw InternalError("busbw_factor: unknown collective");
}

double busbw_factor(const AlgoInfo& a, int n) { return busbw_factor(a.collective, n); }

double alpha_beta_time_s(const AlgoInfo& a, int n, double bytes, double alpha_s,
                         double beta_s_per_byte, int domain_size) {
  if (n < 1)
    throw InternalError("alpha_beta_time_s: n must be >= 1 (got " + std::to_string(n) + ")");
  if (!(bytes >= 0) || !(alpha_s >= 0) || !(beta_s_per_byte >= 0))
    throw InternalError("alpha_beta_time_s: bytes, alpha and beta must be >= 0");
  if (n == 1) return 0.0;
  const double dn = static_cast<double>(n);
  const double S = bytes, al = alpha_s, be = beta_s_per_byte;
  const double spread = (dn - 1.0) / dn;  // the (n-1)/n share a rank sends in one pass
  const int64_t n64 = n;
  int depth = 0;  // ceil(log2 n)
  while ((int64_t{1} << depth) < n64) ++depth;
  int lg = 0;  // floor(log2 n)
  while ((int64_t{2} << lg) <= n64) ++lg;
  const double p = static_cast<double>(int64_t{1} << lg);
  switch (a.collective) {
    case Collective::kAllReduce:
      switch (a.algorithm) {
        case Algorithm::kRing:
          return 2.0 * (dn - 1.0) * al + 2.0 * spread * S * be;
        case Algorithm::kTree:
          return 2.0 * depth * al + 2.0 * S * be;
        case Algorithm::kHalvingDoubling:
          if ((int64_t{1} << lg) == n64) return 2.0 * lg * al + 2.0 * spread * S * be;
          return (2.0 * lg + 2.0) * al + (2.0 * (p - 1.0) / p + 2.0) * S * be;
        case Algorithm::kDirect:
          return 2.0 * al + 2.0 * spread * S * be;
        case Algorithm::kHierarchical: {
          const int l = domain_size == 0 ? n : domain_size;
          if (l < 1 || n % l != 0)
            throw InternalError("alpha_beta_time_s: domain_size " + std::to_string(domain_size) +
                                " does not divide n " + std::to_string(n));
          const double L = l, N = dn / L;
          return (2.0 * (L - 1.0) + 2.0 * (N - 1.0)) * al +
                 (2.0 * (L - 1.0) / L + 2.0 * (N - 1.0) / (N * L)) * S * be;
        }
        case Algorithm::kHierarchicalNvls: {
          const int l = domain_size == 0 ? n : domain_size;
          if (l < 1 || n % l != 0)
            throw InternalError("alpha_beta_time_s: domain_size " + std::to_string(domain_size) +
                                " does not divide n " + std::to_string(n));
          const double L = l, N = dn / L;
          return 2.0 * N * al + ((L + 1.0) / L + 2.0 * (N - 1.0) / (N * L)) * S * be;
        }
        case Algorithm::kNvls:
          return 2.0 * al + (dn + 1.0) / dn * S * be;
        default:
          break;
      }
      break;
    case Collective::kReduceScatter:
    case Collective::kAllGather:
      if (a.algorithm == Algorithm::kRing) return (dn - 1.0) * al + spread * S * be;
      if (a.algorithm == Algorithm::kNvls) return al + S * be;
      break;
    case Collective::kBroadcast:
    case Collective::kReduce:
      if (a.algorithm == Algorithm::kRing) return (dn - 1.0) * al + S * be;
      break;
    case Collective::kAllToAll:
      if (a.algorithm == Algorithm::kPairwise) return (dn - 1.0) * al + spread * S * be;
      if (a.algorithm == Algorithm::kDirect) return al + spread * S * be;
      break;
    case Collective::kSendRecv:
      if (a.algorithm == Algorithm::kDirect) return al + S * be;
      break;
  }
  throw InternalError(std::string("alpha_beta_time_s: no formula for ") + a.collective_name + "/" +
                      a.name);
}

Schedule make_schedule(const std::string& collective, const std::string& algorithm,
                       const CollParams& p, int domain_size) {
  const AlgoInfo& a = algo_info(collective, algorithm);
  switch (a.collective) {
    case Collective::kAllReduce:
      switch (a.algorithm) {
        case Algorithm::kRing: {
          const RingParams rp{p.ranks, p.count, p.elem_bytes, p.channels, p.chunk_bytes};
          if (domain_size > 0 && domain_size < p.ranks)
            return ring_allreduce(rp, rail_ring_orders(p.ranks, domain_size, p.channels));
          return ring_allreduce(rp);
        }
        case Algorithm::kTree:
          return allreduce_tree(p);
        case Algorithm::kHalvingDoubling:
          return allreduce_halving_doubling(p);
        case Algorithm::kDirect:
          return allreduce_direct(p);
        case Algorithm::kHierarchical:
          return allreduce_hierarchical(p, domain_size);
        case Algorithm::kHierarchicalNvls:
          return allreduce_hierarchical_nvls(p, domain_size);
        case Algorithm::kNvls:
          return allreduce_nvls(p);
        default:
          break;
      }
      break;
    case Collective::kReduceScatter:
      return a.algorithm == Algorithm::kNvls ? reduce_scatter_nvls(p) : reduce_scatter_ring(p);
    case Collective::kAllGather:
      return a.algorithm == Algorithm::kNvls ? all_gather_nvls(p) : all_gather_ring(p);
    case Collective::kBroadcast:
      return broadcast_ring(p);
    case Collective::kReduce:
      return reduce_ring(p);
    case Collective::kAllToAll:
      return a.algorithm == Algorithm::kPairwise ? alltoall_pairwise(p) : alltoall_direct(p);
    case Collective::kSendRecv:
      return sendrecv(p);
  }
  throw InternalError("make_schedule: table entry " + collective + "/" + algorithm +
                      " has no generator");
}

}  // namespace fabricsim::coll
