// Built-in training workload generators: one training step (or MoE layer) as one Schedule
// (job.h) of compute ops and collectives, with the dependencies of the framework's streams.
// Plain data, no SystemC; times come from running the schedule on the fabric.
//
// ddp_step (PyTorch DDP): forward layers 0..N-1 then backward N-1..0 on the compute stream;
//   gradients are packed into buckets in backward order (a bucket closes when it holds at
//   least its cap; layers are never split); bucket k's all-reduce is launched on the comm
//   stream when the backward op of its last layer is done AND bucket k-1's all-reduce is
//   done on this rank; it starts after a launch delay. overlap = false: every bucket waits
//   for the whole backward pass (the no-overlap baseline).
// fsdp_step (FSDP, full sharding): parameters sharded over all ranks. Compute slots
//   k = 0..2N-1: forward layers 0..N-1, then backward layers N-1..0. Slot k's compute
//   needs the all-gather AG(k) of its layer's parameters (all_gather ring); AG(k) is
//   launched on the all-gather stream after AG(k-1) and after compute slot k-d-1 is done
//   (prefetch depth d: while slot k-d computes, up to d later layers are gathered). After
//   a backward slot, its layer's gradients are reduce-scattered (reduce_scatter ring) on a
//   separate reduce-scatter stream. Gathered parameters (the layer minus this rank's shard)
//   are held from AG(k)'s launch until slot k's compute is done.
// moe_layer: tokens routed to experts (top-k, Zipf-skewed expert popularity) inside
//   expert-parallel groups (moe_groups), dispatch as an all-to-all with per-pair sizes (direct: every pair at once, staggered order), expert
//   compute proportional to the tokens a rank received, combine as the transposed
//   all-to-all.
// tp_step (Megatron-style tensor parallelism with data parallelism): ranks form TP groups
//   of `tp` and DP groups of ranks/tp; per layer forward: compute half, TP all-reduce of the
//   activations, compute half, TP all-reduce (each all-reduce on the critical path); the same
//   in backward; after each layer's backward its gradient shard is all-reduced over the DP
//   group on a separate stream, overlapping the rest of the backward pass.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "models/collectives/job.h"
#include "models/collectives/program.h"

namespace fabricsim::coll {

struct CommParams {
  std::string algorithm = "ring";  // all-reduce algorithm (ddp_step, tp_step)
  uint32_t elem_bytes = 2;
  int channels = 1;
  uint64_t chunk_bytes = 512ull << 10;
  uint64_t launch_ps = 0;          // launch delay of every collective on its stream
};

// ---- DDP -------------------------------------------------------------------------------
struct DdpParams {
  int ranks = 1;
  std::vector<uint64_t> layer_elems;               // gradient elements per layer (fwd order)
  std::vector<uint64_t> forward_ps, backward_ps;   // per layer
  uint64_t bucket_bytes = 25ull << 20;
  uint64_t first_bucket_bytes = 0;                 // cap of the first bucket; 0: bucket_bytes
  bool overlap = true;
  CommParams comm;
};
struct DdpStep {
  Schedule schedule;
  std::vector<std::vector<int>> buckets;  // layer indices of each bucket, backward order
  std::vector<uint64_t> bucket_elems;
  uint64_t compute_ps = 0;                // forward + backward compute of one rank
};
// Buckets in backward order (layer N-1 first): a bucket closes once it holds >= its cap
// (first_cap for the first one, 0 meaning cap); the last one takes what is left.
std::vector<std::vector<int>> ddp_buckets(const std::vector<uint64_t>& layer_bytes,
                                          uint64_t cap, uint64_t first_cap);
DdpStep ddp_step(const DdpParams& p);

// ---- FSDP ------------------------------------------------------------------------------
struct FsdpParams {
  int ranks = 1;
  std::vector<uint64_t> layer_elems;               // parameters per layer (fwd order)
  std::vector<uint64_t> forward_ps, backward_ps;
  int prefetch_depth = 1;
  CommParams comm;
};
struct FsdpStep {
  Schedule schedule;
  uint64_t compute_ps = 0;
  // Per rank, per compute slot k: the launch op of AG(k) (its completion = the gathered
  // buffer is allocated), the compute op (its completion = the buffer is freed), and the
  // bytes held beyond the rank's shard.
  std::vector<std::vector<uint32_t>> gather_launch_op, gather_join_op, compute_op;
  std::vector<std::vector<uint64_t>> gathered_bytes;
};
FsdpStep fsdp_step(const FsdpParams& p);

// Peak of the sum of bytes over intervals [alloc, free): at equal times frees come first.
struct HeldBuffer {
  uint64_t alloc_ps, free_ps, bytes;
};
uint64_t peak_held_bytes(const std::vector<HeldBuffer>& buffers);

// ---- MoE -------------------------------------------------------------------------------
struct MoeParams {
  int ranks = 1;
  int experts_per_rank = 1;
  int top_k = 2;
  uint64_t tokens_per_rank = 0;
  uint64_t token_elems = 0;        // hidden size: elements per token
  double skew = 0;                 // Zipf exponent of expert popularity; 0 = uniform
  uint64_t seed = 1;
  uint64_t expert_ps_per_token = 0;
  int ep = 0;               // expert-parallel group size (divides ranks); 0: all ranks
  bool ep_inside = true;    // EP groups of consecutive ranks (else strided, as tp_groups)
  CommParams comm;
};
// The EP groups: tp_groups(ranks, ep, ep_inside).tp. Every group holds a full set of
// ep x experts_per_rank experts (local expert e on group member e / experts_per_rank) and
// routes only its own members' tokens; groups run concurrently.
std::vector<std::vector<int>> moe_groups(const MoeParams& p);
struct MoeRouting {
  std::vector<std::vector<uint64_t>> tokens;  // [source rank][local expert of its group]
  std::vector<uint64_t> expert_load;          // tokens per expert, group-major
  std::vector<uint64_t> rank_load;            // tokens per rank (its experts' sum)
};
// Expert e's popularity rank is pi(e), pi a permutation drawn from
// Rng(seed, "moe_layer.popularity"); its weight is 1 / (pi(e) + 1)^skew. Every token of
// rank r picks top_k distinct experts, each with probability proportional to the weights
// of the experts not yet picked, using Rng(seed, "moe_layer.rank<r>").uniform01().
MoeRouting moe_route(const MoeParams& p);
struct MoeStep {
  Schedule schedule;
  std::vector<uint32_t> dispatch_join, expert_op;  // per rank
};
MoeStep moe_layer(const MoeParams& p, const MoeRouting& routing);

// All-to-all with per-pair sizes: elems[r][j] from rank r to rank j (diagonal ignored),
// cut into pieces of chunk_elems; no deps (every pair at once); posted piece by piece,
// each piece to r+1, r+2, ... (receives from r-1, r-2, ...); input area [0, row sums),
// output area after the largest input area.
Schedule alltoallv(const std::vector<std::vector<uint64_t>>& elems, uint64_t chunk_elems);

// ---- Tensor parallel + data parallel ---------------------------------------------------
struct TpGroups {
  std::vector<std::vector<int>> tp, dp;
};
// tp_inside: TP group g = ranks [g*tp, (g+1)*tp), DP groups strided by tp.
// Otherwise (dp_inside): DP group g = ranks [g*dp, (g+1)*dp) with dp = ranks/tp, TP groups
// strided by dp.
TpGroups tp_groups(int ranks, int tp, bool tp_inside);
struct TpParams {
  int ranks = 1;
  int tp = 1;
  bool tp_inside = true;
  int layers = 1;
  uint64_t act_elems = 0;    // activation all-reduce size (tokens x hidden)
  uint64_t grad_elems = 0;   // gradient elements per rank per layer (layer params / tp)
  uint64_t forward_ps = 0, backward_ps = 0;  // per layer per rank
  CommParams comm;
};
Schedule tp_step(const TpParams& p);

}  // namespace fabricsim::coll
