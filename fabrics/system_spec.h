// A whole config file, validated and resolved into plain data (no SystemC): simulation
// settings, link and device types, the topology graph, the workload. Every problem is an
// InputError in the "file:line:col: key.path: problem; hint" form.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fabrics/topology.h"
#include "models/collectives/engine.h"
#include "models/link/port.h"
#include "models/endpoint/endpoint.h"
#include "models/switch/switch.h"

namespace fabricsim {

struct DeviceType {
  std::string name;
  bool is_switch = false;
  std::string protocol;
  int ports = 0;                 // all ports: fabric ports, then nic_ports NIC ports
  int nic_ports = 0;             // endpoints: NIC ports, the last nic_ports of `ports`
  std::string nic_protocol;      // their protocol
  // Protocol of port `port`.
  const std::string& port_protocol(int port) const {
    return port >= ports - nic_ports ? nic_protocol : protocol;
  }
  EndpointParams endpoint;
  SwitchParams sw;
  std::string ualink_class = "none";  // switches: "none", "25.6T", "51.2T", "102.4T"
  std::vector<std::string> nvls_datatypes;  // switches with nvls: element types reduced
};

// Unloaded port-to-port latency of a switch on a stream-framed (UALink) link, from the
// first bit of a packet's codeword at the ingress pin to the first bit of its codeword at
// the egress pin: the whole codeword is received and CRC-checked (store and forward of
// one DL flit), the ingress pipeline, and the crossbar moving at most one codeword's
// bytes at link rate x speedup. An upper bound for any packet that fits one codeword.
struct PortToPort {
  uint64_t codeword_ps = 0, crossbar_ps = 0, total_ps = 0;
};
PortToPort port_to_port(const SwitchParams& sw, const LinkParams& link);
// Published UALink switch port-to-port limits: 25.6T <= 150 ns, 51.2T < 200 ns,
// 102.4T < 250 ns (UALink Consortium webinar Q&A, 2025).
uint64_t ualink_class_limit_ps(const std::string& cls);
// Parameters of the training workloads (ddp_step, fsdp_step, moe_layer, tp_layer), resolved
// to base units; fabrics/training.cpp turns them into jobs.
struct TrainingSpec {
  std::vector<uint64_t> layer_params;        // per layer, expanded to `layers` entries
  uint64_t tokens = 0;                       // per rank per step (moe_layer: per rank)
  double device_tflops = 0;                  // TFLOP/s
  uint64_t forward_ps = 0, backward_ps = 0;  // per layer; 0: from FLOPs
  uint64_t bucket_bytes = 0, first_bucket_bytes = 0;
  std::vector<uint64_t> bucket_sweep_bytes;  // ddp_step rows (empty: bucket_bytes only)
  std::vector<int> prefetch_depths;          // fsdp_step rows
  uint64_t hidden = 0, ffn_hidden = 0;
  int experts_per_rank = 1, top_k = 2;
  double skew = 0;
  uint64_t expert_ps_per_token = 0;          // 0: from FLOPs
  int ep = 0;                                // moe_layer EP group size; 0: all ranks
  int tp = 1;
  std::string placement;                     // tp_layer: tp_inside | dp_inside | both;
                                             // moe_layer: ep_inside | ep_across | both
  uint64_t launch_ps = 0;
};

bool is_training_workload(const std::string& type);

struct WorkloadSpec {
  std::string type;          // "allreduce_sweep" | "collective_sweep" | a training type
  std::string collective = "all_reduce";  // nccl-tests name
  std::string algorithm = "ring";
  int root = 0;
  uint64_t min_bytes = 0, max_bytes = 0;
  uint64_t step_factor = 2;
  std::string datatype;      // "float", ...
  uint32_t elem_bytes = 4;
  int channels = 1;
  uint64_t chunk_bytes = 0;
  int slices = 1;            // all_reduce hierarchical: pipeline slices per channel
  SyncProtocol sync;
  TrainingSpec training;     // training workloads only
  // Message sizes of the sweep, in bytes (each a whole number of elements).
  std::vector<uint64_t> sizes() const;
};

struct SystemSpec {
  std::string file;
  std::string name;
  uint64_t seed = 1;
  uint64_t aggregate_bytes = 0;
  uint64_t aggregate_min_message = 0;
  uint64_t time_limit_ps = 0;
  bool functional = false;
  std::map<std::string, LinkParams> link_types;
  std::map<std::string, DeviceType> device_types;
  topo::Graph graph;
  std::vector<int> ranks;    // endpoint ids in rank order
  int domain_size = 0;       // ranks per node (multi_node: endpoints_per_node), 0: one node
  WorkloadSpec workload;
  // algorithm: auto: the in-switch algorithms of the collective (nvls, hierarchical_nvls)
  // that pass the checks of naming them explicitly, so auto may choose them; on a single
  // domain hierarchical_nvls is nvls's schedule and is left to nvls.
  std::vector<std::string> auto_in_switch;
  nlohmann::json resolved;   // the resolved config, echoed into results.json
};

// Loads, applies --set overrides, validates and resolves. `seed` overrides the file's.
SystemSpec load_system(const std::string& file, const std::vector<std::string>& overrides,
                       std::optional<uint64_t> seed);

uint32_t datatype_bytes(const std::string& datatype);

}  // namespace fabricsim
