#include "fabrics/systems/checks.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <set>

#include "fabrics/systems/estimate.h"
#include "fabrics/systems/rings.h"
#include "fabrics/topologies/graph.h"
#include "models/collectives/algorithms.h"
#include "models/core/text.h"
#include "models/core/types.h"
#include "models/core/units.h"
#include "models/nvlink/nvls_params.h"

namespace fabricsim {

namespace {

// One aggregated transaction must fit every receive buffer it crosses, or the sender could
// never collect enough credits. With link-level retry the replay buffer keeps a transaction
// until its ack is back, so it must hold one transaction plus what the line carries in an
// ack round trip, or the replay buffer, not the line, would set the throughput even without
// errors. On framing: ualink a packet's tail is the end of its codeword, up to a codeword
// after its last byte, so the round trip includes one codeword.
void check_link_buffers(const SystemSpec& s, const SpecSources& src) {
  const uint64_t agg = s.simulation.aggregate_bytes;
  for (const auto& [name, l] : s.link_types) {
    const uint64_t whole = l.aggregate ? std::max<uint64_t>(1, agg / l.packet_payload) : 1;
    const uint64_t wire = whole * l.framing->packet_wire_bytes(l.packet_payload);
    if (wire > l.rx_buffer_bytes)
      src.link_types.at(name).fail(
          "rx_buffer",
          "rx_buffer " + format_bytes(l.rx_buffer_bytes) + " cannot hold one transaction of " +
              format_bytes(whole * l.packet_payload) + " payload (" + format_bytes(wire) +
              " on the wire) set by simulation.aggregate_bytes " + format_bytes(agg),
          "raise rx_buffer to at least " + format_bytes(wire) +
              " or lower simulation.aggregate_bytes");
    if (l.ber <= 0) continue;
    const ReplayNeed need = replay_need(s, l);
    const bool ualink = need.codeword_ps > 0;
    const uint64_t cw_ps = need.codeword_ps, rtt_bytes = need.rtt_bytes;
    if (l.replay_buffer_bytes < wire + rtt_bytes) {
      char ber[32];
      std::snprintf(ber, sizeof ber, "%g", l.ber);
      src.link_types.at(name).fail(
          "replay_buffer",
          "replay_buffer " + format_bytes(l.replay_buffer_bytes) + " (" +
              std::to_string(l.replay_buffer_bytes) + " B) is smaller than one transaction (" +
              std::to_string(wire) + " B on the wire) + an ack round trip (" +
              (ualink ? "codeword " + format_time_ps(cw_ps) + " + " : std::string()) +
              "2 x latency " + format_time_ps(l.latency_ps) + " + ack_delay " +
              format_time_ps(l.ack_delay_ps) + " at " + format_bandwidth_bps(l.rate_bps) + " = " +
              std::to_string(rtt_bytes) + " B) with ber " + ber,
          "raise replay_buffer to at least " + std::to_string(wire + rtt_bytes) +
              "B, or lower latency, ack_delay or simulation.aggregate_bytes");
    }
  }
}

// One device of the system as its kind's check sees it.
class Check final : public DeviceCheck {
 public:
  // links_of: the indices of the links at `device`, in link order (one entry per end).
  Check(const SystemSpec& s, const SpecSources& src, int device, const std::vector<size_t>& links_of)
      : s_(s), src_(src), dev_(s.graph.devices[device]) {
    size_t last = SIZE_MAX;
    for (size_t i : links_of) {
      if (i == last) continue;  // a link from the device to itself: both ends below
      last = i;
      const topo::Link& l = s.graph.links[i];
      for (int side = 0; side < 2; ++side) {
        const topo::LinkEnd& me = side ? l.b : l.a;
        const topo::LinkEnd& peer = side ? l.a : l.b;
        if (me.device != device) continue;
        const topo::Device& pd = s.graph.devices[peer.device];
        links_.push_back(Attached{me.port, l.type, s.link_types.at(l.type), pd.name,
                                  s.device_types.at(pd.type)});
        sites_.push_back(&l.where);
      }
    }
  }
  const std::string& device() const override { return dev_.name; }
  const std::vector<int>& coords() const override { return dev_.coords; }
  const DeviceType& type() const override { return s_.device_types.at(dev_.type); }
  const std::vector<Attached>& links() const override { return links_; }
  [[noreturn]] void fail_param(const std::string& key, const std::string& problem,
                               const std::string& hint) const override {
    src_.device_types.at(dev_.type).Params::fail(key, problem, hint);  // non-virtual: noreturn
  }
  [[noreturn]] void fail_link(size_t i, const std::string& problem,
                              const std::string& hint) const override {
    cfg::fail(src_.file, *sites_.at(i), "topology", problem, hint);
  }

 private:
  const SystemSpec& s_;
  const SpecSources& src_;
  const topo::Device& dev_;
  std::vector<Attached> links_;
  std::vector<const YAML::Node*> sites_;
};

// True when one connected set of forwarding devices (switches) is linked to every rank:
// then every rank reaches every other, and no schedule needs probing. O(devices + links),
// where the probe below costs a routes table of devices x endpoints and the workload's
// whole schedule (ring: O(ranks^2) ops), which large systems cannot afford.
bool all_ranks_share_a_fabric(const SystemSpec& s) {
  const topo::Graph& g = s.graph;
  std::vector<int> parent(g.devices.size());
  for (size_t i = 0; i < parent.size(); ++i) parent[i] = int(i);
  const auto find = [&](int x) {
    while (parent[size_t(x)] != x) x = parent[size_t(x)] = parent[size_t(parent[size_t(x)])];
    return x;
  };
  for (const topo::Link& l : g.links)
    if (g.devices[size_t(l.a.device)].forwards && g.devices[size_t(l.b.device)].forwards)
      parent[size_t(find(l.a.device))] = find(l.b.device);
  // Candidates: the components the first rank is linked to; keep those every rank touches.
  std::vector<int> common;
  for (size_t r = 0; r < s.ranks.size(); ++r) {
    const int e = g.endpoints[size_t(s.ranks[r])];
    std::vector<int> mine;
    for (int p = 0; p < g.devices[size_t(e)].ports; ++p) {
      const topo::LinkEnd nb = g.peer(e, p);
      if (nb.device >= 0 && g.devices[size_t(nb.device)].forwards) mine.push_back(find(nb.device));
    }
    if (r == 0) {
      common = mine;
    } else {
      std::vector<int> keep;
      for (int c : common)
        if (std::find(mine.begin(), mine.end(), c) != mine.end()) keep.push_back(c);
      common.swap(keep);
    }
    if (common.empty()) return false;
  }
  return true;
}

// Every pair of ranks the workload's schedule talks over must be connected. When every
// rank can reach every other (the usual case) there is nothing to probe; otherwise build
// the schedule for a small size and check each sender reaches each receiver, so that the
// message names a pair the workload needs. Reachability is by components (topo::Reach):
// linear in the graph, where full routes are devices x endpoints.
void check_reachable(const SystemSpec& s, const SpecSources& src) {
  const WorkloadSpec& w = s.workload;
  const size_t n = s.ranks.size();
  const bool is_auto = w.algorithm == "auto" && !w.is_training;
  if (all_ranks_share_a_fabric(s)) return;
  const topo::Reach reach(s.graph);
  if (w.is_traffic) {  // the flows' own pairs
    for (const Flow& f : w.flows) {
      const int from = s.graph.endpoints[s.ranks[size_t(f.src)]];
      const int dst_id = s.ranks[size_t(f.dst)];
      if (!reach.connected(from, s.graph.endpoints[dst_id]))
        cfg::fail(src.file, src.topology, "topology",
                  "unreachable endpoint: " + s.graph.devices[from].name + " (rank " +
                      std::to_string(f.src) + ") has no path to " +
                      s.graph.devices[s.graph.endpoints[dst_id]].name + " (rank " +
                      std::to_string(f.dst) + "), which the " + w.type + " workload needs",
                  "link them through a switch");
    }
    return;
  }
  bool all = true;
  for (size_t r = 1; r < n && all; ++r)
    all = reach.connected(s.graph.endpoints[s.ranks[0]], s.graph.endpoints[s.ranks[r]]);
  if (all) return;
  coll::CollParams cp = w.coll_params(int(n), 4 * n * uint64_t(w.channels));
  cp.rings = &s.rings;
  // Training workloads talk over arbitrary rank pairs: probe every pair. auto may choose
  // any of its candidates (NCCL's algorithms of the collective, cost_model.cpp): every
  // candidate must be routable.
  std::vector<std::string> algos{w.algorithm};
  if (is_auto) {
    algos.clear();
    for (const std::string& a : coll::algorithms_for(w.collective)) {
      const coll::AlgoInfo& info = coll::algo_info(w.collective, a);
      if (info.torus ? w.torus.empty() : !info.nccl) continue;  // as auto
      if (!coll::uses_nvls_switches(a) ||
          std::find(s.auto_in_switch.begin(), s.auto_in_switch.end(), a) != s.auto_in_switch.end())
        algos.push_back(a);
    }
  }
  if (w.is_training) algos = {"direct"};
  for (const std::string& algo : algos) {
    const coll::Schedule probe = w.is_training
                                     ? coll::make_schedule("alltoall", "direct", cp)
                                     : coll::make_schedule(w.collective, algo, cp, s.domain_size);
    for (size_t r = 0; r < n; ++r) {
      const int from = s.graph.endpoints[s.ranks[r]];
      for (const coll::Op& op : probe.programs[r].ops) {
        if (op.kind != coll::OpKind::kSend) continue;
        const int dst_id = s.ranks[op.peer];
        if (reach.connected(from, s.graph.endpoints[dst_id])) continue;
        cfg::fail(src.file, src.topology, "topology",
                  "unreachable endpoint: " + s.graph.devices[from].name + " (rank " +
                      std::to_string(r) + ") has no path to " +
                      s.graph.devices[s.graph.endpoints[dst_id]].name + " (rank " +
                      std::to_string(op.peer) + "), which the " +
                      (w.is_training ? w.type + " workload" : algo + " " + w.collective) +
                      " needs",
                  is_auto ? "auto considers every algorithm of the collective: link them (e.g. "
                            "a spine tier above the rails) or name an algorithm"
                          : "link them through a switch, or reorder topology.ranks");
      }
    }
  }
}

}  // namespace

ReplayNeed replay_need(const SystemSpec& s, const LinkParams& l) {
  ReplayNeed n;
  const uint64_t agg = s.simulation.aggregate_bytes;
  const uint64_t whole = l.aggregate ? std::max<uint64_t>(1, agg / l.packet_payload) : 1;
  n.transaction_wire = whole * l.framing->packet_wire_bytes(l.packet_payload);
  // Framings whose packets become usable after their last byte (UALink: up to a codeword).
  const uint64_t slack = l.framing->replay_slack_bytes();
  n.codeword_ps = slack > 0 ? transfer_ps(slack, l.rate_bps) : 0;
  const uint64_t rtt_ps = n.codeword_ps + 2 * l.latency_ps + l.ack_delay_ps;
  n.rtt_bytes =
      uint64_t((u128(l.rate_bps) * rtt_ps + 8'000'000'000'000ull - 1) / 8'000'000'000'000ull);
  return n;
}

void check_system(SystemSpec& s, const SpecSources& src) {
  check_link_buffers(s, src);
  // Each device's links, in link order: O(links) instead of a scan of every link per device.
  std::vector<std::vector<size_t>> links_of(s.graph.devices.size());
  for (size_t i = 0; i < s.graph.links.size(); ++i) {
    links_of[size_t(s.graph.links[i].a.device)].push_back(i);
    links_of[size_t(s.graph.links[i].b.device)].push_back(i);
  }
  for (size_t d = 0; d < s.graph.devices.size(); ++d) {
    const DeviceKind& kind = *s.type_of(int(d)).kind;
    if (kind.check) kind.check(Check(s, src, int(d), links_of[d]));
  }
  const WorkloadSpec& w = s.workload;
  const size_t n = s.ranks.size();
  if (w.root >= int(n))
    src.workload.fail("root",
                      "root " + std::to_string(w.root) + " is not a rank (there are " +
                          std::to_string(n) + ")",
                      "use a rank from 0 to " + std::to_string(n - 1));
  if (coll::uses_nvls_switches(w.algorithm)) check_in_switch(s, src, w.algorithm);
  const bool is_auto = w.algorithm == "auto" && !w.is_training;
  // auto: an in-switch algorithm is a candidate exactly where naming it would pass its
  // checks (the same code; its complaint just removes the candidate). On one domain
  // hierarchical_nvls has nvls's reductions and stores (no level to cross): left to nvls.
  if (is_auto)
    for (const std::string& a : coll::algorithms_for(w.collective)) {
      if (!coll::uses_nvls_switches(a)) continue;
      if (a == "hierarchical_nvls" && (s.domain_size <= 0 || s.domain_size >= int(n))) continue;
      try {
        check_in_switch(s, src, a);
      } catch (const InputError&) {
        continue;
      }
      s.auto_in_switch.push_back(a);
    }
  // Before anything that grows with the system (the rings, the reachability probe,
  // elaboration).
  check_resources(s, src);
  if (!w.is_training) s.rings = topology_rings(s);
  check_reachable(s, src);
}

void check_in_switch(const SystemSpec& s, const SpecSources& src, const std::string& algorithm) {
  const bool per_node = algorithm == "hierarchical_nvls";
  const WorkloadSpec& w = s.workload;
  const std::string why = "the " + algorithm + " " + w.collective + " reduces in the switches";
  const auto fail_algo = [&](const std::string& problem, const std::string& hint) {
    src.workload.fail("algorithm", problem, hint);
  };
  std::set<int> rank_devices;
  for (int id : s.ranks) rank_devices.insert(s.graph.endpoints[id]);
  // node_of[device]: the rank's node (rank / domain_size), for per_node groups.
  const int L = s.domain_size > 0 ? s.domain_size : int(s.ranks.size());
  std::map<int, int> node_of;
  for (size_t r = 0; r < s.ranks.size(); ++r) node_of[s.graph.endpoints[s.ranks[r]]] = int(r) / L;
  std::map<int, std::set<int>> members;  // nvls switch -> endpoints linked to it
  for (const topo::Link& l : s.graph.links) {
    for (int side = 0; side < 2; ++side) {
      const int a = side ? l.b.device : l.a.device, b = side ? l.a.device : l.b.device;
      const topo::Device& da = s.graph.devices[a];
      const topo::Device& db = s.graph.devices[b];
      if (!da.forwards) continue;
      const NvlsParams* nvls = s.type_of(a).find<NvlsParams>("nvls");
      if (!nvls || !nvls->enabled) {
        if (rank_devices.count(b) && !per_node)
          fail_algo(db.name + " (a rank) is linked to " + da.name + ", whose type '" + da.type +
                        "' has nvls: false; " + why,
                    "set nvls: true (and nvls_reduce_bandwidth) on device type '" + da.type +
                        "', or use another algorithm");
        continue;
      }
      if (db.forwards)
        fail_algo(da.name + " has nvls: true and is linked to another switch (" + db.name +
                      "); " + why + " of one tier (every rank linked to every NVLS switch)",
                  "use a single tier of NVLS switches, or another algorithm");
      if (!rank_devices.count(b))
        fail_algo(da.name + " (nvls) is linked to " + db.name +
                      ", which is not a rank: its multicast group must be exactly the ranks",
                  "list it in topology.ranks, or unlink it");
      members[a].insert(b);
      const std::vector<std::string>& dts = nvls->datatypes;
      if (std::find(dts.begin(), dts.end(), w.datatype) == dts.end())
        src.workload.fail("datatype",
                          "the reduction engine of '" + da.type + "' (" + da.name +
                              ") does not reduce " + w.datatype +
                              " (nvls_datatypes: " + join_list(dts) + ")",
                          "use one of " + join_list(dts) + ", or another algorithm");
    }
  }
  for (const auto& [sw, eps] : members) {
    if (!per_node) continue;
    const int node = node_of.at(*eps.begin());
    for (int d : eps)
      if (node_of.at(d) != node)
        fail_algo(s.graph.devices[sw].name + " (nvls) is linked to " +
                      s.graph.devices[*eps.begin()].name + " (node " + std::to_string(node) +
                      ") and " + s.graph.devices[d].name + " (node " +
                      std::to_string(node_of.at(d)) + "); " + why +
                      " of one node, so an NVLS switch's group must be one node's ranks",
                  "link each node's ranks to their own NVLS switches, or use hierarchical");
    if (int(eps.size()) != L)
      fail_algo(s.graph.devices[sw].name + " (nvls) is linked to " + std::to_string(eps.size()) +
                    " of the " + std::to_string(L) + " ranks of node " + std::to_string(node) +
                    "; " + why + ", so every NVLS switch of a node must reach all of its ranks",
                "link every rank of the node to every NVLS switch of the node, or use "
                "hierarchical");
  }
  for (const auto& [sw, eps] : members)
    if (!per_node && eps.size() != rank_devices.size())
      fail_algo(s.graph.devices[sw].name + " (nvls) is linked to " + std::to_string(eps.size()) +
                    " of the " + std::to_string(rank_devices.size()) + " ranks; " + why +
                    ", so every NVLS switch must reach every rank",
                "link every rank to every NVLS switch, or use another algorithm");
  for (int d : rank_devices) {
    bool any = false;
    for (const auto& [sw, eps] : members) any = any || eps.count(d);
    if (!any)
      fail_algo(s.graph.devices[d].name + " (a rank) is not linked to any NVLS switch; " + why,
                "link it to the NVLS switches, or use another algorithm");
  }
}

}  // namespace fabricsim
