#include "fabrics/sim/system.h"

#include <algorithm>
#include <functional>

#include "fabrics/sim/faults.h"
#include "models/core/errors.h"
#include "models/core/scheduler.h"
#include "models/core/units.h"
#include "models/endpoint/endpoint.h"

namespace fabricsim {

System::System(const SystemSpec& spec) : spec_(spec) {
  Scheduler::instance();  // first, so it sits at the top of the module hierarchy
  const topo::Graph& g = spec.graph;
  const topo::Routes& routes = spec.routes();  // shared with the ring orders and the ceiling
  std::vector<std::vector<int>> used(g.devices.size());
  for (const topo::Link& l : g.links) {
    used[l.a.device].push_back(l.a.port);
    used[l.b.device].push_back(l.b.port);
  }
  const RunSettings run = spec.run_settings();
  by_endpoint_id_.assign(g.endpoints.size(), nullptr);
  for (size_t i = 0; i < g.devices.size(); ++i) {
    const topo::Device& d = g.devices[i];
    const DeviceType& type = spec.type_of(int(i));
    devices_.push_back(
        type.kind->create(DeviceBuild{d.name, type, d.endpoint_id, used[i], run, d.coords}));
    if (d.terminal) {
      Endpoint* e = devices_.back()->rank_interface();
      FABRICSIM_ASSERT(e, "device kind '" + type.kind->name + "' is terminal but its model has "
                          "no rank interface");
      by_endpoint_id_[size_t(d.endpoint_id)] = e;
    }
  }
  links_of_.resize(g.devices.size());
  for (size_t i = 0; i < g.links.size(); ++i) {
    const topo::Link& l = g.links[i];
    Port& a = devices_[l.a.device]->port(l.a.port);
    Port& b = devices_[l.b.device]->port(l.b.port);
    // A link with bit-error bursts planned keeps its replay buffer even at ber 0.
    const bool replay = spec.faults.any() && spec.faults.replay_links[i];
    bind_link(a, b, spec.link_types.at(l.type), spec.seed, replay);
    all_ports_.push_back(&a);
    all_ports_.push_back(&b);
    link_ports_.emplace_back(&a, &b);
    links_of_[size_t(l.a.device)].push_back(int(i));
    links_of_[size_t(l.b.device)].push_back(int(i));
  }
  for (Port* p : all_ports_)
    stats_.add(p->display_name(), [p](uint64_t now) { return p->stats_json(now); });
  for (const auto& m : devices_) {
    DeviceModel* dm = m.get();
    stats_.add(dm->display_name(), [dm](uint64_t now) { return dm->stats_json(now); });
  }
  for (size_t i = 0; i < g.devices.size(); ++i) devices_[i]->set_routes(routes[i]);
  for (size_t i = 0; i < g.devices.size(); ++i) {
    std::vector<DeviceModel::Peer> peers;
    for (int p = 0; p < g.devices[i].ports; ++p) {
      const topo::LinkEnd e = g.peer(int(i), p);
      if (e.device < 0) continue;
      peers.push_back(
          {p, devices_[e.device].get(), e.device, e.port, g.devices[e.device].endpoint_id});
    }
    devices_[i]->connected(peers);
  }
  set_path_latencies(routes);
  engine_ = std::make_unique<CollectiveEngine>("collectives", ranks(), spec.workload.elem_bytes);
  if (spec.faults.any()) {
    faults_ = std::make_unique<FaultManager>("faults", *this, spec);
    for (Port* p : all_ports_) p->set_loss_handler(faults_.get());
  }
}

// Modules go in the reverse of their construction: SystemC's port, export and module
// registries look for the one being removed from their end, so removal in construction
// order scanned the whole registry each time (1 s of teardown on the 576-GPU domain's
// 41,472 ports; seconds more on larger fabrics).
System::~System() {
  faults_.reset();
  engine_.reset();
  while (!devices_.empty()) devices_.pop_back();
}

std::string System::link_name(int link) const {
  return link_ports_[size_t(link)].first->display_name() + "-" +
         link_ports_[size_t(link)].second->display_name();
}

void System::set_circuit(int device, std::vector<int> map) {
  if (!live_graph_) live_graph_ = std::make_unique<topo::Graph>(spec_.graph);
  live_graph_->set_circuit(device, std::move(map));
}

void System::install_routes(const std::vector<char>& down) {
  const topo::Graph g = topo::without_links(graph(), down);
  const topo::Routes routes = topo::compute_routes(g);
  for (size_t i = 0; i < devices_.size(); ++i) devices_[i]->set_routes(routes[i]);
}

std::string System::unreachable_ranks(const std::vector<char>& down) const {
  const topo::Graph g = topo::without_links(graph(), down);
  const topo::Reach reach(g);
  const std::vector<int>& ranks = spec_.ranks;
  for (size_t r = 0; r < ranks.size(); ++r)
    for (size_t q = 0; q < ranks.size(); ++q) {
      const int a = g.endpoints[size_t(ranks[r])], b = g.endpoints[size_t(ranks[q])];
      if (r != q && !reach.connected(a, b))
        return g.devices[size_t(a)].name + " (rank " + std::to_string(r) + ") has no path to " +
               g.devices[size_t(b)].name + " (rank " + std::to_string(q) + ")";
    }
  return "";
}

// Unloaded one-way latency from every device that asks (DeviceModel::wants_path_latencies)
// to every endpoint along its routes: per hop the link's latency, the receiving port's
// pipeline and one packet's serialisation (a full packet of the link's packet_payload, or
// a header-only one), the smallest over the equal-cost choices. Memoised per destination.
void System::set_path_latencies(const topo::Routes& routes) {
  std::vector<int> wanting;
  for (size_t i = 0; i < devices_.size(); ++i)
    if (devices_[i]->wants_path_latencies()) wanting.push_back(int(i));
  if (wanting.empty()) return;
  const topo::Graph& g = spec_.graph;
  using PL = DeviceModel::PathLatency;
  std::vector<std::vector<PL>> out(wanting.size(), std::vector<PL>(g.endpoints.size()));
  std::vector<PL> memo(g.devices.size());
  std::vector<char> done(g.devices.size());
  for (size_t dst = 0; dst < g.endpoints.size(); ++dst) {
    std::fill(done.begin(), done.end(), 0);
    const int target = g.endpoints[dst];
    done[size_t(target)] = 1;
    memo[size_t(target)] = PL{};
    // Routes strictly approach the destination, so the recursion ends within its diameter.
    std::function<PL(int)> lat = [&](int v) -> PL {
      if (done[size_t(v)]) return memo[size_t(v)];
      PL best{UINT64_MAX, UINT64_MAX};
      for (int port : routes[size_t(v)][dst]) {
        const topo::LinkEnd far = g.peer(v, port);
        const Port& tx = devices_[size_t(v)]->port(port);
        const Port& rx = devices_[size_t(far.device)]->port(far.port);
        const LinkParams& l = tx.link();
        const uint64_t fixed = l.latency_ps + rx.rx_latency_ps();
        const PL rest = lat(far.device);
        const uint64_t d = fixed + transfer_ps(l.framing->packet_wire_bytes(l.packet_payload), l.rate_bps);
        const uint64_t c = fixed + transfer_ps(l.framing->packet_wire_bytes(0), l.rate_bps);
        best.data_ps = std::min(best.data_ps, d + rest.data_ps);
        best.control_ps = std::min(best.control_ps, c + rest.control_ps);
      }
      if (best.data_ps == UINT64_MAX) best = PL{};  // unreachable: unknown
      done[size_t(v)] = 1;
      memo[size_t(v)] = best;
      return best;
    };
    for (size_t w = 0; w < wanting.size(); ++w) out[w][dst] = lat(wanting[w]);
  }
  for (size_t w = 0; w < wanting.size(); ++w) devices_[size_t(wanting[w])]->set_path_latencies(out[w]);
}

std::vector<Endpoint*> System::ranks() const {
  std::vector<Endpoint*> out;
  for (int id : spec_.ranks) out.push_back(by_endpoint_id_.at(size_t(id)));
  return out;
}

uint64_t System::transaction_hops() const {
  uint64_t n = 0;
  for (Port* p : all_ports_) n += p->counters().tx_transactions;
  return n;
}

uint64_t System::packet_hops() const {
  uint64_t n = 0;
  for (Port* p : all_ports_) n += p->counters().tx_packets;
  return n;
}

uint64_t System::payload_bytes_moved() const {
  uint64_t n = 0;
  for (Port* p : all_ports_) n += p->counters().tx_payload_bytes;
  return n;
}

Port::Counters System::retry_totals() const {
  Port::Counters t;
  for (Port* p : all_ports_) {
    const Port::Counters& c = p->counters();
    t.crc_errors += c.crc_errors;
    t.replays += c.replays;
    t.replay_wire_bytes += c.replay_wire_bytes;
    t.retry_ps += c.retry_ps;
    t.replay_stall_ps += c.replay_stall_ps;
    t.tx_wire_bytes += c.tx_wire_bytes;
  }
  return t;
}

uint64_t System::payload_sourced() const {
  uint64_t n = 0;
  for (const auto& d : devices_) n += d->payload_sourced();
  return n;
}

uint64_t System::payload_sunk() const {
  uint64_t n = 0;
  for (const auto& d : devices_) n += d->payload_sunk();
  return n;
}

std::vector<std::string> System::credit_waits(size_t max) const {
  std::vector<const Port*> waiting;
  for (const Port* p : all_ports_)
    if (p->credit_wait_since_ps() != UINT64_MAX) waiting.push_back(p);
  std::stable_sort(waiting.begin(), waiting.end(), [](const Port* a, const Port* b) {
    return a->credit_wait_since_ps() < b->credit_wait_since_ps();
  });
  std::vector<std::string> out;
  for (size_t i = 0; i < waiting.size() && i < max; ++i)
    out.push_back(waiting[i]->display_name() + " (since " +
                  format_time_ps(waiting[i]->credit_wait_since_ps()) + ")");
  if (waiting.size() > max) out.push_back("and " + std::to_string(waiting.size() - max) + " more");
  return out;
}

std::string System::credits_check() const {
  for (const Port* p : all_ports_) {
    std::string s = p->credits_check();
    if (!s.empty()) return s;
  }
  return "";
}

PacketLedger System::ledger() const {
  PacketLedger l;
  for (const auto& d : devices_) d->add_to_ledger(l);
  if (faults_) faults_->add_to_ledger(l);
  return l;
}

uint64_t System::messages_in_flight() const {
  uint64_t n = 0;
  for (const auto& d : devices_) n += d->messages_in_flight();
  return n;
}

uint64_t System::idle_at() const {
  uint64_t t = 0;
  for (const auto& d : devices_) t = std::max(t, d->idle_at());
  return t;
}

void System::reset_dynamic_state() {
  for (const auto& d : devices_) d->reset_dynamic_state();
}

}  // namespace fabricsim
