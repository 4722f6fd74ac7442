#include "fabrics/sim/faults.h"

#include <cstdio>

#include "fabrics/sim/system.h"
#include "models/core/errors.h"
#include "models/core/units.h"
#include "models/endpoint/endpoint.h"
#include "models/nic/nic.h"
#include "models/optics/ocs.h"

namespace fabricsim {

namespace {

std::string us_text(uint64_t ps) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f us", double(ps) * 1e-6);
  return buf;
}

std::string plural(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

FaultManager::FaultManager(sc_core::sc_module_name n, System& sys, const SystemSpec& spec)
    : sc_module(n),
      sys_(sys),
      plan_(spec.faults),
      device_down_(spec.graph.devices.size(), 0),
      down_count_(spec.graph.links.size(), 0),
      routed_down_(spec.graph.links.size(), 0),
      down_by_event_(spec.graph.links.size(), -1),
      ev_(spec.faults.events.size()) {
  action_alarm_ = Alarm{this, kAction};
  detect_alarm_ = Alarm{this, kDetect};
  reconf_alarm_ = Alarm{this, kReconfigured};
  bypass_alarm_ = Alarm{this, kBypass};
  // cube_fail: each switch's reconfiguration is accounted as an event of its own, after
  // the plan's.
  bypass_of_sub_.assign(ev_.size(), -1);
  for (size_t b = 0; b < plan_.bypasses.size(); ++b) {
    Bypass x;
    x.sub_base = int(ev_.size());
    for (size_t k = 0; k < plan_.bypasses[b].reconfigs.size(); ++k) bypass_of_sub_.push_back(int(b));
    ev_.resize(ev_.size() + plan_.bypasses[b].reconfigs.size());
    bypass_.push_back(x);
  }
  for (const FaultAction& a : plan_.actions)
    if (a.kind == FaultAction::kCubeFail) bypass_[size_t(a.target)].event = a.event;
  // The controller's slots: one per switch of every circuit map.
  ctl_of_sub_.assign(ev_.size(), 0);
  for (const auto& [name, rs] : plan_.circuit_maps) {
    map_sub_base_[name] = int(ev_.size());
    ev_.resize(ev_.size() + rs.size());
    bypass_of_sub_.resize(ev_.size(), -1);
    ctl_of_sub_.resize(ev_.size(), 1);
  }
  if (!plan_.bypasses.empty()) sys_.engine().keep_inputs(true);
  retransmit_ = std::make_unique<TimerQueue>("retransmit", [this](uint64_t) {
    Packet* p = retransmit_q_.pop();
    ++retransmitted_;
    sys_.endpoint(p->src)->retransmit(p);
  });
  if (!plan_.actions.empty()) Scheduler::instance().set(action_alarm_, plan_.actions[0].at_ps);
  for (const std::unique_ptr<DeviceModel>& d : sys_.devices())
    if (dynamic_cast<Nic*>(d.get())) has_transport_ = true;
  for (size_t l = 0; l < spec.graph.links.size(); ++l) {
    link_of_port_[&sys_.link_port(int(l), 0)] = int(l);
    link_of_port_[&sys_.link_port(int(l), 1)] = int(l);
  }
}

void FaultManager::wake(uint32_t what) {
  ++g_kernel_events;
  const uint64_t t = Scheduler::now();
  if (over_ || (done_ && done_())) return;  // the workload is over: nothing left to disturb
  if (what == kDetect) {
    detect();
    return;
  }
  if (what == kBypass) {
    while (!bypass_due_.empty() && bypass_due_.begin()->first <= t) {
      const int b = bypass_due_.begin()->second;
      bypass_due_.erase(bypass_due_.begin());
      if (bypass_[size_t(b)].step == 0)
        bypass_step(b);
      else
        bypass_resume(b);
    }
    if (!bypass_due_.empty()) Scheduler::instance().set(bypass_alarm_, bypass_due_.begin()->first);
    return;
  }
  if (what == kReconfigured) {
    while (!reconf_due_.empty() && reconf_due_.begin()->first <= t) {
      const int e = reconf_due_.begin()->second;
      reconf_due_.erase(reconf_due_.begin());
      reconfigured(e);
    }
    if (!reconf_due_.empty()) Scheduler::instance().set(reconf_alarm_, reconf_due_.begin()->first);
    return;
  }
  while (next_ < plan_.actions.size() && plan_.actions[next_].at_ps <= t) apply(plan_.actions[next_++]);
  if (next_ < plan_.actions.size())
    Scheduler::instance().set(action_alarm_, plan_.actions[next_].at_ps);
}

std::vector<char> FaultManager::down_now() const {
  std::vector<char> d(down_count_.size(), 0);
  for (size_t l = 0; l < d.size(); ++l) d[l] = down_count_[l] > 0;
  return d;
}

bool FaultManager::links_down() const {
  for (int c : down_count_)
    if (c > 0) return true;
  return false;
}

bool FaultManager::cut_off() const {
  return links_down() && !sys_.unreachable_ranks(down_now()).empty();
}

void FaultManager::set_link(int link, bool down, int event) {
  int& c = down_count_[size_t(link)];
  const bool was = c > 0;
  c += down ? 1 : -1;
  FABRICSIM_ASSERT(c >= 0, "faults: a link came up more often than it went down");
  if ((c > 0) == was) return;
  Port& a = sys_.link_port(link, 0);
  Port& b = sys_.link_port(link, 1);
  const uint64_t t = Scheduler::now();
  if (down) {
    down_by_event_[size_t(link)] = event;
    EventStats& e = ev_[size_t(event)];
    const uint64_t cut0 = a.fault_counters().cut_transactions + b.fault_counters().cut_transactions;
    const uint64_t bytes0 =
        a.fault_counters().cut_payload_bytes + b.fault_counters().cut_payload_bytes;
    a.link_down();
    b.link_down();
    e.cut += a.fault_counters().cut_transactions + b.fault_counters().cut_transactions - cut0;
    e.cut_bytes +=
        a.fault_counters().cut_payload_bytes + b.fault_counters().cut_payload_bytes - bytes0;
    if (e.open_since == UINT64_MAX) e.open_since = t;
  } else {
    const int owner = down_by_event_[size_t(link)];
    if (owner >= 0) ev_[size_t(owner)].replayed += a.held() + b.held();
    a.link_up();
    b.link_up();
    // Its outage is over for the event that took it down once none of its links is down.
    if (owner >= 0) {
      bool any = false;
      for (size_t l = 0; l < down_count_.size() && !any; ++l)
        any = down_count_[l] > 0 && down_by_event_[l] == owner;
      if (!any) {
        close_wait(owner, t);
        ev_[size_t(owner)].up_ps = t;
      }
    }
  }
  detections_.push(Detection{t + plan_.detection_ps, link, down});
  Scheduler::instance().set(detect_alarm_, detections_.front().at_ps);
}

void FaultManager::workload_done() {
  if (over_) return;
  over_ = true;
  const uint64_t t = Scheduler::now();
  bool any = false;
  for (size_t d = 0; d < device_down_.size(); ++d)
    if (device_down_[d]) {
      sys_.devices()[d]->recover();
      device_down_[d] = 0;
    }
  for (size_t l = 0; l < down_count_.size(); ++l) {
    if (down_count_[l] == 0) continue;
    any = true;
    const int owner = down_by_event_[l];
    down_count_[l] = 0;
    sys_.link_port(int(l), 0).link_up();
    sys_.link_port(int(l), 1).link_up();
    if (owner >= 0) close_wait(owner, t);
  }
  if (!any) return;
  healed_ps_ = t;
  std::fill(routed_down_.begin(), routed_down_.end(), 0);
  sys_.install_routes(routed_down_);
}

void FaultManager::close_wait(int event, uint64_t t) {
  EventStats& e = ev_[size_t(event)];
  if (e.open_since == UINT64_MAX) return;
  e.wait_ps += t - e.open_since;
  e.open_since = UINT64_MAX;
}

void FaultManager::apply(const FaultAction& a) {
  if (a.kind == FaultAction::kReconfigure) {  // counted when it starts (it may wait)
    reconfigure(a.event, a.target);
    return;
  }
  if (a.kind == FaultAction::kCubeFail) {
    cube_fail(a.event, a.target);
    return;
  }
  if (a.kind == FaultAction::kCircuitMap) {
    timed_map(a.event, plan_.timed_maps[size_t(a.target)]);
    return;
  }
  current_ = a.event;
  EventStats& e = ev_[size_t(a.event)];
  if (e.first_ps == UINT64_MAX) e.first_ps = Scheduler::now();
  ++e.actions;
  bool went_down = false;
  switch (a.kind) {
    case FaultAction::kLinkDown:
      set_link(a.target, true, a.event);
      went_down = true;
      break;
    case FaultAction::kLinkUp:
      set_link(a.target, false, a.event);
      break;
    case FaultAction::kDeviceDown:
      for (int l : sys_.links_of(a.target)) set_link(l, true, a.event);
      sys_.devices()[size_t(a.target)]->fail(*this);
      device_down_[size_t(a.target)] = 1;
      went_down = true;
      break;
    case FaultAction::kDeviceUp:
      sys_.devices()[size_t(a.target)]->recover();
      device_down_[size_t(a.target)] = 0;
      for (int l : sys_.links_of(a.target)) set_link(l, false, a.event);
      break;
    case FaultAction::kReconfigure:
    case FaultAction::kCubeFail:
    case FaultAction::kCircuitMap:
      break;  // above
    case FaultAction::kBer: {
      Port& p0 = sys_.link_port(a.target, 0);
      Port& p1 = sys_.link_port(a.target, 1);
      // The burst's own count: what the link's retry counters gain between its start (the
      // event's first action) and its end (its second).
      if (e.actions == 1) {
        const Port::Counters c0 = p0.counters(), c1 = p1.counters();
        e.crc0 = c0.crc_errors + c1.crc_errors;
        e.replays0 = c0.replays + c1.replays;
        e.retry0 = c0.retry_ps + c1.retry_ps;
        e.ber_link = a.target;
        e.in_burst = true;
      } else {
        burst_counts(e, e.crc_errors, e.replays, e.retry_ps);
        e.in_burst = false;
      }
      p0.set_ber(a.ber);
      p1.set_ber(a.ber);
      break;
    }
  }
  if (went_down) {
    last_down_ = a.event;
    if (ceiling_ && e.ceiling_GBps < 0) {
      if (ceiling0_ < 0) ceiling0_ = ceiling_(std::vector<char>(down_count_.size(), 0));
      e.ceiling_GBps = ceiling_(down_now());
    }
    e.up_ps = UINT64_MAX;
  }
  current_ = -1;
}

// ocs_reconfigure, planned by a controller rather than detected: at `at` the transmitters
// on every changed circuit stop (Port::link_down on the devices' side; the switch's own
// ports never transmit) and every device gets routes without those circuits at once. What
// was being serialised still goes through: it was handed to the far receiver when it
// started (a circuit is one link), nothing is cut. The mirrors start moving when its last
// light has passed them (the drain, at most one transaction plus the fibre) and the
// changed circuits are dark for exactly the switch's reconfiguration_time; then the new
// map is lit, the transmitters start again and the routes follow the new map. Credits of
// transactions that crossed an old circuit go back to their sender (Ocs keeps who sent
// what). A reconfiguration of a switch whose mirrors are still moving waits for them.
void FaultManager::reconfigure(int event, int r) {
  const OcsReconfig& rc = plan_.reconfigs[size_t(r)];
  if (reconf_wait_.count(rc.device)) {
    reconf_wait_[rc.device].push_back({event, r});
    return;
  }
  reconf_wait_[rc.device];  // the mirrors are busy
  if (port_link_base_.empty()) {
    port_link_base_.assign(sys_.devices().size() + 1, 0);
    const topo::Graph& g = sys_.graph();
    for (size_t d = 0; d < g.devices.size(); ++d)
      port_link_base_[d + 1] = port_link_base_[d] + g.devices[d].ports;
    port_link_.assign(size_t(port_link_base_.back()), -1);
    for (size_t l = 0; l < g.links.size(); ++l) {
      port_link_[size_t(port_link_base_[size_t(g.links[l].a.device)] + g.links[l].a.port)] = int(l);
      port_link_[size_t(port_link_base_[size_t(g.links[l].b.device)] + g.links[l].b.port)] = int(l);
    }
  }
  Ocs& ocs = dynamic_cast<Ocs&>(*sys_.devices()[size_t(rc.device)]);
  const uint64_t t = Scheduler::now();
  EventStats& e = ev_[size_t(event)];
  e.first_ps = t;
  ++e.actions;
  e.reconfig = r;
  const std::vector<int>& old = ocs.circuit_map();
  uint64_t last = t;
  for (size_t p = 0; p < old.size(); ++p) {
    if (old[p] == rc.map[p]) continue;
    e.changed.push_back(int(p));
    last = std::max(last, ocs.last_light_ps(int(p)));
    const int l = port_link_[size_t(port_link_base_[size_t(rc.device)]) + p];
    if (l < 0) continue;
    if (down_count_[size_t(l)]++ == 0) {
      down_by_event_[size_t(l)] = event;
      const topo::Link& k = sys_.graph().links[size_t(l)];
      sys_.link_port(l, k.a.device == rc.device ? 1 : 0).link_down();
    }
    routed_down_[size_t(l)] = 1;
  }
  e.changed_ports = int(e.changed.size());
  // Immediate switch: the mirrors move now. What a changed circuit's sender had put into
  // it and that had not all passed the mirrors is cut (taken from the far receiver's
  // arrivals, credits back to the sender) and recovered by the link's protocol as a link
  // failure's cut is.
  std::vector<Port*> senders;
  if (rc.immediate) {
    last = t;
    const auto device_side = [&](int port) -> Port* {
      const int l = port_link_[size_t(port_link_base_[size_t(rc.device)] + port)];
      if (l < 0) return nullptr;
      return &sys_.link_port(l, sys_.graph().links[size_t(l)].a.device == rc.device ? 1 : 0);
    };
    for (int p : e.changed) {
      const int o = old[size_t(p)];
      Port* s = device_side(p);
      Port* far = o >= 0 ? device_side(o) : nullptr;
      if (!s || !far) continue;
      const uint64_t bytes0 = s->fault_counters().cut_payload_bytes;
      const uint64_t n = s->cut_circuit(*far, ocs.pass_latency_ps());
      if (n == 0) continue;
      ocs.forget_owed(o, n);
      e.cut += n;
      e.cut_bytes += s->fault_counters().cut_payload_bytes - bytes0;
      senders.push_back(s);
    }
  }
  ocs.go_dark(e.changed);
  e.drain_ps = last - t;
  e.dark_from_ps = last;
  e.dark_until_ps = last + rc.dark_ps;
  e.unchanged_bytes0 = unchanged_passed(e);
  sys_.install_routes(routed_down_);
  if (recomputed_ps_.size() < 1000) recomputed_ps_.push_back(t);
  ++recomputations_;
  // What link-level replay kept of the cut goes back to its device, which sends it on the
  // new routes (not on the same fibre: its circuit now leads elsewhere).
  for (Port* s : senders) {
    e.rerouted += s->held();
    s->recover_held();
  }
  reconf_due_.emplace(e.dark_until_ps, event);
  Scheduler::instance().set(reconf_alarm_, reconf_due_.begin()->first);
}

uint64_t FaultManager::unchanged_passed(const EventStats& e) const {
  const OcsReconfig& rc = plan_.reconfigs[size_t(e.reconfig)];
  const Ocs& ocs = dynamic_cast<const Ocs&>(*sys_.devices()[size_t(rc.device)]);
  uint64_t b = 0;
  size_t k = 0;
  for (size_t p = 0; p < rc.map.size(); ++p) {
    if (k < e.changed.size() && e.changed[k] == int(p)) {
      ++k;
      continue;
    }
    b += ocs.passed_bytes(int(p));
  }
  return b;
}

void FaultManager::reconfigured(int event) {
  EventStats& e = ev_[size_t(event)];
  const OcsReconfig& rc = plan_.reconfigs[size_t(e.reconfig)];
  Ocs& ocs = dynamic_cast<Ocs&>(*sys_.devices()[size_t(rc.device)]);
  e.unchanged_bytes = unchanged_passed(e) - e.unchanged_bytes0;
  ocs.set_map(rc.map);
  sys_.set_circuit(rc.device, rc.map);
  for (int p : e.changed) {
    const int l = port_link_[size_t(port_link_base_[size_t(rc.device)] + p)];
    if (l < 0) continue;
    if (--down_count_[size_t(l)] == 0) {
      const topo::Link& k = sys_.graph().links[size_t(l)];
      sys_.link_port(l, k.a.device == rc.device ? 1 : 0).link_up();
      routed_down_[size_t(l)] = 0;
    }
  }
  e.up_ps = Scheduler::now();
  sys_.install_routes(routed_down_);
  if (recomputed_ps_.size() < 1000) recomputed_ps_.push_back(Scheduler::now());
  ++recomputations_;
  const std::vector<std::pair<int, int>> waiting = std::move(reconf_wait_[rc.device]);
  reconf_wait_.erase(rc.device);
  for (const auto& [ev, r] : waiting) reconfigure(ev, r);
  if (bypass_of_sub_[size_t(event)] >= 0) bypass_lit(bypass_of_sub_[size_t(event)]);
  if (ctl_of_sub_[size_t(event)]) ctl_lit(event);
}

bool FaultManager::has_circuit_map(const std::string& map) const {
  return plan_.circuit_maps.count(map) > 0;
}

void FaultManager::phase_starts(const std::string& phase, std::function<void()> go) {
  const auto it = plan_.phase_maps.find(phase);
  if (it == plan_.phase_maps.end()) {
    go();
    return;
  }
  req_.event = it->second.event;
  request_circuit_map(it->second.map, std::move(go));
}

// ocs_circuit_map: the controller's request at a time rather than at a phase boundary.
// One request at a time: a map whose time comes while the previous one is still
// reconfiguring waits for it (its switches' mirrors may be the same).
void FaultManager::timed_map(int event, const std::string& map) {
  if (req_.active) {
    timed_queue_.emplace_back(event, map);
    return;
  }
  ev_[size_t(event)].timed = true;
  req_.event = event;
  request_circuit_map(map, [this]() {
    if (timed_queue_.empty()) return;
    const std::pair<int, std::string> next = timed_queue_.front();
    timed_queue_.pop_front();
    timed_map(next.first, next.second);
  });
}

// The OCS controller: every switch of the map whose map in force differs takes it as a
// timed ocs_reconfigure would (its changed circuits stop, drain, go dark for its
// reconfiguration_time, the new map is lit, routes follow); `ready` once all are lit.
void FaultManager::request_circuit_map(const std::string& map, std::function<void()> ready) {
  const auto it = plan_.circuit_maps.find(map);
  if (it == plan_.circuit_maps.end())
    throw InternalError("OCS controller: no circuit map named '" + map + "'");
  if (req_.active)
    throw InternalError("OCS controller: circuit map '" + map +
                        "' requested while the previous request is still reconfiguring");
  const int event = req_.event;
  req_ = Request{};
  req_.event = event;
  req_.at_ps = Scheduler::now();
  req_.ready = std::move(ready);
  ++ctl_requests_;
  if (event >= 0) {
    EventStats& e = ev_[size_t(event)];
    ++e.requests;
    if (e.first_ps == UINT64_MAX) e.first_ps = req_.at_ps;
  }
  const int base = map_sub_base_.at(map);
  for (size_t k = 0; k < it->second.size(); ++k) {
    const OcsReconfig& rc = plan_.reconfigs[size_t(it->second[k])];
    const Ocs& ocs = dynamic_cast<const Ocs&>(*sys_.devices()[size_t(rc.device)]);
    if (ocs.circuit_map() == rc.map) continue;
    req_.subs.push_back(base + int(k));
  }
  if (req_.subs.empty()) {  // nothing changes: the phase runs at once
    std::function<void()> go = std::move(req_.ready);
    req_ = Request{};
    go();
    return;
  }
  req_.active = true;
  req_.pending = int(req_.subs.size());
  for (size_t j = 0; j < req_.subs.size(); ++j) {
    const int sub = req_.subs[j];
    ev_[size_t(sub)] = EventStats{};
    const size_t k = size_t(sub - base);
    reconfigure(sub, it->second[k]);
  }
}

// One switch of the request is lit; the last one releases the workload.
void FaultManager::ctl_lit(int sub) {
  const EventStats& s = ev_[size_t(sub)];
  if (req_.event >= 0) {
    EventStats& e = ev_[size_t(req_.event)];
    if (e.switches == 0) {
      e.ctl_first_dark_from_ps = s.dark_from_ps;
      e.ctl_first_dark_until_ps = s.dark_until_ps;
    }
    ++e.switches;
    e.ctl_changed += uint64_t(s.changed_ports);
    e.ctl_dark_ps += s.dark_until_ps - s.dark_from_ps;
    e.ctl_drain_ps += s.drain_ps;
    e.cut += s.cut;
    e.cut_bytes += s.cut_bytes;
    e.rerouted += s.rerouted;
    ++e.actions;
  }
  if (--req_.pending > 0) return;
  const uint64_t wait = Scheduler::now() - req_.at_ps;
  if (req_.event >= 0) {
    EventStats& e = ev_[size_t(req_.event)];
    if (e.ctl_wait_ps == 0) e.ctl_first_wait_ps = wait;  // the first that changed circuits
    e.ctl_wait_ps += wait;
  }
  std::function<void()> go = std::move(req_.ready);
  req_ = Request{};
  go();
}

// The failure: the job stops now. The collective's ops start no more (its deliveries are
// ignored), every DMA abandons what it had not cut into transactions; what is on the wire
// and in the routers drains to its destination (the fabric is lossless and the generic
// protocol has no end-to-end retransmission: dropping it would lose it for good; it is
// discarded on arrival, and the collective is run again from its inputs).
void FaultManager::cube_fail(int event, int b) {
  Bypass& x = bypass_[size_t(b)];
  EventStats& e = ev_[size_t(event)];
  const uint64_t t = Scheduler::now();
  e.first_ps = t;
  ++e.actions;
  x.event = event;
  x.failed_ps = t;
  x.halted_a_collective = sys_.engine().busy();
  x.ignored0 = sys_.engine().ignored_deliveries();
  sys_.engine().halt();
  for (const std::unique_ptr<DeviceModel>& d : sys_.devices())
    if (Endpoint* ep = dynamic_cast<Endpoint*>(d.get())) x.abandoned_bytes += ep->abandon_queued();
  x.sunk0 = sys_.payload_sunk();
  bypass_due_.emplace(t + plan_.detection_ps, b);
  Scheduler::instance().set(bypass_alarm_, bypass_due_.begin()->first);
}

bool FaultManager::quiet() const {
  for (const std::unique_ptr<DeviceModel>& d : sys_.devices())
    if (const Endpoint* ep = dynamic_cast<const Endpoint*>(d.get()))
      if (ep->sending()) return false;
  return sys_.payload_sourced() == sys_.payload_sunk();
}

// Detected: the controller reconfigures every switch of the pod once nothing of the
// stopped job is in flight (checked every 100 ns after the detection time; the wait is
// reported as drain_wait_ps and adds to the downtime).
void FaultManager::bypass_step(int b) {
  Bypass& x = bypass_[size_t(b)];
  const uint64_t t = Scheduler::now();
  if (x.detected_ps == 0) x.detected_ps = t;
  if (!quiet()) {
    bypass_due_.emplace(t + 100'000, b);
    return;
  }
  x.quiet_ps = t;
  x.drained_bytes = sys_.payload_sunk() - x.sunk0;
  for (const std::unique_ptr<DeviceModel>& d : sys_.devices())
    if (Endpoint* ep = dynamic_cast<Endpoint*>(d.get())) x.partial_bytes += ep->discard_partial();
  x.ignored_msgs = sys_.engine().ignored_deliveries() - x.ignored0;
  x.step = 1;
  const CubeBypass& cb = plan_.bypasses[size_t(b)];
  x.pending = int(cb.reconfigs.size());
  for (size_t k = 0; k < cb.reconfigs.size(); ++k)
    reconfigure(x.sub_base + int(k), cb.reconfigs[k]);
}

void FaultManager::bypass_lit(int b) {
  Bypass& x = bypass_[size_t(b)];
  x.lit_ps = std::max(x.lit_ps, Scheduler::now());
  if (--x.pending > 0) return;
  x.step = 2;
  bypass_due_.emplace(x.lit_ps + plan_.bypasses[size_t(b)].restart_ps, b);
  Scheduler::instance().set(bypass_alarm_, bypass_due_.begin()->first);
}

// The job runs again: the failed cube's ranks on the spare's chips (same place in the
// cube, so the same place in the torus), the collective from its start.
void FaultManager::bypass_resume(int b) {
  Bypass& x = bypass_[size_t(b)];
  const CubeBypass& cb = plan_.bypasses[size_t(b)];
  CollectiveEngine& eng = sys_.engine();
  std::vector<RankIo*> ranks;
  for (size_t r = 0; r < sys_.ranks().size(); ++r) {
    RankIo* io = eng.rank_io(int(r));
    for (const auto& [from, to] : cb.moves)
      if (io->id() == uint32_t(from)) io = sys_.endpoint(uint32_t(to));
    ranks.push_back(io);
  }
  x.resumed_ps = Scheduler::now();
  x.step = 3;
  eng.resume(ranks);
}

nlohmann::json FaultManager::bypass_json(int b) const {
  const Bypass& x = bypass_[size_t(b)];
  const CubeBypass& cb = plan_.bypasses[size_t(b)];
  nlohmann::json j;
  j["failed_cube"] = cb.failed_cube;
  j["spare_cube"] = cb.spare_cube;
  j["halted_a_collective"] = x.halted_a_collective;
  j["abandoned_payload_bytes"] = x.abandoned_bytes;
  j["drained_payload_bytes"] = x.drained_bytes;
  j["discarded_messages"] = x.ignored_msgs;
  j["discarded_partial_payload_bytes"] = x.partial_bytes;
  j["detected_ps"] = x.detected_ps;
  j["drain_wait_ps"] = x.quiet_ps ? x.quiet_ps - x.detected_ps : 0;
  uint64_t from = UINT64_MAX, until = 0;
  int changed = 0;
  nlohmann::json maps = nlohmann::json::object();
  for (size_t k = 0; k < cb.reconfigs.size(); ++k) {
    const EventStats& e = ev_[size_t(x.sub_base) + k];
    if (e.dark_from_ps != UINT64_MAX) from = std::min(from, e.dark_from_ps);
    if (e.dark_until_ps != UINT64_MAX) until = std::max(until, e.dark_until_ps);
    changed += e.changed_ports;
    const OcsReconfig& rc = plan_.reconfigs[size_t(cb.reconfigs[k])];
    nlohmann::json pairs = nlohmann::json::array();
    for (size_t q = 0; q < rc.map.size(); ++q)
      if (rc.map[q] > int(q)) pairs.push_back({int(q), rc.map[q]});
    maps[sys_.graph().devices[size_t(rc.device)].name] = pairs;
  }
  j["switches_reconfigured"] = cb.reconfigs.size();
  j["changed_ports"] = changed;
  if (from != UINT64_MAX) {
    j["dark_from_ps"] = from;
    j["dark_until_ps"] = until;
  }
  j["restart_time_ps"] = cb.restart_ps;
  j["resumed"] = x.resumed_ps != UINT64_MAX;
  if (x.resumed_ps != UINT64_MAX) {
    j["resumed_ps"] = x.resumed_ps;
    j["downtime_ps"] = x.resumed_ps - x.failed_ps;
  }
  nlohmann::json moves = nlohmann::json::array();
  for (const auto& [from_id, to_id] : cb.moves) moves.push_back({from_id, to_id});
  j["moved_endpoints"] = moves;
  j["new_circuits"] = maps;
  return j;
}

// The changes detected by now become the routes' view; every device gets new routes, then
// what failed links still hold goes back to their devices, which now know other ways.
void FaultManager::detect() {
  const uint64_t t = Scheduler::now();
  while (!detections_.empty() && detections_.front().at_ps <= t) {
    const Detection d = detections_.pop();
    routed_down_[size_t(d.link)] = d.down;
  }
  sys_.install_routes(routed_down_);
  if (recomputed_ps_.size() < 1000) recomputed_ps_.push_back(t);
  ++recomputations_;
  for (size_t l = 0; l < routed_down_.size(); ++l) {
    if (!routed_down_[l]) continue;
    for (int side = 0; side < 2; ++side) {
      Port& p = sys_.link_port(int(l), side);
      if (!p.link_is_down() || !p.held()) continue;
      if (down_by_event_[l] >= 0) ev_[size_t(down_by_event_[l])].rerouted += p.held();
      p.recover_held();
    }
  }
  // Outages whose every link the routes now avoid: their traffic no longer waits.
  for (size_t e = 0; e < ev_.size(); ++e) {
    if (ev_[e].open_since == UINT64_MAX) continue;
    bool all = true;
    for (size_t l = 0; l < down_count_.size() && all; ++l)
      if (down_count_[l] > 0 && down_by_event_[l] == int(e) && !routed_down_[l]) all = false;
    if (all) close_wait(int(e), t);
  }
  if (!detections_.empty()) Scheduler::instance().set(detect_alarm_, detections_.front().at_ps);
}

void FaultManager::burst_counts(const EventStats& e, uint64_t& crc, uint64_t& replays,
                                uint64_t& retry) const {
  const Port::Counters c0 = sys_.link_port(e.ber_link, 0).counters();
  const Port::Counters c1 = sys_.link_port(e.ber_link, 1).counters();
  crc = c0.crc_errors + c1.crc_errors - e.crc0;
  replays = c0.replays + c1.replays - e.replays0;
  retry = c0.retry_ps + c1.retry_ps - e.retry0;
}

int FaultManager::event_of(const Port& at, LossCause cause) const {
  if (cause == LossCause::kDeviceDown && current_ >= 0) return current_;
  const auto it = link_of_port_.find(&at);
  if (it != link_of_port_.end() && down_count_[size_t(it->second)] > 0)
    return down_by_event_[size_t(it->second)];
  if (current_ >= 0) return current_;
  return last_down_;
}

void FaultManager::lost(const Port& at, LossRecovery recovery, Packet* p, LossCause cause) {
  if (recovery == LossRecovery::kTransport && p->kind == PacketKind::kPause) {
    ++control_frames_lost_;  // a link-level frame: gone with its link, in no ledger
    PacketPool::global().release(p);
    return;
  }
  const int e = event_of(at, cause);
  EventStats* ev = e >= 0 ? &ev_[size_t(e)] : nullptr;
  ++lost_;
  lost_payload_ += p->payload_bytes;
  if (ev) {
    ++ev->lost;
    ev->lost_bytes += p->payload_bytes;
  }
  if (recovery == LossRecovery::kEndToEnd && sys_.endpoint(p->src)) {
    if (ev) ++ev->retransmitted;
    retransmit_q_.push(p);
    retransmit_->at(Scheduler::now() + plan_.retransmit_ps, 0);
    return;
  }
  if (recovery == LossRecovery::kTransport && has_transport_) {
    // A drop like a switch's: the NIC transport that sent it finds the loss (SACK gap,
    // timeout) and sends it again.
    ++ledger_drops_[loss_cause_name(cause)];
    ++transport_drops_;
    if (ev) {
      ++ev->transport_drops;
      if (p->payload_bytes > 0 && !(p->flags & kTrimmed)) {  // data: the flow lost a packet
        EventStats::FlowLoss& f = ev->flow_losses[{p->src, p->dst}];
        const uint64_t now = Scheduler::now();
        ++f.packets;
        f.first_ps = std::min(f.first_ps, now);
        f.last_ps = std::max(f.last_ps, now);
        f.first_sent_ps = std::min(f.first_sent_ps, p->tr().tx_ps);
        f.last_sent_ps = std::max(f.last_sent_ps, p->tr().tx_ps);
      }
    }
    PacketPool::global().release(p);
    return;
  }
  if (unrecovered_ == 0) {
    const char* how = cause == LossCause::kLinkDown     ? " (link to " : "";
    first_unrecovered_ = at.display_name() +
                         (cause == LossCause::kLinkDown ? how + at.peer_name() + " down)"
                          : cause == LossCause::kNoRoute ? std::string(" (no route after a fault)")
                                                         : std::string(" (device failed)")) +
                         " at " + us_text(Scheduler::now()) + ": " +
                         std::to_string(p->payload_bytes) + " B of a message from endpoint " +
                         std::to_string(p->src) + " to endpoint " + std::to_string(p->dst);
  }
  ++unrecovered_;
  unrecovered_payload_ += p->payload_bytes;
  if (ev) ++ev->lost_for_good;
  PacketPool::global().release(p);
}

void FaultManager::add_to_ledger(PacketLedger& l) const {
  for (const auto& kv : ledger_drops_) l.dropped[kv.first] += kv.second;
}

const FaultWindow* FaultManager::window_of(uint64_t t,
                                           const std::vector<FaultWindow>& windows) const {
  for (const FaultWindow& w : windows)
    if (t >= w.start_ps && t < w.end_ps) return &w;
  return nullptr;
}

uint64_t FaultManager::capacity_extra_ps(const EventStats& e, const FaultWindow* w) const {
  if (!w || e.ceiling_GBps < 0 || ceiling0_ <= 0 || e.ceiling_GBps >= ceiling0_ ||
      e.up_ps < w->end_ps)
    return 0;
  return uint64_t(double(w->end_ps - e.first_ps) * (1.0 - e.ceiling_GBps / ceiling0_));
}

nlohmann::json FaultManager::json(const std::vector<FaultWindow>& windows) const {
  nlohmann::json j;
  j["detection_time_ps"] = plan_.detection_ps;
  j["retransmit_timeout_ps"] = plan_.retransmit_ps;
  j["route_recomputations"] = recomputations_;
  if (healed_ps_ != UINT64_MAX) j["restored_at_end_ps"] = healed_ps_;
  j["route_recomputations_ps"] = recomputed_ps_;
  const uint64_t now = Scheduler::now();
  nlohmann::json events = nlohmann::json::array();
  for (size_t i = 0; i < plan_.events.size(); ++i) {
    const EventStats& e = ev_[i];
    nlohmann::json x;
    x["event"] = plan_.events[i];
    x["played"] = e.first_ps != UINT64_MAX;
    const FaultWindow* w = e.first_ps != UINT64_MAX ? window_of(e.first_ps, windows) : nullptr;
    if (e.first_ps != UINT64_MAX) {
      x["at_ps"] = e.first_ps;
      if (w) x["during"] = w->label;
    }
    x["actions_played"] = e.actions;
    x["cut_transactions"] = e.cut;
    x["cut_payload_bytes"] = e.cut_bytes;
    x["replayed_after_link_up"] = e.replayed;
    x["rerouted_after_detection"] = e.rerouted;
    x["lost_transactions"] = e.lost;
    x["lost_payload_bytes"] = e.lost_bytes;
    x["retransmitted_end_to_end"] = e.retransmitted;
    x["dropped_for_transport"] = e.transport_drops;
    if (!e.flow_losses.empty()) {
      nlohmann::json flows = nlohmann::json::array();
      uint64_t first = UINT64_MAX, last = 0;
      for (const auto& [k, f] : e.flow_losses) {
        flows.push_back({{"src", k.first},
                         {"dst", k.second},
                         {"packets", f.packets},
                         {"first_drop_ps", f.first_ps},
                         {"last_drop_ps", f.last_ps},
                         {"first_lost_sent_ps", f.first_sent_ps},
                         {"last_lost_sent_ps", f.last_sent_ps}});
        first = std::min(first, f.first_ps);
        last = std::max(last, f.last_ps);
      }
      x["first_data_drop_ps"] = first;
      x["last_data_drop_ps"] = last;
      x["data_drops_by_flow"] = flows;
    }
    x["lost_for_good"] = e.lost_for_good;
    x["traffic_wait_ps"] = e.wait_ps + (e.open_since != UINT64_MAX ? now - e.open_since : 0);
    if (e.ceiling_GBps >= 0) {
      x["ceiling_busbw_GBps_before"] = ceiling0_;
      x["ceiling_busbw_GBps_after"] = e.ceiling_GBps;
      x["capacity_extra_ps_estimate"] = capacity_extra_ps(e, w);
    }
    if (plan_.where.size() > i && e.requests > 0) {  // ocs_phase_map, ocs_circuit_map
      x["requests"] = e.requests;
      x["switch_reconfigurations"] = e.switches;
      x["changed_ports"] = e.ctl_changed;
      if (e.timed) {
        x["requested_ps"] = e.first_ps;
        x["all_lit_after_ps"] = e.ctl_wait_ps;  // from the request to the last switch lit
      } else {
        x["job_wait_ps"] = e.ctl_wait_ps;
        x["first_job_wait_ps"] = e.ctl_first_wait_ps;
      }
      x["first_dark_from_ps"] = e.ctl_first_dark_from_ps;
      x["first_dark_until_ps"] = e.ctl_first_dark_until_ps;
      x["dark_ps_summed_over_switches"] = e.ctl_dark_ps;
      x["drain_ps_summed_over_switches"] = e.ctl_drain_ps;
    }
    if (e.reconfig >= 0) {
      x["changed_ports"] = e.changed_ports;
      x["drain_ps"] = e.drain_ps;
      x["dark_from_ps"] = e.dark_from_ps;
      x["dark_until_ps"] = e.dark_until_ps;
      x["lit_again"] = e.up_ps != UINT64_MAX;
      if (e.up_ps != UINT64_MAX) x["unchanged_circuits_passed_payload_bytes"] = e.unchanged_bytes;
    }
    for (size_t b = 0; b < bypass_.size(); ++b)
      if (bypass_[b].event == int(i) && bypass_[b].failed_ps != UINT64_MAX)
        x["bypass"] = bypass_json(int(b));
    if (e.ber_link >= 0) {
      uint64_t crc = e.crc_errors, replays = e.replays, retry = e.retry_ps;
      if (e.in_burst) burst_counts(e, crc, replays, retry);
      x["crc_errors"] = crc;
      x["replays"] = replays;
      x["retry_ps"] = retry;
    }
    events.push_back(x);
  }
  j["events"] = events;
  uint64_t cut = 0, replayed = 0, recovered = 0, dropped = 0;
  for (const Port* p : sys_.ports()) {
    const Port::FaultCounters& f = p->fault_counters();
    cut += f.cut_transactions;
    replayed += f.replayed;
    recovered += f.recovered;
    dropped += f.dropped_arrivals;
  }
  j["cut_transactions"] = cut;
  j["replayed_after_link_up"] = replayed;
  j["rerouted_after_detection"] = recovered;
  j["dropped_at_failed_devices"] = dropped;
  j["lost_transactions"] = lost_;
  j["lost_payload_bytes"] = lost_payload_;
  j["retransmitted_end_to_end"] = retransmitted_;
  j["dropped_for_transport"] = transport_drops_;
  j["control_frames_lost"] = control_frames_lost_;
  j["lost_for_good"] = unrecovered_;
  j["lost_for_good_payload_bytes"] = unrecovered_payload_;
  return j;
}

std::vector<std::string> FaultManager::summary(const std::vector<FaultWindow>& windows) const {
  std::vector<std::string> out;
  const uint64_t now = Scheduler::now();
  for (size_t i = 0; i < plan_.events.size(); ++i) {
    const EventStats& e = ev_[i];
    std::string s = "# fault " + std::to_string(i) + ": " + plan_.events[i];
    if (e.first_ps == UINT64_MAX) {
      out.push_back(s + ": not played (the workload had finished)");
      continue;
    }
    const FaultWindow* w = window_of(e.first_ps, windows);
    if (w) s += ", during " + w->label;
    std::vector<std::string> parts;
    if (e.cut)
      parts.push_back(plural(e.cut, "transaction", "transactions") + " cut on the wire");
    if (e.replayed) parts.push_back(std::to_string(e.replayed) + " replayed once the link was up");
    if (e.rerouted) parts.push_back(std::to_string(e.rerouted) + " sent again on other routes");
    if (e.retransmitted)
      parts.push_back(plural(e.retransmitted, "transaction", "transactions") +
                      " lost and retransmitted end to end after the " +
                      format_time_ps(plan_.retransmit_ps) + " timeout");
    if (e.transport_drops)
      parts.push_back(plural(e.transport_drops, "packet", "packets") +
                      " dropped, recovered by the NIC transports");
    if (e.lost_for_good)
      parts.push_back(plural(e.lost_for_good, "transaction", "transactions") + " lost for good");
    const uint64_t wait = e.wait_ps + (e.open_since != UINT64_MAX ? now - e.open_since : 0);
    if (wait)
      parts.push_back("traffic for its links waited " + us_text(wait) +
                      (e.open_since != UINT64_MAX ? " (still waiting at the end)"
                                                  : " (until rerouted or up; detection " +
                                                        format_time_ps(plan_.detection_ps) + ")"));
    if (e.ceiling_GBps >= 0 && e.ceiling_GBps < ceiling0_) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "ceiling busbw with its links down %.2f GB/s (was %.2f)",
                    e.ceiling_GBps, ceiling0_);
      std::string c = buf;
      if (const uint64_t x = capacity_extra_ps(e, w)) {
        std::snprintf(buf, sizeof buf, ": the rest of the row, %.3f us, took ~%.3f us more than "
                      "at the full ceiling", double(w->end_ps - e.first_ps) * 1e-6,
                      double(x) * 1e-6);
        c += buf;
      }
      parts.push_back(c);
    } else if (e.ceiling_GBps >= 0) {
      parts.push_back("ceiling busbw unchanged with its links down (another path has the capacity)");
    }
    if (e.timed && e.switches == 0)
      parts.push_back("no circuit changed (the map was in force)");
    else if (e.timed)
      parts.push_back(plural(e.switches, "switch reconfiguration", "switch reconfigurations") +
                      " (" + std::to_string(e.ctl_changed) + " ports' circuits changed), all lit " +
                      us_text(e.ctl_wait_ps) + " after the request at " + us_text(e.first_ps) +
                      " (the first: dark from " + us_text(e.ctl_first_dark_from_ps) + " to " +
                      us_text(e.ctl_first_dark_until_ps) + ")");
    else if (e.requests > 0 && e.switches == 0)
      parts.push_back(plural(e.requests, "request", "requests") +
                      ", no circuit changed (the map was in force each time): the job did not "
                      "wait");
    else if (e.requests > 0)
      parts.push_back(plural(e.requests, "request", "requests") + ", " +
                      plural(e.switches, "switch reconfiguration", "switch reconfigurations") +
                      " (" + std::to_string(e.ctl_changed) + " ports' circuits changed): the "
                      "job waited " + us_text(e.ctl_wait_ps) + " in all (the first reconfiguration " +
                      us_text(e.ctl_first_wait_ps) + ": dark from " +
                      us_text(e.ctl_first_dark_from_ps) + " to " +
                      us_text(e.ctl_first_dark_until_ps) + ")");
    if (e.reconfig >= 0) {
      parts.push_back(std::to_string(e.changed_ports) + " ports' circuits changed, drained in " +
                      us_text(e.drain_ps) + ", dark from " + us_text(e.dark_from_ps) + " to " +
                      us_text(e.dark_until_ps) +
                      (e.up_ps != UINT64_MAX
                           ? "; the unchanged circuits passed " +
                                 std::to_string(e.unchanged_bytes) + " B meanwhile"
                           : " (the workload finished first)"));
    }
    for (size_t b = 0; b < bypass_.size(); ++b) {
      const Bypass& x = bypass_[b];
      if (x.event != int(i) || x.failed_ps == UINT64_MAX) continue;
      std::string t = std::string(x.halted_a_collective ? "the collective stopped" : "the job stopped") +
                      " (" + std::to_string(x.abandoned_bytes) + " B abandoned in the DMAs, " +
                      std::to_string(x.drained_bytes) + " B drained and discarded)";
      if (x.detected_ps) t += ", detected at " + us_text(x.detected_ps);
      if (x.quiet_ps > x.detected_ps) t += ", drained " + us_text(x.quiet_ps - x.detected_ps) + " later";
      if (x.step >= 2) t += ", the new circuits lit at " + us_text(x.lit_ps);
      if (x.resumed_ps != UINT64_MAX)
        t += ", running again on the spare at " + us_text(x.resumed_ps) + ": downtime " +
             us_text(x.resumed_ps - x.failed_ps);
      else
        t += " (not running again when the run ended)";
      parts.push_back(t);
    }
    if (e.ber_link >= 0) {
      uint64_t crc = e.crc_errors, replays = e.replays, retry = e.retry_ps;
      if (e.in_burst) burst_counts(e, crc, replays, retry);
      parts.push_back(std::to_string(crc) + " CRC errors and " + std::to_string(replays) +
                      " replays (link-level retry) costing " + us_text(retry) +
                      " of transmitter time");
    }
    if (!parts.empty()) {
      s += ": ";
      for (size_t k = 0; k < parts.size(); ++k) s += (k ? "; " : "") + parts[k];
    }
    out.push_back(s);
  }
  if (healed_ps_ != UINT64_MAX)
    out.push_back("# faults: links still down when the workload finished came back up then (" +
                  us_text(healed_ps_) + ") so that what was in flight could drain");
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "# faults: %llu route recomputations (detection %s), %llu transactions lost "
                "(%llu retransmitted end to end after %s, %llu dropped for the NIC "
                "transports, %llu lost for good)",
                (unsigned long long)recomputations_, format_time_ps(plan_.detection_ps).c_str(),
                (unsigned long long)lost_, (unsigned long long)retransmitted_,
                format_time_ps(plan_.retransmit_ps).c_str(),
                (unsigned long long)transport_drops_, (unsigned long long)unrecovered_);
  out.push_back(buf);
  return out;
}

std::string FaultManager::unfinished_reason() const {
  // The event to blame: the one that took down a link still down, else the first.
  int blame = -1;
  std::string down;
  size_t ndown = 0;
  for (size_t l = 0; l < down_count_.size(); ++l) {
    if (down_count_[l] == 0) continue;
    if (blame < 0) {
      blame = down_by_event_[l];
      // A switch the OCS controller is reconfiguring: its circuits are dark until it is
      // lit, which the run did not reach.
      if (blame >= 0 && ctl_of_sub_[size_t(blame)]) {
        uint64_t lit = 0;
        for (int sub : req_.subs) lit = std::max(lit, ev_[size_t(sub)].dark_until_ps);
        return (req_.event >= 0 ? plan_.where.at(size_t(req_.event)) + ": " : std::string()) +
               "the workload waits for the optical circuit switches the OCS controller is "
               "reconfiguring (their new circuits are lit at " + us_text(lit) + ")";
      }
      if (blame >= int(plan_.events.size()))  // a switch of a cube_fail: the failure
        blame = bypass_[size_t(bypass_of_sub_[size_t(blame)])].event;
    }
    if (++ndown <= 4) down += (down.empty() ? "" : ", ") + sys_.link_name(int(l));
  }
  if (ndown > 4) down += " and " + std::to_string(ndown - 4) + " more";
  if (unrecovered_ > 0) {
    int e = blame;
    for (size_t i = 0; i < ev_.size() && e < 0; ++i)
      if (ev_[i].lost_for_good) e = int(i);
    if (e < 0) e = plan_.actions.empty() ? 0 : plan_.actions[0].event;
    return plan_.where.at(size_t(e)) + ": the workload cannot finish: " +
           std::to_string(unrecovered_) + " transactions (" +
           std::to_string(unrecovered_payload_) + " B) were lost for good, the first at " +
           first_unrecovered_ + " (their protocol has no end-to-end retransmission, and what a "
           "failed switch held is gone); " + plan_.events.at(size_t(e)) +
           "; use a protocol that retransmits end to end, or a fault the link recovers from";
  }
  if (blame < 0) return "";
  const std::string cut_off = sys_.unreachable_ranks(routed_down_);
  return plan_.where.at(size_t(blame)) + ": the workload cannot finish: " +
         (cut_off.empty() ? std::string("traffic waits for links that stay down")
                          : cut_off) +
         " after " + plan_.events.at(size_t(blame)) + " (links down at the end: " + down +
         "); give it an up_at, or a system with another path";
}

}  // namespace fabricsim
