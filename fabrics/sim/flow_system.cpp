#include "fabrics/sim/flow_system.h"

#include <algorithm>
#include <functional>

#include "models/core/errors.h"
#include "models/core/types.h"
#include "models/core/units.h"
#include "models/endpoint/endpoint.h"

namespace fabricsim {

// ------------------------------------------------------------------------------------
// FlowRank

uint64_t FlowRank::send(uint32_t dst, uint64_t bytes, uint64_t tag, PacketKind kind, uint8_t,
                        uint64_t not_before, uint32_t packet_cap) {
  return sys_->send(*this, dst, bytes, tag, kind, not_before, packet_cap);
}

bool FlowRank::via_nic(uint32_t dst) const {
  return sys_->path(rank_, dst).first_port_max >= params_->ports;
}

uint64_t FlowRank::send_group(PacketKind, uint64_t, uint64_t) {
  throw InternalError("flow level: in-switch (NVLS) collectives are not modelled at flow level");
}

uint64_t FlowRank::reduce(uint64_t bytes) {
  const uint64_t now = Scheduler::now();
  const uint64_t start = std::max(now, reduce_busy_ps_);
  // As the endpoint: a reduction reads two operands and writes the result.
  const uint64_t dur = memory_Bps_ ? transfer_ps(3 * bytes, memory_Bps_ * 8) : 0;
  reduce_busy_ps_ = start + dur;
  return reduce_busy_ps_;
}

// ------------------------------------------------------------------------------------
// FlowSystem

FlowSystem::FlowSystem(sc_core::sc_module_name n, const SystemSpec& spec)
    : sc_module(n), spec_(spec), g_(spec.graph), search_(spec.graph) {
  Scheduler::instance();
  alarm_ = Alarm{this, 0};
  dma_window_ = uint32_t(spec.simulation.flow_window);
  n_ = int(spec.ranks.size());
  m_ = n_;
  L_ = spec.domain_size;
  std::map<std::string, uint16_t> lt_index;
  for (const auto& [name, lp] : spec.link_types) {
    lt_index[name] = uint16_t(link_types_.size());
    link_types_.push_back(&lp);
  }
  port_base_.resize(g_.devices.size() + 1, 0);
  for (size_t d = 0; d < g_.devices.size(); ++d)
    port_base_[d + 1] = port_base_[d] + uint32_t(g_.devices[d].ports);
  port_link_.assign(port_base_.back(), -1);
  link_type_of_.resize(g_.links.size());
  for (size_t i = 0; i < g_.links.size(); ++i) {
    const topo::Link& l = g_.links[i];
    link_type_of_[i] = lt_index.at(l.type);
    port_link_[port_base_[size_t(l.a.device)] + uint32_t(l.a.port)] = int32_t(2 * i);
    port_link_[port_base_[size_t(l.b.device)] + uint32_t(l.b.port)] = int32_t(2 * i + 1);
  }
  // Arrivals at a device wait its pipeline (switches, NICs: their pipeline_latency).
  std::map<std::string, uint64_t> rx_of_type;
  for (const auto& [name, dt] : spec.device_types) {
    uint64_t ps = 0;
    const auto& j = spec.resolved["device_types"];
    if (j.contains(name) && j[name].contains("pipeline_latency") && j[name]["pipeline_latency"].is_string())
      ps = parse_time_ps(j[name]["pipeline_latency"].get<std::string>());
    rx_of_type[name] = ps;
  }
  rx_ps_.resize(g_.devices.size());
  for (size_t d = 0; d < g_.devices.size(); ++d) rx_ps_[d] = rx_of_type.at(g_.devices[d].type);
  class_of_.resize(2 * g_.links.size());
  for (size_t i = 0; i < class_of_.size(); ++i) class_of_[i] = uint32_t(i);
  orbit_size_.assign(class_of_.size(), 1);
  if (spec.simulation.flow_fold) plan_fold();
  res_class_.assign(class_of_.size(), -1);
  frac_.assign(g_.devices.size(), 0.0);
  std::vector<RankIo*> io;
  for (int r = 0; r < n_; ++r) {
    const int dev = g_.endpoints[size_t(spec.ranks[size_t(r)])];
    const DeviceType& t = spec.type_of(dev);
    const EndpointParams* ep = std::any_cast<EndpointParams>(&t.params.at(0));
    FABRICSIM_ASSERT(ep, "flow level: rank device is not an endpoint");
    ranks_.push_back(std::make_unique<FlowRank>(this, uint32_t(r), ep));
    io.push_back(ranks_.back().get());
  }
  engine_ = std::make_unique<CollectiveEngine>("collectives", io, spec.workload.elem_bytes);
  // The engine's protocol model runs here as at the packet level (docs/fidelity.md,
  // "Cross-check: flow against packet / transaction level"): its thread blocks, slots,
  // fences and polls are the engine's; the flow level delivers its messages (a send's
  // channel-rate floor as not_before, LL's store size as packet_cap) and its control
  // messages with their trip.
}

FlowSystem::~FlowSystem() = default;

double FlowSystem::wire_ratio(uint16_t link, uint64_t bytes, uint32_t cap) const {
  const LinkParams& l = *link_types_[link];
  uint64_t pp = l.packet_payload ? l.packet_payload : bytes;
  if (cap) pp = std::min<uint64_t>(pp, cap);
  const uint64_t full = bytes / pp, rem = bytes % pp;
  const double wire = double(full) * double(l.framing->packet_wire_bytes(uint32_t(pp))) +
                      (rem ? double(l.framing->packet_wire_bytes(uint32_t(rem))) : 0.0);
  return wire / double(bytes);
}

uint64_t FlowSystem::serialisation_ps(const Path& p, uint64_t bytes, bool first_hop,
                                      uint32_t cap) const {
  uint64_t t = 0;
  for (size_t i = first_hop ? 0 : 1; i < p.hops.size(); ++i) {
    const LinkParams& l = *link_types_[p.hops[i]];
    uint64_t pkt = std::min<uint64_t>(bytes, l.packet_payload);
    if (cap) pkt = std::min<uint64_t>(pkt, cap);
    t += transfer_ps(l.framing->packet_wire_bytes(uint32_t(pkt)), l.rate_bps);
  }
  return t;
}

const FlowSystem::Path& FlowSystem::path(uint32_t src_rank, uint32_t dst_rank) {
  const uint64_t key = uint64_t(src_rank) << 32 | dst_rank;
  auto it = paths_.find(key);
  if (it != paths_.end()) return it->second;
  const int s = g_.endpoints[size_t(spec_.ranks[src_rank])];
  const int d = g_.endpoints[size_t(spec_.ranks[dst_rank])];
  FABRICSIM_ASSERT(s != d, "flow level: a message to itself");
  // Distances to d through forwarding devices, until s is reached.
  if (!search_.search(s, d))
    throw InputError(spec_.file + ": topology: no path from " + g_.devices[size_t(s)].name +
                     " to " + g_.devices[size_t(d)].name + " through forwarding devices");
  Path path;
  // The route ports of v towards d: peers one step closer that relay (or are d).
  auto route_ports = [&](int v, std::vector<int>& out) { search_.route_ports(v, out); };
  std::vector<int> ports;
  // Split the flow equally over the route ports at every hop, level by level.
  std::unordered_map<uint32_t, size_t> use_of;  // class -> index in path.uses
  const double images = double(n_) / double(m_);
  std::vector<int> cur{s}, nxt, frac_touched{s};
  frac_[size_t(s)] = 1.0;
  uint64_t sig = 0xcbf29ce484222325ull;
  while (!cur.empty()) {
    nxt.clear();
    for (int v : cur) {
      if (v == d) continue;
      route_ports(v, ports);
      FABRICSIM_ASSERT(!ports.empty(), "flow level: a path node without a route");
      const double f = frac_[size_t(v)] / double(ports.size());
      for (int p : ports) {
        if (v == s) {
          sig = (sig ^ uint64_t(p + 1)) * 0x100000001b3ull;
          path.first_port_max = std::max(path.first_port_max, p);
        }
        const int32_t dl = port_link_[port_base_[size_t(v)] + uint32_t(p)];
        const uint32_t cls = class_of_[size_t(dl)];
        auto [u, fresh] = use_of.emplace(cls, path.uses.size());
        if (fresh) {
          if (res_class_[cls] < 0) {
            const LinkParams& lp = *link_types_[link_type_of_[size_t(dl) / 2]];
            res_class_[cls] = int32_t(net_.add_resource(double(lp.rate_bps) / 8e12));
          }
          path.uses.push_back(FlowNet::Use{uint32_t(res_class_[cls]), 0.0});
          path.use_link.push_back(link_type_of_[size_t(dl) / 2]);
        }
        path.uses[u->second].weight += f * images / double(orbit_size_[cls]);
        const int w = g_.peer(v, p).device;
        if (frac_[size_t(w)] == 0.0) {
          nxt.push_back(w);
          frac_touched.push_back(w);
        }
        frac_[size_t(w)] += f;
      }
    }
    cur.swap(nxt);
  }
  // The latency path: at every hop the port with the least link latency + pipeline.
  for (int v = s; v != d;) {
    route_ports(v, ports);
    int best = -1;
    uint64_t best_ps = UINT64_MAX;
    for (int p : ports) {
      const int32_t dl = port_link_[port_base_[size_t(v)] + uint32_t(p)];
      const int w = g_.peer(v, p).device;
      const uint64_t t = link_types_[link_type_of_[size_t(dl) / 2]]->latency_ps + rx_ps_[size_t(w)];
      if (t < best_ps) best_ps = t, best = p;
    }
    const int32_t dl = port_link_[port_base_[size_t(v)] + uint32_t(best)];
    path.hops.push_back(link_type_of_[size_t(dl) / 2]);
    path.fixed_ps += best_ps;
    v = g_.peer(v, best).device;
  }
  path.signature = sig;
  for (int v : frac_touched) frac_[size_t(v)] = 0.0;
  return paths_.emplace(key, std::move(path)).first->second;
}

uint64_t FlowSystem::send(FlowRank& r, uint32_t dst, uint64_t bytes, uint64_t tag,
                          PacketKind kind, uint64_t not_before, uint32_t packet_cap) {
  FABRICSIM_ASSERT(dst < uint32_t(n_), "flow level: message to an unknown rank");
  const uint64_t now = Scheduler::now();
  const uint32_t k = dst / uint32_t(m_);
  Msg msg;
  msg.src = r.rank_;
  msg.dst_rank = dst - k * uint32_t(m_);
  msg.from = uint32_t((uint64_t(r.rank_) + uint64_t(n_) - uint64_t(k) * uint64_t(m_)) % uint64_t(n_));
  msg.kind = kind;
  msg.bytes = bytes;
  msg.tag = tag;
  msg.not_before = not_before;
  msg.packet_cap = packet_cap;
  msg.id = next_msg_++;
  msg.path = &path(r.rank_, dst);
  msg.queue = 0;
  uint32_t slot;
  if (!free_msgs_.empty()) {
    slot = free_msgs_.back();
    free_msgs_.pop_back();
    msgs_[slot] = msg;
  } else {
    slot = uint32_t(msgs_.size());
    msgs_.push_back(msg);
  }
  ++messages_;
  ++live_msgs_;
  sent_bytes_ += double(bytes) * double(n_) / double(m_);
  if (kind != PacketKind::kData || bytes == 0) {
    // Control messages: latency and their packets' serialisation, no bandwidth share.
    ++control_;
    deliver_at(slot, std::max(now, not_before) + msgs_[slot].path->fixed_ps +
                         serialisation_ps(*msgs_[slot].path, bytes, true, packet_cap));
    poke();
    return msg.id;
  }
  uint32_t q = 0;
  while (q < r.queues_.size() && r.queues_[q].signature != msg.path->signature) ++q;
  if (q == r.queues_.size()) r.queues_.push_back(FlowRank::Queue{msg.path->signature, {}, 0});
  msgs_[slot].queue = q;
  FlowRank::Queue& queue = r.queues_[q];
  if (r.interleave_ || queue.active < dma_window_) {
    ++queue.active;
    start_flow(slot);
  } else {
    queue.waiting.push_back(slot);
  }
  poke();
  return msg.id;
}

void FlowSystem::start_flow(uint32_t slot) {
  static thread_local std::vector<FlowNet::Use> uses;
  const Msg& m = msgs_[slot];
  uses = m.path->uses;
  for (size_t i = 0; i < uses.size(); ++i) uses[i].weight *= wire_ratio(m.path->use_link[i], m.bytes, m.packet_cap);
  net_.start(Scheduler::now(), double(m.bytes), uses, slot);
}

void FlowSystem::deliver_at(uint32_t slot, uint64_t at_ps) {
  deliveries_.push_back(Delivery{at_ps, dseq_++, slot});
  std::push_heap(deliveries_.begin(), deliveries_.end(), std::greater<Delivery>());
}

void FlowSystem::poke() {
  if (in_wake_) return;
  Scheduler::instance().set(alarm_, Scheduler::now());
}

void FlowSystem::wake(uint32_t) {
  ++g_kernel_events;
  in_wake_ = true;
  const uint64_t now = Scheduler::now();
  for (;;) {
    net_.settle(now);
    done_.clear();
    net_.finish_due(now, done_);
    for (uint64_t c : done_) {
      const uint32_t slot = uint32_t(c);
      const Msg& m = msgs_[slot];
      FlowRank& src = *ranks_[m.src];
      FlowRank::Queue& q = src.queues_[m.queue];
      --q.active;
      if (!q.waiting.empty()) {
        ++q.active;
        start_flow(q.waiting.front());
        q.waiting.pop_front();
      }
      deliver_at(slot, std::max(now, m.not_before) + m.path->fixed_ps +
                           serialisation_ps(*m.path, m.bytes, false, m.packet_cap));
      if (src.on_sent_) src.on_sent_(m.id, m.kind);
    }
    bool delivered = false;
    while (!deliveries_.empty() && deliveries_.front().at_ps <= now) {
      std::pop_heap(deliveries_.begin(), deliveries_.end(), std::greater<Delivery>());
      const uint32_t slot = deliveries_.back().msg;
      deliveries_.pop_back();
      const Msg m = msgs_[slot];
      free_msgs_.push_back(slot);
      --live_msgs_;
      delivered_bytes_ += double(m.bytes) * double(n_) / double(m_);
      FlowRank& dst = *ranks_[m.dst_rank];
      if (dst.on_delivery_) dst.on_delivery_(RankIo::Delivery{m.from, m.kind, m.tag, m.bytes, m.id});
      delivered = true;
    }
    if (!net_.dirty() && done_.empty() && !delivered) break;
    if (!net_.dirty() && net_.next_finish() > now &&
        (deliveries_.empty() || deliveries_.front().at_ps > now))
      break;
  }
  in_wake_ = false;
  uint64_t next = net_.next_finish();
  if (!deliveries_.empty()) next = std::min(next, deliveries_.front().at_ps);
  if (next != UINT64_MAX) Scheduler::instance().set(alarm_, next);
}

// Folding. Devices are "local" to the node (domain) of the endpoints they link to when all
// those endpoints are in one node (its scale-up switches, its NICs), "global" otherwise
// (rails, spines, leaves). The shift by t nodes maps the j-th local device of node k to
// the j-th of node k + t (mod nodes) and every global device to itself; it is a symmetry
// if every link maps onto a link of the same type between the images of its ends (ports
// kept on local ends). Directed links are then grouped into orbits (union-find).
void FlowSystem::plan_fold() {
  const auto fail = [&](const std::string& why) {
    throw InputError(spec_.file + ": simulation.flow_fold: " + why +
                     "; hint: set simulation.flow_fold: false");
  };
  if (L_ <= 0 || L_ >= n_ || n_ % L_ != 0) fail("the system has no nodes (domains) to shift");
  const int N = n_ / L_;
  // A ring all-reduce on rail-aligned rings alternates its direction inside the nodes from
  // one node to the next (algorithms.h, rail_ring_orders): its period is two nodes.
  const WorkloadSpec& w = spec_.workload;
  // (auto may pick the ring.)
  int t = (w.collective == "all_reduce" && (w.algorithm == "ring" || w.algorithm == "auto")) ? 2 : 1;
  if (N % t != 0 || N / t < 2) fail("the " + std::to_string(N) + " nodes hold no repeating period of " + std::to_string(t) + " nodes");
  const size_t D = g_.devices.size();
  std::vector<int> dom(D, -2);  // -2 unknown, -1 global, else node
  for (int r = 0; r < n_; ++r) dom[size_t(g_.endpoints[size_t(spec_.ranks[size_t(r)])])] = r / L_;
  for (size_t v = 0; v < D; ++v) {
    if (dom[v] != -2) continue;
    int k = -2;
    for (int p = 0; p < g_.devices[v].ports; ++p) {
      const topo::LinkEnd e = g_.peer(int(v), p);
      if (e.device < 0 || !g_.devices[size_t(e.device)].terminal) continue;
      const int kd = dom[size_t(e.device)];
      if (kd < 0) { k = -1; break; }  // a terminal outside the ranks
      k = (k == -2 || k == kd) ? kd : -1;
    }
    dom[v] = k < 0 ? -1 : k;
  }
  std::vector<std::vector<int>> locals(static_cast<size_t>(N));
  std::vector<int> local_index(D, -1);
  for (size_t v = 0; v < D; ++v)
    if (dom[v] >= 0) {
      local_index[v] = int(locals[size_t(dom[v])].size());
      locals[size_t(dom[v])].push_back(int(v));
    }
  for (int k = 1; k < N; ++k) {
    if (locals[size_t(k)].size() != locals[0].size())
      fail("node " + std::to_string(k) + " has " + std::to_string(locals[size_t(k)].size()) +
           " devices of its own, node 0 has " + std::to_string(locals[0].size()));
    for (size_t j = 0; j < locals[0].size(); ++j)
      if (g_.devices[size_t(locals[size_t(k)][j])].type != g_.devices[size_t(locals[0][j])].type)
        fail("device " + g_.devices[size_t(locals[size_t(k)][j])].name + " is not of the type of " +
             g_.devices[size_t(locals[0][j])].name);
  }
  const auto image = [&](int v) {
    return dom[size_t(v)] < 0 ? v : locals[size_t((dom[size_t(v)] + t) % N)][size_t(local_index[size_t(v)])];
  };
  std::vector<uint32_t> parent(2 * g_.links.size());
  for (size_t i = 0; i < parent.size(); ++i) parent[i] = uint32_t(i);
  std::function<uint32_t(uint32_t)> find = [&](uint32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (size_t i = 0; i < g_.links.size(); ++i) {
    const topo::Link& l = g_.links[i];
    if (dom[size_t(l.a.device)] < 0 && dom[size_t(l.b.device)] < 0) continue;
    const bool a_local = dom[size_t(l.a.device)] >= 0;
    const topo::LinkEnd e = a_local ? l.a : l.b, o = a_local ? l.b : l.a;
    const int ie = image(e.device), iother = image(o.device);
    const int32_t dl = port_link_[port_base_[size_t(ie)] + uint32_t(e.port)];
    const topo::LinkEnd far = g_.peer(ie, e.port);
    if (dl < 0 || far.device != iother || (dom[size_t(o.device)] >= 0 && far.port != o.port) ||
        g_.links[size_t(dl) / 2].type != l.type)
      fail("the link " + g_.devices[size_t(l.a.device)].name + " - " +
           g_.devices[size_t(l.b.device)].name + " has no image " +
           g_.devices[size_t(ie)].name + " - " + g_.devices[size_t(iother)].name +
           " when the nodes shift by " + std::to_string(t));
    // Direction e -> o of link i maps to ie -> io: dl itself (dl is ie's outgoing end).
    const uint32_t from_e = uint32_t(2 * i + (a_local ? 0 : 1));
    const uint32_t img = uint32_t(dl);
    parent[find(from_e)] = find(img);
    parent[find(from_e ^ 1u)] = find(img ^ 1u);
  }
  orbit_size_.assign(parent.size(), 0);
  for (size_t i = 0; i < parent.size(); ++i) {
    class_of_[i] = find(uint32_t(i));
    ++orbit_size_[class_of_[i]];
  }
  fold_t_ = t;
  m_ = t * L_;
}

void FlowSystem::fold_schedule(coll::Schedule& s) const {
  if (m_ == n_) return;
  FABRICSIM_ASSERT(int(s.programs.size()) == n_, "flow fold: schedule rank count");
  const auto& a = s.programs[0].ops;
  const auto& b = s.programs[size_t(m_)].ops;
  auto differs = [&](const std::string& what) {
    throw InputError(spec_.file + ": simulation.flow_fold: the " + s.algorithm +
                     " schedule is not invariant under shifting the ranks by " +
                     std::to_string(m_) + " (" + what + "); hint: set simulation.flow_fold: false");
  };
  if (a.size() != b.size())
    differs("rank " + std::to_string(m_) + " has " + std::to_string(b.size()) + " ops, rank 0 " +
            std::to_string(a.size()));
  for (size_t i = 0; i < a.size(); ++i) {
    const coll::Op &x = a[i], &y = b[i];
    const bool peer_ok =
        (x.peer < 0 && y.peer < 0) || (x.peer >= 0 && y.peer == (x.peer + m_) % n_);
    if (x.kind != y.kind || !peer_ok || x.tag != y.tag || x.count != y.count ||
        x.mode != y.mode || x.duration_ps != y.duration_ps || x.deps != y.deps ||
        x.stream != y.stream || x.channel != y.channel)
      differs(coll::describe_op(m_, i, y) + " against " + coll::describe_op(0, i, x));
  }
  for (size_t r = size_t(m_); r < s.programs.size(); ++r) {
    std::vector<coll::Op>().swap(s.programs[r].ops);
  }
}

nlohmann::json FlowSystem::stats_json() const {
  return {{"fidelity", "flow"},
          {"ranks_simulated", m_},
          {"fold_nodes", fold_t_},
          {"messages", messages_},
          {"control_messages", control_},
          {"flows", net_.flows_started()},
          {"flow_rates_recomputed", net_.recomputed_flows()},
          {"paths", paths_.size()},
          {"link_classes", net_.resources()}};
}

}  // namespace fabricsim
