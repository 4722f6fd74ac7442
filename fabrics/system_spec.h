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
#include "models/core/port.h"
#include "models/endpoint/endpoint.h"
#include "models/switch/switch.h"

namespace fabricsim {

struct DeviceType {
  std::string name;
  bool is_switch = false;
  std::string protocol;
  int ports = 0;
  EndpointParams endpoint;
  SwitchParams sw;
  std::vector<std::string> nvls_datatypes;  // switches with nvls: element types reduced
};

struct WorkloadSpec {
  std::string type;          // "allreduce_sweep" | "collective_sweep"
  std::string collective = "all_reduce";  // nccl-tests name
  std::string algorithm = "ring";
  int root = 0;
  uint64_t min_bytes = 0, max_bytes = 0;
  uint64_t step_factor = 2;
  std::string datatype;      // "float", ...
  uint32_t elem_bytes = 4;
  int channels = 1;
  uint64_t chunk_bytes = 0;
  SyncProtocol sync;
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
  WorkloadSpec workload;
  nlohmann::json resolved;   // the resolved config, echoed into results.json
};

// Loads, applies --set overrides, validates and resolves. `seed` overrides the file's.
SystemSpec load_system(const std::string& file, const std::vector<std::string>& overrides,
                       std::optional<uint64_t> seed);

uint32_t datatype_bytes(const std::string& datatype);

}  // namespace fabricsim
