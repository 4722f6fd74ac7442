// Chakra execution traces (MLCommons; the format ASTRA-sim reads) as a workload: each
// rank's trace file `<trace>.<rank>.et` (a GlobalMetadata, then length-delimited Nodes;
// schema in chakra_et.proto) becomes that rank's program in ONE job: compute nodes occupy
// the rank's compute unit for their duration, send/receive nodes are messages, and the
// k-th collective node of every rank is one collective of the workload's algorithm over
// all ranks; data and control dependencies both order the ops. Plain C++, no SystemC.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "models/collectives/program.h"

namespace fabricsim {

struct SystemSpec;

struct ChakraJob {
  coll::Schedule schedule;
  // Every node of every rank, rank by rank in trace order, with the op that completes
  // when it has (its join) and the nodes it depends on (indices into `nodes`).
  struct NodeRef {
    int rank = 0;
    uint64_t id = 0;
    std::string name, type;  // type: "compute", "send", "recv", "collective", "other"
    uint32_t join = 0;
    uint64_t duration_ps = 0;  // compute nodes
    std::vector<size_t> deps;
  };
  std::vector<NodeRef> nodes;
  size_t collectives = 0;
};

// Reads `<prefix>.<rank>.et` for every rank of `spec` and builds the job. A bad or
// inconsistent trace throws InputError naming the file and node ("t.1.et: node 7: ...").
ChakraJob load_chakra(const std::string& prefix, const SystemSpec& spec);

}  // namespace fabricsim
