#include "fabrics/sim/system.h"

#include <algorithm>

#include "models/core/errors.h"
#include "models/core/scheduler.h"
#include "models/endpoint/endpoint.h"

namespace fabricsim {

System::System(const SystemSpec& spec) : spec_(spec) {
  Scheduler::instance();  // first, so it sits at the top of the module hierarchy
  const topo::Graph& g = spec.graph;
  const topo::Routes routes = topo::compute_routes(g);
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
    devices_.push_back(type.kind->create(DeviceBuild{d.name, type, d.endpoint_id, used[i], run}));
    if (d.terminal) {
      Endpoint* e = devices_.back()->rank_interface();
      FABRICSIM_ASSERT(e, "device kind '" + type.kind->name + "' is terminal but its model has "
                          "no rank interface");
      by_endpoint_id_[size_t(d.endpoint_id)] = e;
    }
  }
  for (const topo::Link& l : g.links) {
    Port& a = devices_[l.a.device]->port(l.a.port);
    Port& b = devices_[l.b.device]->port(l.b.port);
    bind_link(a, b, spec.link_types.at(l.type), spec.seed);
    all_ports_.push_back(&a);
    all_ports_.push_back(&b);
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
  engine_ = std::make_unique<CollectiveEngine>("collectives", ranks(), spec.workload.elem_bytes);
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
