// The analytic busbw ceiling of a system for its workload: the busbw at which the most
// loaded resource saturates. Plain arithmetic on the SystemSpec (no SystemC): the
// workload's own schedule, built for one size, gives the bytes every rank sends to every
// peer; each send is spread evenly over the ports that reach its destination (the DMA
// stripes), and charged to
//   - every endpoint port it leaves or enters, at the link's payload rate
//     (rate x payload / wire bytes of a full packet);
//   - every root complex that lies on all of its shortest paths: once up and once down
//     its data path (root_complex_bandwidth per direction) and, with p2p off, written to
//     and read from host memory (2 bytes of memory traffic per byte).
// Switch-to-switch links and crossbars are not counted, so this is an upper bound.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fabrics/systems/system_spec.h"

namespace fabricsim {

struct CeilingBound {
  std::string resource;   // e.g. "gpu0.port[0] tx", "rc0 host memory"
  double busbw_GBps = 0;  // the busbw at which this resource saturates
};

struct Ceiling {
  double busbw_GBps = 0;             // min over bounds; 0 when the workload sends nothing
  std::string limited_by;            // the resource of the smallest bound
  std::vector<CeilingBound> bounds;  // the tightest bound of each kind (endpoint links,
                                     // each root complex's data path and memory)
};

Ceiling busbw_ceiling(const SystemSpec& spec);
nlohmann::json ceiling_json(const Ceiling& c);

}  // namespace fabricsim
