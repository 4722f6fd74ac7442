// Workloads: what runs on a system (an nccl-tests style size sweep, or one training step
// composed of collectives and compute) and the seam through which a workload type plugs
// in: its declared parameters and the parse that turns them into a WorkloadSpec (one file
// each in this folder, registered by name in workloads()). Plain C++.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fabrics/config/params.h"
#include "models/collectives/algorithms.h"
#include "models/collectives/program.h"
#include "models/core/registry.h"

namespace fabricsim {

struct SystemSpec;
struct ChakraJob;  // fabrics/workloads/chakra.h

// Parameters of the training workloads (ddp_step, fsdp_step, moe_layer, tp_layer), resolved
// to base units; fabrics/sim/training_run.cpp turns them into jobs.
struct TrainingSpec {
  std::vector<uint64_t> layer_params;        // per layer, expanded to `layers` entries
  uint64_t tokens = 0;                       // per rank per step (moe_layer: per rank)
  double device_tflops = 0;                  // TFLOP/s
  uint64_t forward_ps = 0, backward_ps = 0;  // per layer; 0: from FLOPs
  uint64_t bucket_bytes = 0, first_bucket_bytes = 0;
  std::vector<uint64_t> bucket_sweep_bytes;  // ddp_step rows (empty: bucket_bytes only)
  std::vector<int> prefetch_depths;          // fsdp_step rows
  uint64_t hidden = 0, ffn_hidden = 0;
  int experts_per_rank = 0, top_k = 0;
  double skew = 0;
  uint64_t expert_ps_per_token = 0;          // 0: from FLOPs
  int ep = 0;                                // moe_layer EP group size; 0: all ranks
  int tp = 0;
  std::string placement;                     // tp_layer: tp_inside | dp_inside | both;
                                             // moe_layer: ep_inside | ep_across | both
  uint64_t launch_ps = 0;
  std::shared_ptr<const ChakraJob> chakra;  // chakra: the imported trace as one job
};

// One point-to-point flow of a traffic workload (incast, permutation): `bytes` from rank
// `src` to rank `dst`, starting `start_ps` after the workload starts.
struct Flow {
  int src = 0, dst = 0;
  uint64_t bytes = 0;
  uint64_t start_ps = 0;
};

// One phase of a phased job (ocs_phases): a collective of `bytes` (nccl-tests size) that
// runs on the circuits a plan may give it (faults: ocs_phase_map).
struct PhaseSpec {
  std::string name;  // "A", "B"
  std::string collective, algorithm;
  uint64_t bytes = 0;
};

struct WorkloadSpec {
  std::string type;          // a registered workload type
  bool is_training = false;  // runs jobs (a training step) instead of a size sweep
  bool is_traffic = false;   // runs flows (fabrics/sim/traffic_run.h) instead of a size sweep
  std::vector<Flow> flows;   // traffic workloads
  std::string collective;    // nccl-tests name
  std::string algorithm;
  int root = 0;
  uint64_t min_bytes = 0, max_bytes = 0;
  uint64_t step_factor = 0;
  std::string datatype;      // "float", ...
  uint32_t elem_bytes = 0;
  int channels = 0;
  // channels: auto (size sweeps): `channels` is NCCL's count for the topology
  // (fabrics/systems/auto_channels.h), resolved at load; tree then runs channels / 2
  // channels of two trees each (NCCL's channels c and c + n/2 are one tree pair).
  bool channels_auto = false;
  int nccl_compute_capability = 90;  // x10, the search's speed arrays (channels: auto)
  std::string channels_rule;         // "channels: auto = N (how)", for the summary and check
  uint64_t chunk_bytes = 0;
  int slices = 0;            // all_reduce hierarchical: pipeline slices per channel
  std::vector<int> torus;    // the torus the ranks form (tpu_pod), for torus algorithms
  coll::SyncProtocol sync;
  std::string protocol = "simple";  // simple | ll | ll128 | auto (size sweeps)
  coll::ProtocolConfig proto;       // per-protocol steps, channel thresholds, slots
  TrainingSpec training;     // training workloads only
  // ocs_phases: the phases of one step, run in this order `steps` times (job i is phase
  // i % phases.size()).
  std::vector<PhaseSpec> phases;
  int steps = 0;
  // Message sizes of the sweep, in bytes (each a whole number of elements).
  std::vector<uint64_t> sizes() const;
  // The collective parameters of this workload on `ranks` ranks for `count` elements.
  coll::CollParams coll_params(int ranks, uint64_t count) const;
  // The channels algorithm `algo` runs at its largest size: `channels`, but with channels:
  // auto tree runs channels / 2 (at least 1), each of two trees.
  int algo_channels(const std::string& algo) const {
    return channels_auto && algo == "tree" ? std::max(1, channels / 2) : channels;
  }
  // The GPU protocol model runs (sync: fence_flag; every ll/ll128 schedule needs it).
  bool protocol_model() const { return sync.fence_flag; }
  // The same for algorithm `algo` under protocol `p`: with the protocol model the library's
  // channels for this size (NCCL's thresholds, at most `channels`) and p's step as the
  // piece; otherwise coll_params.
  coll::CollParams coll_params(int ranks, uint64_t count, const std::string& algo,
                               coll::Protocol p) const;
};

// What a workload costs to simulate, estimated before it runs from its parameters and the
// shape of its schedules (fabrics/systems/estimate.h turns it into memory and wall time).
struct WorkloadCost {
  double schedule_ops = 0;   // ops of the schedules held in memory at once (a sweep: its
                             // largest collective; a training step: every job, built up front)
  double payload_bytes = 0;  // payload every rank sends, summed, over the whole run
  double aggregated_bytes = 0;  // the part in messages of at least aggregate_min_message
  double piece_bytes = 0;    // the largest message size (a piece) it sends
  double messages = 0;       // messages (one piece each) every rank sends over the run
  double ll_bytes = 0;       // of payload_bytes, what protocol ll sends (its stores may reach
                             // the link in small packets: the endpoint's ll_store_bytes)
  double data_bytes = 0;     // other memory the workload holds (functional buffers)
  // In-switch (NVLS) collectives: the reduce requests the schedules may have in flight at
  // once, in bytes asked for, over every rank (kNvlsWindow pieces per channel and rank),
  // and the group each request reads from. The switch sends a read to every member per
  // request packet and each read comes back as an answer, so they are packets in flight
  // that no buffer bounds (fabrics/systems/estimate.cpp). The largest of any collective.
  double nvls_request_bytes = 0;
  double nvls_group = 0;
};

// Ops and sends of one collective's schedule per channel, for one piece per message.
struct ScheduleShape {
  double ops = 0, sends = 0;
};

// The cost of one `collective` of `bytes` per rank on `ranks` ranks (domains of
// `domain_size`, 0: one) with w's channels and chunk_bytes. The schedule's shape is
// measured on the real schedule with one channel and one piece per message, at `ranks`
// when that is small and otherwise at two small rank counts, extrapolated as a power of
// the rank count (ring-like schedules grow as n^2, trees as n); `shapes` caches it per
// (collective, algorithm, ranks). Each rank's bytes (its alpha-beta volume) add one
// send and one receive per chunk. Its pieces are min(chunk_bytes, bytes / (ranks x
// channels)): moved aggregated when at least `aggregate_min_message` (a run-wide setting).
// With `protocol: auto` the costliest of `auto_protocols` (the protocols the ranks'
// endpoints make candidates; empty: all three) counts.
WorkloadCost collective_cost(const WorkloadSpec& w, const std::string& collective,
                             const std::string& algorithm, int ranks, int domain_size,
                             double bytes, uint64_t aggregate_min_message,
                             std::map<std::string, ScheduleShape>& shapes,
                             const std::vector<coll::Protocol>& auto_protocols = {});
// Adds `times` copies of c to total (payload, messages and ops add up; the largest piece
// is kept).
void add_cost(WorkloadCost& total, const WorkloadCost& c, double times = 1);

struct WorkloadKind {
  std::string name;     // the `type:` of the workload section
  std::string summary;  // for `fabricsim describe`
  std::vector<ParamSpec> params;
  bool training = false;
  bool traffic = false;  // its flows run as one job (fabrics/sim/traffic_run.h)
  // Fills spec.workload from `p` (checks located through p.fail); may also read and narrow
  // the system (e.g. `ranks: N` runs on the first N ranks). `sim` holds the simulation
  // section's values, for checks against it.
  std::function<void(const cfg::Params& p, const cfg::Params& sim, SystemSpec& spec)> parse;
  // Its cost on the loaded system (optional: without it only the system is estimated).
  std::function<WorkloadCost(const SystemSpec& spec)> estimate = {};
};

Registry<WorkloadKind>& workloads();

}  // namespace fabricsim
