#include "fabrics/systems/auto_channels.h"

#include <algorithm>
#include <string>
#include <vector>

#include "models/collectives/nccl_channels.h"
#include "models/endpoint/endpoint_params.h"

namespace fabricsim {

namespace {

const char* kHint = "set workload.channels to a number (1..64)";

}  // namespace

void resolve_auto_channels(SystemSpec& spec, const cfg::Params& p) {
  WorkloadSpec& w = spec.workload;
  if (!w.channels_auto) return;
  const topo::Graph& g = spec.graph;
  const int n = int(spec.ranks.size());
  const int L = spec.domain_size > 0 && spec.domain_size < n ? spec.domain_size : n;
  // The link type on every (device, port).
  std::vector<std::vector<const topo::Link*>> link_of(g.devices.size());
  for (size_t d = 0; d < g.devices.size(); ++d) link_of[d].assign(size_t(g.devices[d].ports), nullptr);
  for (const topo::Link& l : g.links) {
    link_of[size_t(l.a.device)][size_t(l.a.port)] = &l;
    link_of[size_t(l.b.device)][size_t(l.b.port)] = &l;
  }
  coll::NcclSearchInput in;
  in.compute_capability = w.nccl_compute_capability;
  in.gpus_per_node = L;
  in.nodes = std::max(1, n / L);
  bool first = true;
  coll::NcclSearchResult least;
  for (int r = 0; r < n; ++r) {
    const int dev = g.endpoints[size_t(spec.ranks[size_t(r)])];
    const topo::Device& d = g.devices[size_t(dev)];
    const EndpointParams* ep = spec.type_of(dev).find<EndpointParams>("endpoint");
    if (!ep)
      p.fail("channels",
             "channels: auto applies NCCL's channel rule to GPUs; rank " + std::to_string(r) +
                 " is device '" + d.name + "' of type '" + d.type + "', not an endpoint",
             kHint);
    int nvl_ports = 0, nics = 0;
    double nic_GBps = 0;
    for (int port = 0; port < d.ports; ++port) {
      const topo::Link* l = link_of[size_t(dev)][size_t(port)];
      if (!l) continue;
      const topo::LinkEnd far = l->a.device == dev && l->a.port == port ? l->b : l->a;
      const LinkParams& lp = spec.link_types.at(l->type);
      if (port >= ep->ports) {  // a scale-out NIC port
        ++nics;
        nic_GBps = nics == 1 ? double(lp.rate_bps) / 8e9
                             : std::min(nic_GBps, double(lp.rate_bps) / 8e9);
        continue;
      }
      if (lp.protocol != "nvlink")
        p.fail("channels",
               "channels: auto is NCCL's graph search, which knows NVLink inside a node and "
               "NICs across nodes; '" + d.name + "' reaches its peers over " + lp.protocol +
                   " links (type '" + l->type + "'), for which no library rule is modelled",
               kHint);
      if (!g.devices[size_t(far.device)].forwards)
        p.fail("channels",
               "channels: auto covers GPUs joined through NVLink switches; '" + d.name +
                   "' is linked directly to '" + g.devices[size_t(far.device)].name +
                   "' (a mesh: NCCL/RCCL search rings over its links, not modelled here)",
               kHint);
      ++nvl_ports;
    }
    in.nvlink_GBps = nvl_ports * coll::nccl_nvlink_GBps(in.compute_capability);
    in.nics_per_gpu = nics;
    in.nic_GBps = nic_GBps;
    if (in.nodes > 1 && nics == 0)
      p.fail("channels",
             "channels: auto across nodes needs each GPU's NIC; '" + d.name +
                 "' has no linked NIC port",
             kHint);
    if (L > 1 && nvl_ports == 0)
      p.fail("channels",
             "channels: auto needs the GPUs of a node joined by NVLink; '" + d.name +
                 "' has no linked NVLink port",
             kHint);
    // NCCL takes the smallest count over the ranks (the all-gather of init.cc).
    const coll::NcclSearchResult res = coll::nccl_channels(in);
    if (first || res.channels < least.channels) least = res;
    first = false;
  }
  if (first) return;
  w.channels = least.channels;  // at most MAXCHANNELS (64): nccl_channels caps it
  w.channels_rule = "channels: auto = " + std::to_string(least.channels) +
                    " (NCCL's graph search: " + least.text() + ")";
  nlohmann::json& j = spec.resolved["workload"]["channels_auto"];
  j["channels"] = least.channels;
  j["searched"] = least.searched;
  j["searched_GBps"] = least.searched_GBps;
  j["graph"] = least.graph;
  j["graph_GBps"] = least.graph_GBps;
  j["gpus_per_node"] = in.gpus_per_node;
  j["nodes"] = in.nodes;
  j["nvlink_GBps_per_gpu"] = in.nvlink_GBps;
  j["nics_per_gpu"] = in.nics_per_gpu;
  j["nic_GBps"] = in.nic_GBps;
  j["compute_capability"] = in.compute_capability;
}

}  // namespace fabricsim
