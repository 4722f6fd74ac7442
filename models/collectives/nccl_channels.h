// The number of channels NCCL builds for its rings and trees from the machine's topology
// (its graph search), as a closed form of the search on the machines it covers: GPUs whose
// peers in a node are reached through NVLink switches, and across nodes through NICs.
// Plain C++ (docs/collectives.md, "channels: auto"). Reference: NCCL v2.27.3,
// src/graph/search.cc ncclTopoCompute / ncclTopoDupChannels / ncclTopoCompareGraphs,
// src/graph/connect.cc ncclTopoPostset, src/init.cc (ring maxChannels = MAXCHANNELS / 2),
// src/graph/topo.h (NVLink bandwidth per link).
#pragma once
#include <string>

namespace fabricsim::coll {

// What the search sees of one GPU and its node.
struct NcclSearchInput {
  int compute_capability = 90;  // x10: 80 Ampere, 90 Hopper, 100 Blackwell (speed arrays)
  int gpus_per_node = 1;        // L
  int nodes = 1;                // N (1: NCCL removes the NICs from the search)
  double nvlink_GBps = 0;       // per GPU: its NVLink links x NCCL's figure per link
  int nics_per_gpu = 0;         // NICs local to each GPU (multi-node)
  double nic_GBps = 0;          // per NIC, per direction (NCCL: the NIC's speed / 8)
};

struct NcclSearchResult {
  int channels = 0;            // comm->nChannels: what the collectives use
  int searched = 0;            // pass 1: channels found ...
  double searched_GBps = 0;    // ... at this bandwidth per channel
  int graph = 0;               // after ncclTopoDupChannels and pass 2 ...
  double graph_GBps = 0;       // ... at this bandwidth per channel
  std::string text() const;    // "6 x 60 GB/s searched, 12 x 30 after dup, 24 channels"
};

// NCCL's NVLink bandwidth per link (GB/s) for a compute capability x10 (topo.h
// SM60/70/80/86/90/100_NVLINK_BW: 18, 20, 20, 12, 20.6, 40).
double nccl_nvlink_GBps(int compute_capability);

// NCCL's channel count for the ring graph of such a machine. The tree graph is searched
// with the ring's count as its minimum and maximum and is taken to find it (NCCL uses the
// smaller of the two).
NcclSearchResult nccl_channels(const NcclSearchInput& in);

}  // namespace fabricsim::coll
