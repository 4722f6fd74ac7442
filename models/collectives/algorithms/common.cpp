// Shared pieces of the algorithm library: ranges, tags, parameter checks and the
// dependency derivation of algorithms.h ("Dependencies").
#include "models/collectives/algorithms/common.h"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "models/core/errors.h"

namespace fabricsim::coll::detail {

void bad_param(const char* who, const std::string& what) {
  throw InternalError(std::string(who) + ": " + what);
}

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

Tags::Tags(const char* who, int channels, uint64_t slots, uint64_t chunk, uint64_t largest_range)
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

void WriteTracker::record(Range r, RecvMode mode, uint32_t op) {
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

std::vector<uint32_t> WriteTracker::writers(Range r) const {
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

void WriteTracker::split_at(uint64_t x) {
  auto it = segs_.upper_bound(x);
  if (it == segs_.begin()) return;
  --it;
  if (it->first < x && x < it->second.end) {
    Segment tail{it->second.end, it->second.writers};
    it->second.end = x;
    segs_.emplace_hint(std::next(it), x, std::move(tail));
  }
}

uint32_t RankBuilder::send(int peer, uint64_t tag, Range r, const std::vector<uint32_t>& extra,
                          int32_t stream, int32_t channel) {
  Op op;
  op.kind = OpKind::kSend;
  op.stream = stream;
  op.channel = channel;
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

uint32_t RankBuilder::nvls_reduce(uint64_t tag, Range r, std::vector<uint32_t> deps) {
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

uint32_t RankBuilder::nvls_store(uint64_t tag, Range r) {
  Op op;
  op.kind = OpKind::kNvlsStore;
  op.tag = tag;
  op.offset = r.offset;
  op.count = r.count;
  op.deps = writes_.writers(r);
  return push(std::move(op));
}

uint32_t RankBuilder::recv(int peer, uint64_t tag, Range r, RecvMode mode, int32_t stream,
                          int32_t channel) {
  Op op;
  op.kind = OpKind::kRecv;
  op.stream = stream;
  op.channel = channel;
  op.peer = peer;
  op.tag = tag;
  op.offset = r.offset;
  op.count = r.count;
  op.mode = mode;
  const uint32_t index = push(std::move(op));
  writes_.record(r, mode, index);
  return index;
}

uint32_t RankBuilder::push(Op&& op) {
  if (ops_.size() >= std::numeric_limits<uint32_t>::max())
    bad_param(who_, "rank program exceeds 2^32-1 ops; raise chunk_bytes");
  ops_.push_back(std::move(op));
  return static_cast<uint32_t>(ops_.size() - 1);
}

Schedule empty_schedule(const char* algorithm, int ranks, uint64_t buffer) {
  Schedule s;
  s.algorithm = algorithm;
  s.ranks = ranks;
  s.count = buffer;
  s.programs.resize(static_cast<std::size_t>(ranks));
  return s;
}

std::vector<std::vector<Range>> block_major(uint64_t count, int n, int channels) {
  std::vector<std::vector<Range>> sub;
  sub.reserve(static_cast<std::size_t>(n));
  for (const Range& blk : split_range(Range{0, count}, n))
    sub.push_back(split_range(blk, channels));
  return sub;
}

int ceil_log2(int n) {
  int depth = 0;
  while ((int64_t{1} << depth) < n) ++depth;
  return depth;
}

int floor_log2(int n) {
  int lg = 0;
  while ((int64_t{2} << lg) <= n) ++lg;
  return lg;
}

}  // namespace fabricsim::coll::detail
