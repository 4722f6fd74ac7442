#include "models/collectives/nccl_channels.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

namespace fabricsim::coll {

namespace {

// NCCL v2.27.3 src/graph/search.cc: the bandwidths per channel (GB/s) the search tries,
// inside a node (no NIC) and across nodes, per SM generation.
const std::vector<double> kIntra = {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3};
const std::vector<double> kInter = {48, 30, 28, 24, 20, 18, 15, 12, 10, 9,
                                    7,  6,  5,  4,  3,  2.4, 1.2, 0.24, 0.12};
const std::vector<double> kIntraSm90 = {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
const std::vector<double> kInterSm90 = {48, 45, 42, 40, 30, 24, 22, 20, 17.5,
                                        15, 12, 6,  3,  2.4, 1.2, 0.24, 0.12};
const std::vector<double> kIntraSm100 = {90, 80, 70, 60, 50, 40, 30, 24, 20, 19, 18};
const std::vector<double> kInterSm100 = {47.9, 45, 42, 40, 30, 24, 22, 20, 17.5,
                                         15,   12, 6,  3,  2.4, 1.2, 0.24, 0.12};

constexpr int kMaxChannels = 64;                 // MAXCHANNELS (src/include/device.h)
constexpr int kRingMaxChannels = kMaxChannels / 2;  // init.cc: ringGraph->maxChannels
constexpr double kLocBw = 5000;                  // LOC_BW: one GPU, no NIC

// Whole channels of `per_channel` that fit in `bw` (NCCL subtracts per channel with
// rounding to 1e-3 GB/s: a channel fits when what is left is not below it).
int fits(double bw, double per_channel) {
  return int(std::floor(bw / per_channel + 1e-6));
}

}  // namespace

double nccl_nvlink_GBps(int cc) {
  if (cc >= 100) return 40.0;  // SM100_NVLINK_BW
  if (cc >= 90) return 20.6;   // SM90_NVLINK_BW
  if (cc == 86) return 12.0;   // SM86_NVLINK_BW
  if (cc >= 70) return 20.0;   // SM70/SM80_NVLINK_BW
  return 18.0;                 // SM60_NVLINK_BW
}

std::string NcclSearchResult::text() const {
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "%d x %g GB/s searched, %d x %g after ncclTopoDupChannels and pass 2, "
                "%d channels",
                searched, searched_GBps, graph, graph_GBps, channels);
  return buf;
}

NcclSearchResult nccl_channels(const NcclSearchInput& in) {
  const int L = std::max(1, in.gpus_per_node);
  const bool inter = in.nodes > 1;  // ncclTopoTrimSystem drops the NICs on one node
  const int cc = in.compute_capability;
  const std::vector<double>& speeds =
      cc >= 100 ? (inter ? kInterSm100 : kIntraSm100)
                : cc >= 90 ? (inter ? kInterSm90 : kIntraSm90) : (inter ? kInter : kIntra);
  const double nvl = in.nvlink_GBps;
  // ncclTopoSearchInit: maxBw is the best path to a NIC (multi-node) or to another GPU;
  // totalBw the GPU's NVLink sum (or its PCIe link, taken as the NIC's here).
  double max_bw = 0, total_bw = 0;
  if (!inter && L == 1) {
    max_bw = total_bw = kLocBw;
  } else {
    max_bw = inter ? in.nic_GBps : nvl;
    total_bw = nvl > 0 ? nvl : in.nic_GBps;
  }
  // Channels of the ring pattern that fit at bandwidth s per channel. One node: each
  // channel passes every GPU once through its NVLink switches (s out and s in per GPU).
  // Across nodes: each channel enters the node through one NIC and leaves it through a NIC
  // of the same rail (s each way per NIC), and crosses L - 1 NVLink hops in the node,
  // spread over the L GPUs (the GPU that sends to the NIC sends no NVLink).
  const auto capacity = [&](double s) {
    long c = kRingMaxChannels;
    if (!inter) {
      if (L > 1) c = std::min<long>(c, fits(nvl, s));
    } else {
      c = std::min<long>(c, long(L) * in.nics_per_gpu * fits(in.nic_GBps, s));
      if (L > 1) c = std::min<long>(c, long(L) * fits(nvl, s) / (L - 1));
    }
    return int(std::max<long>(c, 0));
  };
  const int n_speeds = int(speeds.size());
  int si = 0;
  while ((speeds[size_t(si)] > max_bw || speeds[size_t(si)] * 1 > total_bw) && si < n_speeds - 1)
    ++si;
  // Pass 1 (ncclTopoCompute): search at the speed, keep the graph with the most
  // nChannels x bw (ncclTopoCompareGraphs, strictly better), lower the speed while the
  // next one is more than .49 of the best graph's.
  int n = 0;
  double bw = 0;
  for (;;) {
    const double s = speeds[size_t(si)];
    const int c = capacity(s);
    if (c > 0 && c * s > n * bw) {
      n = c;
      bw = s;
    }
    if (c == kRingMaxChannels && n == c) break;     // a perfect solution: time == -1
    if (n > 0 && n * bw >= total_bw - 1e-9) break;  // nChannels x bwInter >= totalBw
    if (si < n_speeds - 1 && (n == 0 || speeds[size_t(si) + 1] / bw > .49)) {
      ++si;
      continue;
    }
    break;
  }
  NcclSearchResult r;
  if (n == 0) {  // "falling back to simple order": one channel
    r.searched = r.graph = 1;
    r.searched_GBps = r.graph_GBps = 0.1;
    r.channels = 2;
    return r;
  }
  r.searched = n;
  r.searched_GBps = bw;
  // ncclTopoDupChannels.
  if (bw >= 25.0 && !(cc > 80 && bw < 50.0 && n > 4)) {
    const int dup = std::min(2 * n, kRingMaxChannels);
    bw /= double((dup + n - 1) / n);
    n = dup;
  }
  // Pass 2: raise the speed while a graph of at least n channels fits at it (rings).
  si = 0;
  while (speeds[size_t(si)] > bw && si < n_speeds - 1) ++si;
  while (si > 0) {
    const double s = speeds[size_t(--si)];
    const int c = capacity(s);
    if (c >= n && c * s > n * bw) {
      n = c;
      bw = s;
    }
  }
  r.graph = n;
  r.graph_GBps = bw;
  // connect.cc ncclTopoPostset: channels c and c + n share a ring (and a tree pair);
  // then "4 compute channels per search channel" for fewer than 8 GPUs per node's worth of
  // bandwidth on Hopper and later across nodes.
  int channels = std::min(kMaxChannels, 2 * n);
  if (cc >= 90 && inter && bw > 45.0 && channels < 16) channels = 2 * channels;
  r.channels = channels;
  return r;
}

}  // namespace fabricsim::coll
