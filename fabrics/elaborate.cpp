#include "fabrics/elaborate.h"

#include <algorithm>

#include "models/core/errors.h"
#include "models/core/scheduler.h"
#include "models/nvlink/nvls_unit.h"
#include "models/pcie/root_complex.h"

namespace fabricsim {

System::System(const SystemSpec& spec) : spec_(spec) {
  Scheduler::instance();  // first, so it sits at the top of the module hierarchy
  const topo::Graph& g = spec.graph;
  const topo::Routes routes = topo::compute_routes(g);
  std::vector<Endpoint*> ep_of_device(g.devices.size(), nullptr);
  std::vector<Switch*> sw_of_device(g.devices.size(), nullptr);
  std::vector<std::vector<int>> used(g.devices.size());
  for (const topo::Link& l : g.links) {
    used[l.a.device].push_back(l.a.port);
    used[l.b.device].push_back(l.b.port);
  }
  for (size_t i = 0; i < g.devices.size(); ++i) {
    const topo::Device& d = g.devices[i];
    const DeviceType& dt = spec.device_types.at(d.type);
    if (d.is_switch) {
      Switch::Features features;
      if (dt.host.enabled) features.push_back(std::make_unique<RootComplex>(dt.host));
      if (dt.nvls.enabled) features.push_back(std::make_unique<NvlsUnit>(dt.nvls));
      switches_.push_back(
          std::make_unique<Switch>(d.name.c_str(), d.name, dt.sw, used[i], std::move(features)));
      sw_of_device[i] = switches_.back().get();
    } else {
      endpoints_.push_back(
          std::make_unique<Endpoint>(d.name.c_str(), d.name, uint32_t(d.endpoint_id), dt.endpoint));
      ep_of_device[i] = endpoints_.back().get();
    }
  }
  auto port_of = [&](const topo::LinkEnd& e) -> Port& {
    if (ep_of_device[e.device]) return ep_of_device[e.device]->port(e.port);
    return sw_of_device[e.device]->port(e.port);
  };
  for (const topo::Link& l : g.links) {
    Port& a = port_of(l.a);
    Port& b = port_of(l.b);
    bind_link(a, b, spec.link_types.at(l.type), spec.seed);
    all_ports_.push_back(&a);
    all_ports_.push_back(&b);
  }
  for (Port* p : all_ports_)
    stats_.add(p->display_name(), [p](uint64_t now) { return p->stats_json(now); });
  for (const auto& e : endpoints_) {
    Endpoint* ep = e.get();
    stats_.add(ep->display_name(), [ep](uint64_t now) { return ep->stats_json(now); });
  }
  for (const auto& s : switches_) {
    Switch* sw = s.get();
    stats_.add(sw->display_name(), [sw](uint64_t now) { return sw->stats_json(now); });
  }
  for (size_t i = 0; i < g.devices.size(); ++i) {
    if (ep_of_device[i]) ep_of_device[i]->set_routes(routes[i]);
    if (sw_of_device[i]) sw_of_device[i]->set_routes(routes[i]);
  }
  // Every switch's features learn the far end of each of its ports.
  for (size_t i = 0; i < g.devices.size(); ++i) {
    if (!sw_of_device[i]) continue;
    std::vector<SwitchPeer> peers(size_t(g.devices[i].ports));
    for (int port = 0; port < g.devices[i].ports; ++port) {
      const topo::LinkEnd e = g.peer(int(i), port);
      if (e.device >= 0)
        peers[size_t(port)] = SwitchPeer{e.device, g.devices[e.device].endpoint_id, e.port};
    }
    sw_of_device[i]->set_peers(peers);
  }
  // An endpoint stripes group traffic over its links into switch ports that offer
  // in-network collectives, in the order of its port numbers.
  std::vector<std::vector<int>> group_ports(g.devices.size());
  for (const topo::Link& l : g.links) {
    for (int side = 0; side < 2; ++side) {
      const topo::LinkEnd& s = side ? l.b : l.a;
      const topo::LinkEnd& e = side ? l.a : l.b;
      if (!sw_of_device[s.device] || !ep_of_device[e.device]) continue;
      if (sw_of_device[s.device]->offers_collectives(s.port))
        group_ports[e.device].push_back(e.port);
    }
  }
  for (size_t i = 0; i < g.devices.size(); ++i)
    if (ep_of_device[i] && !group_ports[i].empty()) {
      std::sort(group_ports[i].begin(), group_ports[i].end());
      ep_of_device[i]->set_group_ports(group_ports[i]);
    }
  const std::vector<Endpoint*> rk = ranks();
  engine_ = std::make_unique<CollectiveEngine>("collectives", rk, spec.workload.elem_bytes);
}

std::vector<Endpoint*> System::ranks() const {
  std::vector<Endpoint*> out;
  for (int id : spec_.ranks) out.push_back(endpoints_.at(id).get());
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

}  // namespace fabricsim
