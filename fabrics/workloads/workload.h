// Workloads: what runs on a system (an nccl-tests style size sweep, or one training step
// composed of collectives and compute) and the seam through which a workload type plugs
// in: its declared parameters and the parse that turns them into a WorkloadSpec (one file
// each in this folder, registered by name in workloads()). Plain C++.
#pragma once
#include <cstdint>
#include <functional>
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
  uint64_t chunk_bytes = 0;
  int slices = 0;            // all_reduce hierarchical: pipeline slices per channel
  std::vector<int> torus;    // the torus the ranks form (tpu_pod), for torus algorithms
  coll::SyncProtocol sync;
  TrainingSpec training;     // training workloads only
  // Message sizes of the sweep, in bytes (each a whole number of elements).
  std::vector<uint64_t> sizes() const;
  // The collective parameters of this workload on `ranks` ranks for `count` elements.
  coll::CollParams coll_params(int ranks, uint64_t count) const;
};

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
};

Registry<WorkloadKind>& workloads();

}  // namespace fabricsim
