// Topology-aware alpha-beta cost of a collective schedule, for `algorithm: auto` (an
// NCCL-tuner-like choice per message size). Plain C++, no SystemC.
//
// Model. A schedule (program.h) is costed as
//     T(S) = latency + S * s_per_byte
// with both terms taken from the schedule itself on the given fabric, not from a formula
// per algorithm:
//   * latency: the longest chain of dependent messages, each hop src -> dst costing
//     FabricCosts::path(src, dst).alpha_s (a send starts when its deps are done, a recv is
//     done alpha after its matching send started). Ring all-reduce: 2(n-1) hops; tree:
//     up and down the depth; hierarchical: 2(L-1) hops inside nodes + 2(N-1) across.
//   * bandwidth: every rank's bytes are summed per port group (the ports that reach the
//     destination: a GPU's NVLink ports for its node, its NIC for other nodes), divided
//     by that group's payload rate; the busiest rank sets s_per_byte. Messages in flight
//     at once share their group's rate; a rank's groups run in parallel (its time is the
//     max over groups), except for all_reduce hierarchical, whose NVLink and NIC phases
//     are costed in sequence (the sum): measured on 16 x DGX H100 they do not overlap
//     (64 MiB: 642 us simulated, 326 + 316 us for the two phase kinds alone), while on
//     2 nodes the short NIC phase hides under the NVLink ones (docs/collectives.md).
// Pipelining is taken in the fine-piece limit (latency and bandwidth terms add, as in
// alpha_beta_time_s); reduction arithmetic, queueing and credit effects are not in it.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

namespace fabricsim::coll {

struct PathCost {
  double alpha_s = 0;  // latency of one dependent step src -> dst (s)
  int group = 0;       // the sender's port group that carries src -> dst (ids per rank)
};

struct FabricCosts {
  int ranks = 0;
  int domain_size = 0;  // ranks per node (0: one node); passed to make_schedule
  std::function<PathCost(int src, int dst)> path;
  std::function<double(int rank, int group)> group_Bps;  // payload bytes/s of that group
};

struct AlgoCost {
  double latency_s = 0;
  double s_per_byte = 0;
  double time_s(double bytes) const { return latency_s + bytes * s_per_byte; }
};

// Cost of `algorithm` for `collective` on `f` (per-rank data S in bytes as in
// algorithms.h). Built from make_schedule with `channels` channels (they decide which
// rails a rail-aligned ring uses), one piece per message and a reference count of
// 8 * channels * ranks elements of `elem_bytes`. Throws InternalError for unknown names or
// a schedule that cannot complete.
// `slices` is CollParams::slices (all_reduce hierarchical): with one slice the phases of
// hierarchical run in turn, so its port groups' times add up; with M > 1 slices they
// overlap as a pipeline and the bandwidth term is the busiest group plus 1/M of the
// others (the pipeline's fill and drain).
AlgoCost schedule_cost(const std::string& collective, const std::string& algorithm,
                       int channels, uint32_t elem_bytes, int root, const FabricCosts& f,
                       int slices = 1);

}  // namespace fabricsim::coll
