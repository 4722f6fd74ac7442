// Internal to the algorithm library (models/collectives/algorithms/): the ranges, tags,
// dependency derivation and parameter checks every family's generators share, and the
// register function of every family. Layouts, steps, deps, tags and program order are
// documented in models/collectives/algorithms.h.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/collectives/algorithms.h"
#include "models/collectives/program.h"

namespace fabricsim::coll::detail {

[[noreturn]] void bad_param(const char* who, const std::string& what);

inline uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// r mod n in [0, n) for any int r.
inline int mod_n(int r, int n) { return ((r % n) + n) % n; }

// A contiguous element range of a rank buffer.
struct Range {
  uint64_t offset = 0;
  uint64_t count = 0;
};

// The ranges of split_even(r.count, parts), laid out contiguously from r.offset.
std::vector<Range> split_range(Range r, int parts);

inline uint64_t num_pieces(Range r, uint64_t chunk) { return ceil_div(r.count, chunk); }

// Piece j of r: chunk elements from r.offset + j*chunk, the last one possibly shorter.
inline Range piece_of(Range r, uint64_t j, uint64_t chunk) {
  return Range{r.offset + j * chunk, std::min(chunk, r.count - j * chunk)};
}

// Checks the parameters every generator shares and returns the piece size in elements.
uint64_t check_params(const char* who, const CollParams& p, bool rooted);

// Registry adapters: check_params(who, p, rooted) as an entry's check, and a generator of
// one level (it takes no domain size) as an entry's generator.
inline CheckFn checks_params(const char* who, bool rooted = false) {
  return [who, rooted](const CollParams& p, int) { check_params(who, p, rooted); };
}
inline ScheduleFn one_level(Schedule (*generator)(const CollParams&)) {
  return [generator](const CollParams& p, int) { return generator(p); };
}

// The (n-1)/n share of the data a rank sends in one pass over n ranks, as the alpha-beta
// formulas use it.
inline double spread(int n) {
  const double dn = static_cast<double>(n);
  return (dn - 1.0) / dn;
}

// Tag layout ((c * slots + s) << 32) | j shared by every generator (algorithms.h).
class Tags {
 public:
  // Throws InternalError when channels * slots or the pieces of `largest_range` overflow
  // their 32-bit fields.
  Tags(const char* who, int channels, uint64_t slots, uint64_t chunk, uint64_t largest_range);
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
  void record(Range r, RecvMode mode, uint32_t op);
  // Sorted, unique recvs that last wrote any element of r.
  std::vector<uint32_t> writers(Range r) const;

 private:
  struct Segment {
    uint64_t end = 0;
    std::vector<uint32_t> writers;
  };
  // Makes x a segment boundary if it falls strictly inside a segment.
  void split_at(uint64_t x);
  std::map<uint64_t, Segment> segs_;
};

// Appends one rank's ops in program order; derives every send's deps from the recvs
// recorded so far (the rule in algorithms.h).
class RankBuilder {
 public:
  RankBuilder(const char* who, std::vector<Op>& ops) : who_(who), ops_(ops) {}

  // `extra`: deps beyond the rule (flow control, lockstep); merged, sorted and unique.
  // `stream`: Op::stream, the channel's thread block that issues it (-1: none).
  // `channel`: Op::channel, the channel whose connection carries it (-1: the stream's).
  uint32_t send(int peer, uint64_t tag, Range r, const std::vector<uint32_t>& extra = {},
                int32_t stream = -1, int32_t channel = -1);
  // An in-switch reduction of r over the rank's NVLS group: it writes r (like a kCopy
  // recv), so later sends of r depend on it. `deps`: flow-control deps only (the ranges
  // it reads are input on every rank of the group; see allreduce_hierarchical_nvls).
  uint32_t nvls_reduce(uint64_t tag, Range r, std::vector<uint32_t> deps);
  // A multicast store of r to the rank's NVLS group; deps by the rule, as a send.
  uint32_t nvls_store(uint64_t tag, Range r);
  uint32_t recv(int peer, uint64_t tag, Range r, RecvMode mode, int32_t stream = -1,
                int32_t channel = -1);

 private:
  uint32_t push(Op&& op);
  const char* who_;
  std::vector<Op>& ops_;
  WriteTracker writes_;
};

// A schedule named `algorithm` with `ranks` empty programs over a buffer of `buffer`
// elements.
Schedule empty_schedule(const char* algorithm, int ranks, uint64_t buffer);

inline std::vector<Op>& ops_of(Schedule& s, int r) {
  return s.programs[static_cast<std::size_t>(r)].ops;
}

// sub[b][c]: channel c's part of block b of [0, count) -- the block-major layout.
std::vector<std::vector<Range>> block_major(uint64_t count, int n, int channels);

// The two-level layout shared by hierarchical and hierarchical_nvls (algorithms.h),
// defined in hierarchical.cpp: blk[c][i][b] is domain block b of slice i of channel c and
// sub[c][i][b][k] its sub-block k.
struct TwoLevelLayout {
  int L = 0, N = 0;
  std::vector<std::vector<std::vector<Range>>> blk;
  std::vector<std::vector<std::vector<std::vector<Range>>>> sub;
};
// Checks domain_size (0: one domain; else it must divide the ranks) and slices >= 1.
void check_two_level(const char* who, const CollParams& p, int domain_size);
TwoLevelLayout two_level_layout(const char* who, const CollParams& p, int domain_size);
// Ranks per domain L of a two-level cost on n ranks (domain_size 0: n); throws
// InternalError from alpha_beta_time_s unless L divides n.
int cost_domain_size(int n, int domain_size);

// ceil(log2 n) and floor(log2 n) for n >= 1.
int ceil_log2(int n);
int floor_log2(int n);

// The built-in families, one per file of this folder; registry.cpp calls them in order.
void register_ring(AlgorithmRegistry& r);
void register_tree(AlgorithmRegistry& r);
void register_halving_doubling(AlgorithmRegistry& r);
void register_direct(AlgorithmRegistry& r);
void register_torus(AlgorithmRegistry& r);  // torus.cpp
void register_hierarchical(AlgorithmRegistry& r);
void register_in_switch(AlgorithmRegistry& r);
void register_alltoall(AlgorithmRegistry& r);

}  // namespace fabricsim::coll::detail
