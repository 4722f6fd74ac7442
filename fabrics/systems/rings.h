// Channels built from the topology, as NCCL's graph search builds them: the ring of every
// channel (a permutation of the ranks), chosen so that the channels' rings cover distinct
// links. Plain C++.
#pragma once
#include <functional>
#include <vector>

#include "fabrics/systems/system_spec.h"

namespace fabricsim {

// The ports of rank `a` that carry its traffic to rank `b` (its ports on shortest paths),
// empty if b is unreachable.
using PortsOf = std::function<std::vector<int>(int a, int b)>;

// `channels` rings over `ranks` ranks, each a permutation starting at rank 0, built one
// after the other: every ring is the one whose busiest sender port ends up least loaded,
// the load of a port being the rings crossing it (a hop over k ports adds 1/k to each),
// found by depth-first search over next ranks in order of the load they add (ties to the
// lower rank). On a full mesh this finds link-disjoint Hamiltonian rings; once every link
// carries one ring, the next rings repeat the load pattern (NCCL duplicates its rings the
// same way). Empty if some ring cannot be closed (a rank unreachable).
std::vector<std::vector<int>> search_rings(int ranks, int channels, const PortsOf& ports_of);

// The rings of the workload's channels on spec's topology: rail-aligned orders on a
// two-level system (rail_ring_orders: every node crossing on one rail, the rails spread
// over the channels); none (empty: every channel runs 0, 1, .., n-1) where every rank
// reaches every other over the same ports (a switched node: every ring is as good); else
// search_rings over the routes (a full mesh: rings over distinct links).
std::vector<std::vector<int>> topology_rings(const SystemSpec& spec);

}  // namespace fabricsim
