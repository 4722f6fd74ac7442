// Collective algorithm library: schedule generators for every collective and algorithm the
// simulator runs, a registry describing them (traits, nccl-tests busbw factor, alpha-beta
// cost, parameter checks) for NCCL-like algorithm selection, and one dispatcher by name.
// Plain data, no SystemC; the ring all-reduce itself lives in ring_allreduce.h and is reached here
// through make_schedule. Each family is one file of algorithms/ (ring, tree,
// halving_doubling, direct, hierarchical, in_switch, alltoall) that registers its entries;
// algorithms/registry.cpp lists the families. Adding an algorithm: its generator, cost and
// check in its family's file and one AlgorithmRegistry::add line there (a new family: a new
// file, declared in algorithms/common.h and called in algorithms/registry.cpp).
//
// ---------------------------------------------------------------------------------------
// Buffers. Every rank has ONE buffer of Schedule::count elements. CollParams::count is the
// per-rank data size of the operation (what nccl-tests calls the size, in elements); the
// buffer equals it except for all-to-all and send/recv, which need separate input and
// output areas:
//
//   collective      CollParams::count = C      Schedule::count   input -> result
//   all_reduce      the vector                 C                 all buffers -> sum on all
//   reduce_scatter  the whole input            C                 all buffers -> block r
//                                                                (summed) on rank r
//   all_gather      the whole output           C                 block r of rank r ->
//                                                                every block on all ranks
//   broadcast       the vector                 C                 root's buffer -> all
//   reduce          the vector                 C                 all buffers -> sum on root
//   alltoall        the input, n blocks        C + n*ceil(C/n)   see below
//   sendrecv        the message                2*C               see below
//
// Blocks: "block b" of a C-element range is the b-th range of split_even(C, n) laid out
// contiguously, so with C = n*block it is [b*block, (b+1)*block); when n does not divide C
// the first C % n blocks are one element larger. Elements outside a rank's documented
// result (the other blocks after a reduce-scatter, non-root buffers after a reduce) hold
// partial sums on return: their content is unspecified.
//
// all-to-all: input block j of rank r is block j of [0, C); it goes to rank j. The output
// area starts at C and has n slots of B = ceil(C/n) elements; slot j of rank r is
// [C + j*B, C + j*B + size(block r)) and receives input block r of rank j (so with
// C = n*block the buffer is 2*n*block: input in the first half, output in the second).
// Slot r of rank r is NOT written: moving a rank's own block is a local copy with no
// fabric traffic and Program has no local-copy op; a consumer that needs it copies it
// itself. The input area, the unused tail of short slots and slot r are left untouched.
//
// sendrecv (nccl-tests sendrecv_perf): every rank sends its input [0, C) to rank (r+1)%n
// and receives the input of rank (r-1+n)%n into [C, 2C); with 2 ranks this is a pairwise
// exchange. With n = 1 there is no traffic (a self-send would be a local copy) and the
// output area is left untouched.
//
// ---------------------------------------------------------------------------------------
// Channels and pieces. `channels` splits the data into independent parallel streams over
// the same peers; `chunk_bytes` cuts every message range into pieces of
// max(1, chunk_bytes / elem_bytes) elements (ring_chunk_elems), the last piece of a range
// possibly shorter; every piece is one send/recv pair, and an empty range has no ops. In
// pipelined algorithms (ring halves, tree, chains) a piece is forwarded as soon as it has
// arrived; in the others pieces only bound the message size, which still lets a step start
// on the first pieces of the previous one.
// Where the result is per block (reduce_scatter, all_gather, alltoall) channel c takes
// range c of split_even(block size, channels) inside every block ("block-major"); in the
// others channel c takes range c of split_even(C, channels) and the algorithm's blocks are
// cut inside it ("channel-major", as ring_allreduce.h).
//
// Tags: ((c * S + s) << 32) | j for channel c, step s in [0, S) and piece j of the message
// range, with S per algorithm (below). Every directed (sender, receiver) pair exchanges at
// most one message per (channel, step, piece), so tags are unique per directed pair.
//
// Dependencies (all generators): recvs have no deps (posted up front). A send depends on
// exactly the recvs of its own rank that last wrote any element of its range before it in
// program order: per element, the latest kCopy recv and every kReduceSum recv after it
// (all of them if there was no copy); elements never written are input and need no dep.
// Sends of alltoall_pairwise have the extra lockstep deps documented there. No
// write-after-read deps are needed: in every algorithm below, a recv that overwrites or
// adds to elements this rank sent earlier carries data that was computed causally after
// that send (the value has travelled through the send), as in ring_allreduce.h. Dep counts are
// small (<= 2 per piece for the rings, chains and tree, <= ~2 log2 n for halving-
// doubling) except allreduce_direct, whose all-gather sends each depend on the n-1 reduce
// recvs of their piece: (n-1)^2 dep edges per piece and rank, meant for small n.
//
// Program order per rank: step-major; within a step all sends, then all recvs, each
// channel-major then piece, as ring_allreduce.h ("step-wise" below); where a step talks to several
// peers (allreduce_direct) sends go to r+1, r+2, .. and recvs come from r-1, r-2, ..,
// each peer's channels and pieces together (staggered, so that no rank is everyone's
// first destination). The single-step pipelined algorithms (tree, chains, sendrecv)
// interleave piece-major instead: piece j of every channel (and tree) before piece j+1,
// so that a rank issuing dep-free sends in program order advances every channel together
// ("piece-major" below).
//
// ---------------------------------------------------------------------------------------
// The algorithms (n = ranks, r = this rank, mod n throughout):
//
// reduce_scatter_ring   S = n-1. Steps s = 0..n-2: send block (r-1-s) to r+1, recv block
//   (r-2-s) from r-1 with kReduceSum; the block sent at s >= 1 is the one reduced at s-1,
//   so after step n-2 rank r holds the full sum of block r. Each rank sends every block
//   but its own once: (n-1)/n of the data. Pipelined, step-wise order.
// all_gather_ring       S = n-1. Steps s = 0..n-2: send block (r-s) to r+1 (own block at
//   s = 0, then the block received at s-1), recv block (r-1-s) from r-1 with kCopy.
//   (These two are the halves of ring all-reduce, shifted so that block r ends on rank r.)
// tree (all_reduce)     S = 4, s = 2*t + phase. NCCL's tree: L = domain_size ranks per
//   node (0: one node of every rank), N = n / L nodes. Channel range c is
//   split_even(.., 2): half t runs on tree (c, t) (tree_parents): inside every node a
//   chain of its L ranks from the head, local index h = (2c + t) mod L (rank k L + h, then
//   h+1, ...: the head of a later position is its predecessor), and across the nodes the
//   heads form the double binary tree of node indices (double_binary_tree_parents over N:
//   tree 0 is NCCL's binary tree, tree 1 its mirror for even N or shift for odd N), so a
//   node's cross-node edges use one local index, one rail, per (channel, tree), and the
//   (channel, tree) pairs rotate it over the node. One node: a chain (2(n-1) steps, as
//   NCCL on one node); one rank per node: the double binary tree. Per piece: phase 0
//   (reduce up) recv from each child with kReduceSum, then send to the parent (deps: those
//   recvs); phase 1 (broadcast down) the root sends its sum to its children (deps: its up
//   recvs), other ranks recv from the parent with kCopy and forward to their children
//   (dep: that recv). Pieces flow independently, so reduce and broadcast of different
//   pieces overlap. Piece-major order; per piece and tree: up recvs, up send, down recv,
//   down sends. Every edge carries each half twice: 2(n-1) * C elements in total.
//   Streams: per (channel, tree) one for the reduce and one for the broadcast (NCCL's
//   split tree kernel). Flow control (the one exception to the dep rule besides pairwise
//   lockstep): the up send of piece j >= 8 also depends on this rank's down recv of piece
//   j-8 of the same channel and tree, so at most 8 pieces per (channel, tree) are on
//   their way up and back (NCCL keeps 8 buffer slots per connection, NCCL_STEPS).
//   Without it every leaf queues all its up sends at launch and its DMA, oldest first,
//   serves them ahead of the forwarding traffic of its other tree, and the resulting
//   incast at inner ranks fills the switch ingress buffers (docs/collectives.md, "Why
//   the tree was slow").
// halving_doubling (all_reduce)  Rabenseifner (Thakur, Rabenseifner, Gropp 2005).
//   p = largest power of two <= n, k = log2 p, rem = n - p, S = 2k + 2. Fold: for
//   r < 2*rem, even r sends its whole channel range to r+1 (step 0, kReduceSum) and sits
//   out; odd r < 2*rem becomes core rank r/2, r >= 2*rem core rank r - rem. Channel range
//   c is cut into p core blocks. Recursive halving, steps s = 1..k, distance d = p >> s:
//   core rank v exchanges with v^d; of its current 2d blocks [lo, lo+2d)
//   (lo = v & ~(2d-1)) it keeps the half holding block v, sends the other half and
//   reduces the partner's copy of the kept half (kReduceSum); after step k rank v holds
//   the full sum of block v. Recursive doubling, steps s = k+1..2k, d = 1 << (s-k-1):
//   v sends its d summed blocks [v & ~(d-1), +d) to v^d and receives the partner's d
//   blocks (kCopy). Fold-out, step 2k+1: odd r < 2*rem sends the whole result to r-1
//   (kCopy). For n = p each rank sends 2(n-1)/n of the data in 2 log2 n messages per
//   channel (one chunk); the fold adds 2*rem whole-vector messages. Step-wise order.
// direct (all_reduce)   S = 2. Channel range c cut into n blocks. Step 0 (reduce-scatter):
//   send block j to rank j for j = r+1, .., r+n-1 in that order, recv block r from every
//   other rank with kReduceSum; step 1 (all-gather): send the summed block r to every
//   other rank (deps: the n-1 reduce recvs of the piece), recv block j from rank j with
//   kCopy. 2(n-1)/n of the data per rank in 2 steps. Step-wise order.
// hierarchical (all_reduce)  L = domain_size (0: n), N = n / L domains, rank r = k L + l
//   (domain k, local index l). S = 2(L-1) + 2(N-1). Channel range c is cut into L domain
//   blocks, domain block b into N sub-blocks. Phase 1, steps s = 0..L-2 (reduce-scatter
//   ring inside the domain, as reduce_scatter_ring on local indices): send domain block
//   (l-1-s) to local l+1, recv block (l-2-s) from local l-1 with kReduceSum; afterwards
//   rank (k, l) holds domain k's sum of block l. Phase 2, steps L-1+t, t = 0..2N-3 (ring
//   all-reduce of block l across domains, among the ranks of local index l: one rail):
//   send sub-block (k-t) of block l to domain k+1, recv sub-block (k-1-t) from domain k-1,
//   kReduceSum for t <= N-2, then kCopy. Phase 3, steps L-1+2(N-1)+s, s = 0..L-2
//   (all-gather ring inside the domain): send block (l-s) to local l+1, recv block
//   (l-1-s) from local l-1 with kCopy. Deps by the common rule, so a piece of one phase
//   waits only for the pieces of the earlier phase it reads. Per rank: 2(L-1)/L of the
//   data inside the domain and 2(N-1)/N of a block (S/L) across: with one NIC per rank,
//   each NIC carries 2(N-1)/(N L) S instead of the flat ring's 2(n-1)/(n L) S.
//   Slices (CollParams::slices = M): a domain's own block comes out of a ring
//   reduce-scatter only in its last step, so with one slice phase 2 waits for almost all
//   of phase 1 and phase 3 for the second half of phase 2. With M > 1, channel range c is
//   first cut into M consecutive slices (split_even), and each slice runs the three
//   phases above on its own range, with steps i*S' + s for slice i, S' = 2(L-1) + 2(N-1)
//   (so S = M S'). Slices form a pipeline across the levels: the sends of slice i >= 1's
//   first step (the one exception to the dep rule here) also depend on this rank's recvs
//   of the last phase-1 step of slice i-1 in the same channel, so phase 1 of slice i runs
//   on the domain links while slice i-1 crosses the domains and slice i-2 is gathered
//   (a window of one slice in phase 1, as NCCL's slot-based flow control bounds what a
//   channel has in flight). Slice-major, then step-wise order.
// broadcast (ring)      S = 1. Pipelined chain from the root: position q = (r-root) mod n,
//   position q < n-1 sends every piece to r+1, position q > 0 first receives it from r-1
//   with kCopy (the send depends on that recv). (n-1) * C elements. Piece-major order
//   (recv before send per piece).
// reduce (ring)         S = 1. Pipelined chain to the root: position q = (r-root-1) mod n
//   (the root is last, q = n-1; q = 0 is rank root+1); q > 0 receives every piece from
//   r-1 with kReduceSum, q < n-1 then sends it to r+1 (dep: that recv; q = 0 sends its
//   input). (n-1) * C elements. Piece-major order.
// pairwise (alltoall)   S = n, s = (dest - src) mod n. Steps s = 1..n-1: send input block
//   (r+s) to rank r+s, recv from rank (r-s) into slot (r-s). Lockstep by pieces: send
//   piece j of step s in channel c also depends on piece min(j, last) of the send and of
//   the recv of the latest earlier step that had one in channel c, so a rank talks to
//   one or two peers at a time and steps overlap only at piece granularity. Step-wise
//   order. (n-1)/n of the input per rank.
// direct (alltoall)     Same messages and tags as pairwise, no deps at all: every block is
//   in flight at once. Sends to r+1, r+2, .. (staggered), then recvs from r-1, r-2, ...
// direct (sendrecv)     S = 1. Send every piece of [0, C) to r+1, recv every piece from
//   r-1 into [C, 2C) with kCopy; no deps. Piece-major order (sends, then recvs).
//
// Schedule::algorithm is the algorithm name ("ring", "tree", "halving_doubling",
// "direct", "pairwise"), like ring_allreduce's "ring". n = 1 gives empty programs (the
// buffer already holds the result) and count 0 gives no ops. Generators throw
// InternalError when a parameter is out of range (callers validate user input first and
// report InputError).
#pragma once
#include <cstdint>
#include <functional>
#include <list>
#include <string>
#include <vector>

#include "models/collectives/program.h"
#include "models/collectives/ring_allreduce.h"

namespace fabricsim::coll {

struct CollParams {
  int ranks = 0;             // n >= 1
  uint64_t count = 0;        // per-rank data size in elements (table above)
  uint32_t elem_bytes = 0;   // bytes per element, >= 1
  int channels = 1;          // >= 1, parallel streams over disjoint parts of the data
  uint64_t chunk_bytes = 0;  // piece size in bytes, > 0 (rounded down to whole elements,
                             // at least 1 element), as RingParams
  int root = 0;              // broadcast and reduce: root rank in [0, ranks); else ignored
  int slices = 1;            // all_reduce hierarchical and hierarchical_nvls: >= 1 slices
                             // per channel, pipelined across the levels (see the table
                             // above); must be 1 for make_schedule of any other algorithm
                             // (has_levels); the other generators ignore it
  int loop_slices = 0;       // ring family (all_reduce ring, reduce_scatter and all_gather
                             // rings): 0, or NCCL's loop order with this many pieces per
                             // chunk (ring_allreduce.h RingParams::loop_slices)
  // Rings from the topology (not owned; null or empty: none): channel c of the ring family
  // (all_reduce ring, reduce_scatter and all_gather rings, the broadcast and reduce
  // chains) runs on (*rings)[c % size], a permutation of the ranks, and the tree's chain
  // inside a single node follows the ring of its (channel, tree) (tree_parents). Without
  // them: rail_ring_orders on two-level systems, else 0, 1, .., n-1.
  const std::vector<std::vector<int>>* rings = nullptr;
  int rank_limit = 0;        // > 0: the ring and hierarchical all-reduce generators build
                             // the programs of ranks [0, rank_limit) only and leave the
                             // others empty (the flow level's folded runs, which run a
                             // period of ranks, and auto's cost by rank classes,
                             // cost.h); the other generators ignore it
  // all_reduce tree: shrink the piece as NCCL does for Tree/Simple (enqueue.cc, "Optimize
  // chunkSize / nSteps"): with D the tree's depth ((L - 1) + ceil(log2 N)) and a stream
  // (channel, tree; NCCL's channel) of V bytes, halve the piece while V / piece < 8 D and
  // piece > 128 KiB, then while V / piece < 4 D and piece > 64 KiB, then while V / piece <
  // D and piece > 32 KiB, so that a stream has enough pieces to fill its 2 D hops. Set by
  // the protocol model for Simple (WorkloadSpec::coll_params); the other generators ignore it.
  bool tree_nccl_chunks = false;
  // (nccl_tree_chunk_bytes below is that rule.)
  // torus algorithms: the torus the ranks form, sizes per dimension (x first), ranks
  // numbered x fastest; empty (or a product other than ranks): one ring of all ranks.
  std::vector<int> torus = {};
};

// Generators (layout, steps, deps, tags and order in the header comment).
// The ring family runs each channel on its ring (CollParams::rings, or with domain_size in
// (0, ranks) rail_ring_orders, or 0..n-1).
Schedule reduce_scatter_ring(const CollParams& p, int domain_size = 0);
Schedule all_gather_ring(const CollParams& p, int domain_size = 0);
Schedule allreduce_tree(const CollParams& p, int domain_size = 0);
Schedule allreduce_halving_doubling(const CollParams& p);
Schedule allreduce_direct(const CollParams& p);
// Bidirectional rings per dimension of CollParams::torus (algorithms/torus.cpp).
Schedule allreduce_torus(const CollParams& p);
// domain_size: ranks per domain (node) of a two-level system, ranks numbered
// domain-major (rank = domain * domain_size + local index); 0 = one domain holding every
// rank; must divide ranks.
Schedule allreduce_hierarchical(const CollParams& p, int domain_size);
Schedule broadcast_ring(const CollParams& p, int domain_size = 0);
Schedule reduce_ring(const CollParams& p, int domain_size = 0);
// On domains of domain_size ranks (0 < domain_size < ranks) every rank takes its peers
// node by node (peer_order in alltoall.cpp): in each round the ranks of a node send to
// distinct ranks of one other node, one per rail.
Schedule alltoall_pairwise(const CollParams& p, int domain_size = 0);
Schedule alltoall_direct(const CollParams& p, int domain_size = 0);
Schedule sendrecv(const CollParams& p);
// In-switch (NVLS) algorithms: need switches with in-switch reduction and multicast that
// every rank is linked to (the engine and the config checks enforce it).
//   all_reduce nvls   channel-major like ring_allreduce.h: channel c's range is cut into n blocks,
//     rank r owns block r. Per piece of its block: kNvlsReduce (the switches read the
//     piece from every rank, reduce it and return the sum), then kNvlsStore (multicast of
//     the sum to every rank, this one included); every rank posts a kRecv (copy) for
//     every piece of every block. Tags: slot 0 = reduce, slot 1 = store. A reduce waits
//     for the one kNvlsWindow pieces earlier in its channel (bounded reductions in
//     flight). Per rank and direction on the wire: S (reads answered) + S/n (results) in
//     the reduce half, S/n (stores) + S (replicas) in the other: (n+1)/n S, against
//     2(n-1)/n S for the ring.
//   reduce_scatter nvls  block-major (block r, then channels inside it): rank r reduces
//     its block with kNvlsReduce; its answers to the switches' reads are S per rank.
//   all_gather nvls      block-major: rank r multicasts its block; every rank receives
//     every block. Rank r's store of piece j of a channel waits for its kRecv of piece
//     j - kNvlsStoreSlots of that channel from every rank (NCCL's NVLS FIFO: a slot is
//     written again once the receivers have taken it), so the switches' egress queues
//     hold at most a few pieces per channel and source, not the block.
constexpr uint64_t kNvlsWindow = 2;  // reductions in flight per channel and rank
Schedule allreduce_nvls(const CollParams& p);
Schedule reduce_scatter_nvls(const CollParams& p);
Schedule all_gather_nvls(const CollParams& p);
//   all_reduce hierarchical_nvls  NCCL's multi-node NVLS: hierarchical (above) with the
//     domain phases done by the domain's NVLS switches. L, N, blocks, sub-blocks and
//     slices as hierarchical; Schedule::nvls_group = L. Steps per slice S' = 2N: step 0,
//     rank (k, l) reduces its domain block l piece by piece with kNvlsReduce over its
//     domain (each reduce also waits for the one kNvlsWindow earlier in its channel,
//     across slices); steps 1 .. 2(N-1), the ring all-reduce of block l across domains as
//     hierarchical phase 2 (its sends depend on the reduces by the rule: a reduce writes
//     its range); step 2N-1, kNvlsStore of block l's pieces to the domain, and kRecv
//     (copy) of every domain block q from rank (k, q), own block included, from l, l+1, ..
//     Per rank on its domain links: S (reads answered) + S/L (results) + S/L (stores) +
//     S (replicas), so (L+1)/L S each way instead of hierarchical's 2(L-1)/L S; across,
//     2(N-1)/N of a block, as hierarchical. Slice-major order. Needs NVLS switches linked
//     to exactly the ranks of each domain (config checks).
Schedule allreduce_hierarchical_nvls(const CollParams& p, int domain_size);
// Per-channel ring orders for a ring all-reduce on `ranks` = N domains x L ranks
// (L = domain_size) whose inter-domain links join equal local indices only (rails: local
// index i of every node has its NIC on rail switch i). Channel c's ring enters every
// domain at one local index and leaves it at another, and crosses to the next domain on
// the rail it left by: domain k is entered at e_k and left at x_k with e_{k+1} = x_k
// (rail-aligned), e_0 = x_{N-1}; inside a domain it visits e_k, then the other local
// indices in increasing cyclic order from e_k + 1, then x_k. Rails: a = c mod L,
// b = (c+1) mod L; N even: even domains are entered at a and left at b, odd ones the
// reverse; N odd (needs L >= 3): as N even for domains 0..N-2, but domain N-1 is left at
// c3 = (c+2) mod L and domain 0 entered at c3. So for N even every rail's NIC carries
// channels/L channels each way (with channels a multiple of L). Identity orders when
// N = 1 or L = 1; for N odd with L = 2 the rail-aligned ring does not exist and the
// N-even scheme is used (its closing hop joins different local indices). Throws
// InternalError unless domain_size >= 1 divides ranks.
std::vector<std::vector<int>> rail_ring_orders(int ranks, int domain_size, int channels);

// Parent of every rank in tree `tree` (0 or 1) of the double binary tree over `ranks`
// ranks, -1 for the root. Tree 0 is NCCL's binary tree (ncclGetBtree): rank 0 is the root
// with the single child 2^floor(log2(n-1)); another rank r with lowest set bit b has parent
// (r ^ b) | 2b, or r ^ b when that is >= n. Tree 1 is tree 0 mirrored (r -> n-1-r) for even
// n and shifted (r -> (r+1) % n) for odd n (ncclGetDtree). Depth ceil(log2 n); every rank
// has at most 2 children. Throws InternalError for ranks < 1 or tree not 0/1.
std::vector<int> double_binary_tree_parents(int ranks, int tree);
// NCCL's tree over `ranks` in nodes of `domain_size` (0: one node): the parent of every
// rank in tree `tree` (0 or 1) of channel `channel`, -1 for the root (the tree above).
// tree_head is the local index of every node's chain head: (2 channel + tree) mod L. On
// one node with `rings` (CollParams::rings) the chain runs along ring (2 channel + tree)
// mod rings from its element at the head index. Throws InternalError unless domain_size
// divides ranks.
std::vector<int> tree_parents(int ranks, int domain_size, int channel, int tree,
                              const std::vector<std::vector<int>>* rings = nullptr);
int tree_head(int domain_size, int channel, int tree);

// ---------------------------------------------------------------------------------------
// Algorithm registry, for dispatch, selection and reporting.

enum class Collective : uint8_t {
  kAllReduce,
  kReduceScatter,
  kAllGather,
  kBroadcast,
  kReduce,
  kAllToAll,
  kSendRecv
};

// Traits of an algorithm, or-ed together for algo_entry (AlgoInfo's flags).
enum AlgoTrait : unsigned {
  kPipelined = 1u << 0,  // pieces are forwarded as they arrive
  kRooted = 1u << 1,     // uses CollParams::root
  kInSwitch = 1u << 2,   // reduces or multicasts in NVLS switches
  kLevels = 1u << 3,     // two levels (domains) that CollParams::slices pipelines
  kNccl = 1u << 4,       // NCCL has it: a candidate of `auto`, which chooses as NCCL does
  kTorus = 1u << 5,      // made for ranks that form a torus (CollParams::torus): an auto
                         // candidate only where the topology declares one
};

// An algorithm's schedule generator: its schedule for p on ranks numbered domain-major in
// domains of `domain_size` ranks (0: one domain; see make_schedule).
using ScheduleFn = std::function<Schedule(const CollParams& p, int domain_size)>;
// Its alpha-beta time for n >= 2 ranks (see alpha_beta_time_s, which checks the arguments
// and answers n = 1 itself).
using AlphaBetaFn = std::function<double(int n, double bytes, double alpha_s,
                                         double beta_s_per_byte, int domain_size)>;
// Its parameter check: throws InternalError when p or domain_size is out of range for it.
using CheckFn = std::function<void(const CollParams& p, int domain_size)>;

// One (collective, algorithm) of the registry.
struct AlgoInfo {
  Collective collective = Collective::kAllReduce;
  const char* collective_name = "";  // nccl-tests name, set from `collective` by
                                     // algo_entry and AlgorithmRegistry::add: "all_reduce",
                                     // "reduce_scatter", "all_gather", "broadcast",
                                     // "reduce", "alltoall", "sendrecv"
  const char* name = "";             // "ring", "tree", "halving_doubling", "direct", ...
  bool pipelined = false;            // pieces are forwarded as they arrive (see above)
  bool rooted = false;               // uses CollParams::root
  bool in_switch = false;            // reduces or multicasts in NVLS switches (nvls,
                                     // hierarchical_nvls): uses_nvls_switches
  bool levels = false;               // CollParams::slices > 1 pipelines its levels
                                     // (hierarchical, hierarchical_nvls): has_levels
  bool nccl = false;                 // NCCL has it (ring, tree, nvls, hierarchical_nvls as
                                     // its multi-node NVLS; the ring halves and chains;
                                     // all-to-all and send/recv direct): auto's candidates
  bool torus = false;                // made for a torus (kTorus): auto considers it only
                                     // where the topology declares one
  const char* cost = "";             // alpha_beta_time_s's formula as text, for logs and docs
  ScheduleFn schedule;
  AlphaBetaFn alpha_beta;
  CheckFn check;
};

// An entry from its traits (AlgoTrait flags or-ed together, 0 for none).
AlgoInfo algo_entry(Collective collective, const char* name, unsigned traits, const char* cost,
                    ScheduleFn schedule, AlphaBetaFn alpha_beta, CheckFn check);

// The table: a list, so that references to entries stay valid while others are added or
// removed.
using AlgorithmTable = std::list<AlgoInfo>;

// Every (collective, algorithm) make_schedule accepts. The built-in families register in
// algorithms/registry.cpp, one line per family (its file in algorithms/); not synchronized:
// add and remove before or between runs, not during one.
class AlgorithmRegistry {
 public:
  // Adds `entry` after every entry of its collective (and of the collectives before it in
  // Collective order): the table stays grouped by collective, and registration order is
  // table order within one. Fills in collective_name. Throws InternalError if the name is
  // empty or already registered for the collective, or a function or the cost is missing.
  const AlgoInfo& add(const AlgoInfo& entry);
  // Removes the entry (e.g. a test's own algorithm); throws InternalError if there is none.
  void remove(const std::string& collective, const std::string& algorithm);
  const AlgorithmTable& entries() const { return entries_; }

 private:
  AlgorithmTable entries_;
};

// The registry every function below reads, holding the built-in algorithms.
AlgorithmRegistry& algorithm_registry();

// Every registered (collective, algorithm), grouped by collective in the order of the
// Collective enum; within a collective the first entry is the default.
const AlgorithmTable& algorithm_table();

// The entry for (collective, algorithm) names; throws InternalError listing the known
// names if there is none.
const AlgoInfo& algo_info(const std::string& collective, const std::string& algorithm);

// Algorithm names of `collective` in table order; throws InternalError (listing the known
// collectives) for an unknown collective.
std::vector<std::string> algorithms_for(const std::string& collective);

// The names of algorithms_for(collective) that have neither levels nor in-switch ops, in
// table order: what runs on any fabric without knowing its domains or switches (all_reduce:
// ring, tree, halving_doubling, direct, the training workloads' choices). Throws as
// algorithms_for.
std::vector<std::string> flat_algorithms_for(const std::string& collective);

// True if (collective, algorithm) has levels that CollParams::slices > 1 pipelines
// (all_reduce hierarchical, hierarchical_nvls); false for every other entry and for names
// that are not registered (e.g. "auto").
bool has_levels(const std::string& collective, const std::string& algorithm);

// True for the algorithms that reduce or multicast in NVLS switches (an entry of that name
// has in_switch: nvls, hierarchical_nvls): they need NVLS switches, and `auto` considers
// them only where the config checks of naming them pass (SystemSpec::auto_in_switch).
bool uses_nvls_switches(const std::string& algorithm);

// Schedule::count for `ranks` and per-rank data size `count` (the table at the top).
uint64_t buffer_elems(Collective c, int ranks, uint64_t count);

// nccl-tests bus bandwidth factor, busbw = algbw * factor with algbw = size / time:
// all_reduce 2(n-1)/n; reduce_scatter, all_gather, alltoall (n-1)/n; broadcast, reduce,
// sendrecv 1. Depends on the collective only. Throws InternalError for n < 1.
double busbw_factor(Collective c, int n);
double busbw_factor(const AlgoInfo& a, int n);

// NCCL's Tree/Simple piece (CollParams::tree_nccl_chunks): `bytes` halved while a stream
// of `stream_bytes` has fewer than 8 D, 4 D, D pieces and the piece is above 128, 64,
// 32 KiB (D: the tree's depth).
uint64_t nccl_tree_chunk_bytes(uint64_t bytes, uint64_t stream_bytes, int depth);

// Alpha-beta (Hockney) completion time of `a` on n ranks for S = `bytes` of per-rank data
// (CollParams::count * elem_bytes), with alpha the latency per dependent step and beta the
// time per byte of one rank's port. Conventions: messages a rank has in flight at once
// overlap their latency (alpha is charged once per dependent step) but share its port
// (their bytes serialize); pipelined algorithms are taken in the ideal limit of fine
// pieces (the pipeline fills in one alpha per hop, the data then streams at the port
// rate); reduction arithmetic (gamma) is not modelled. D = ceil(log2 n), p = 2^floor(log2 n):
//   all_reduce ring              2(n-1) alpha + 2(n-1)/n S beta
//   all_reduce tree              2 D alpha + 2 S beta            (up and down the depth-D
//                                trees; NCCL's 1/2 tree bandwidth ratio: a rank sends
//                                and receives 2S over both trees)
//   all_reduce halving_doubling  n = p: 2 log2(n) alpha + 2(n-1)/n S beta;
//                                else (2 log2(p) + 2) alpha + (2(p-1)/p + 2) S beta
//                                (the fold adds one whole-vector step each way)
//   all_reduce direct            2 alpha + 2(n-1)/n S beta
//   all_reduce hierarchical      L = domain_size (0: n), N = n / L:
//                                (2(L-1) + 2(N-1)) alpha + (2(L-1)/L + 2(N-1)/(N L)) S beta
//                                (ring reduce-scatter and all-gather inside the domains,
//                                ring all-reduce of S/L across them, phases not
//                                overlapped; one alpha and beta for both levels: for a
//                                two-level cost use schedule_cost in cost.h)
//   all_reduce nvls              2 alpha + (n+1)/n S beta  (reduce round trip, then
//                                multicast; see allreduce_nvls)
//   reduce_scatter, all_gather nvls   alpha + S beta
//   reduce_scatter, all_gather ring   (n-1) alpha + (n-1)/n S beta
//   broadcast, reduce ring       (n-1) alpha + S beta
//   alltoall pairwise            (n-1) alpha + (n-1)/n S beta
//   alltoall direct              alpha + (n-1)/n S beta
//   sendrecv direct              alpha + S beta
// Every formula gives 0 for n = 1 (no communication). The formula is the entry's
// alpha_beta function (its text: AlgoInfo::cost). Throws InternalError for n < 1 or
// negative bytes, alpha or beta, and (hierarchical, hierarchical_nvls) for a domain_size
// that does not divide n.
double alpha_beta_time_s(const AlgoInfo& a, int n, double bytes, double alpha_s,
                         double beta_s_per_byte, int domain_size = 0);

// The schedule of `algorithm` for `collective` (names as in algorithm_table(); all_reduce
// "ring" is ring_allreduce(ring_allreduce.h) with the same ranks, count, elem_bytes, channels and
// chunk_bytes). `domain_size` (ranks per node of a two-level system, 0 = one node) is read
// by all_reduce hierarchical (its domains) and all_reduce ring (for 0 < domain_size <
// ranks it runs on rail_ring_orders, so that its rings cross nodes only between equal
// local indices, i.e. on one rail). Runs the entry's check, requires slices == 1 unless the
// algorithm has levels, then its generator. Throws InternalError for unknown names or
// out-of-range parameters.
Schedule make_schedule(const std::string& collective, const std::string& algorithm,
                       const CollParams& p, int domain_size = 0);

}  // namespace fabricsim::coll
