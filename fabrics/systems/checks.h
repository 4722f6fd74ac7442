// Cross-checks of a loaded system: what no single section can judge alone (a transaction
// that fits every receive buffer, replay buffers that cover an ack round trip, every device
// kind's own checks of its links, the workload's root and in-switch requirements, that
// every pair of ranks the workload talks over is connected). Plain C++; each check throws
// InputError at the config location it is about.
#pragma once
#include <map>
#include <string>

#include <yaml-cpp/yaml.h>

#include "fabrics/config/params.h"
#include "fabrics/systems/system_spec.h"

namespace fabricsim {

// Where the config wrote what a check may point at.
struct SpecSources {
  std::string file;
  YAML::Node topology;
  cfg::Params simulation, workload;
  std::map<std::string, cfg::Params> link_types, device_types;
};

// What a replay buffer must hold on link type `l` (link-level retry): one transaction's
// wire bytes plus what the line carries in an ack round trip (a codeword more on framings
// whose packets are usable after their last byte).
struct ReplayNeed {
  uint64_t transaction_wire = 0, rtt_bytes = 0, codeword_ps = 0;
};
ReplayNeed replay_need(const SystemSpec& spec, const LinkParams& l);

// Runs every check, in the order above; fills spec.auto_in_switch for `algorithm: auto`.
void check_system(SystemSpec& spec, const SpecSources& src);

// The in-switch (NVLS) requirements of naming `algorithm` (nvls or hierarchical_nvls):
// every rank's links end on NVLS switches of one tier, each switch reaches exactly its
// group (all ranks, or one node's), and reduces the workload's datatype.
void check_in_switch(const SystemSpec& spec, const SpecSources& src, const std::string& algorithm);

}  // namespace fabricsim
