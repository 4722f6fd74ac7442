#include "models/switch/output_queued.h"

namespace fabricsim {

OutputQueuedSwitch::OutputQueuedSwitch(sc_core::sc_module_name n, std::string display_name,
                                       const SwitchParams& p, const std::vector<int>& used_ports,
                                       Features features)
    : Switch(n, std::move(display_name), p, used_ports, std::move(features)),
      nq_(std::max(1, p.traffic_classes) + 1),
      dwrr_(p.egress_scheduler == "dwrr"),
      q_(size_t(p.ports) * size_t(nq_)),
      qbytes_(q_.size(), 0),
      sel_(size_t(p.ports), -1),
      cur_(size_t(p.ports), 0),
      deficit_(q_.size(), 0),
      nonempty_(size_t(p.ports), 0) {
  FABRICSIM_ASSERT(p.input_queues == "output", "OutputQueuedSwitch needs input_queues: output");
  for (int c = 0; c < ncls_; ++c) {
    const int64_t w = size_t(c) < p.class_weights.size() ? p.class_weights[size_t(c)] : 1;
    quantum_.push_back(w * int64_t(std::max<uint64_t>(p.dwrr_quantum_bytes, 1)));
  }
  for (int i = 0; i < p.ports; ++i) resume_.push_back(Alarm{this, uint32_t(i) << 1 | kResume});
  // A frame's receive buffer frees when its tail is in and the links cover the credit loop
  // (checked by the kinds on this frame): no credit accounting into this switch.
  for (const std::unique_ptr<Port>& port : ports_)
    if (port) port->set_credit_free_rx();
}

void OutputQueuedSwitch::reset_dynamic_state() {
  for (size_t i = 0; i < q_.size(); ++i)
    FABRICSIM_ASSERT(q_[i].empty(), display_name_ + ": reset with queued traffic");
  Switch::reset_dynamic_state();
  std::fill(sel_.begin(), sel_.end(), -1);
  std::fill(cur_.begin(), cur_.end(), 0);
  std::fill(deficit_.begin(), deficit_.end(), int64_t(0));
  for (Alarm& a : resume_) Scheduler::instance().cancel(a);
}

void OutputQueuedSwitch::wake(uint32_t what) {
  if (what & kResume) {
    ++g_kernel_events;
    if (ports_[what >> 1]) ports_[what >> 1]->kick();
    return;
  }
  Switch::wake(what);
}

void OutputQueuedSwitch::rx_arrive(int in, Packet* p) {
  if (SwitchFeature* f = claim_[size_t(p->kind)]) {
    f->arrive(in, p);
    return;
  }
  const uint64_t t = Port::now();
  const int r = router_ ? router_->route(in, *p) : -1;
  p->route_port = r >= 0 ? r : select_route(in, *p);
  if (__builtin_expect(p->route_port < 0, 0)) {  // no route after a fault
    ports_[size_t(in)]->lose(p, LossCause::kNoRoute);
    return;
  }
  // The MAC's receive buffer is free once the tail is in: the port is credit-free (no
  // release_rx).
  p->in_port = uint16_t(in);
  const int o = p->route_port;
  out_load_[o] += p->payload_bytes;
  if (!admission_.empty() && !admit(o, p, true)) return;
  push(o, p, t);
}

void OutputQueuedSwitch::emit(int out, Packet* p) {
  const uint64_t t = Port::now();
  p->head_ps = p->tail_ps = t;
  if (!admission_.empty() && !admit(out, p, false)) return;
  out_load_[out] += p->payload_bytes;
  push(out, p, t);
}

void OutputQueuedSwitch::push(int out, Packet* p, uint64_t t) {
  if (__builtin_expect(ports_[size_t(out)]->link_is_down(), 0)) {
    push_down(out, p);
    return;
  }
  const int c = queue_of(*p);
  const size_t q = size_t(out) * nq_ + size_t(c);
  q_[q].push(p);
  if (c < ncls_) nonempty_[size_t(out)] |= 1u << c;
  qbytes_[q] += p->payload_bytes;
  egress_bytes_[out] += p->payload_bytes;
  set_level(out, t);
  ports_[out]->kick();
}

// The control queue first; then the data classes by strict priority (higher class first)
// or DWRR, skipping classes whose head's priority is paused. If every waiting head is
// paused, offers nothing and wakes the port when the first pause ends.
Packet* OutputQueuedSwitch::tx_peek(int port) {
  const size_t base = size_t(port) * nq_;
  int& sel = sel_[port];
  if (!q_[base + ncls_].empty()) {
    sel = ncls_;
    return q_[base + ncls_].front();
  }
  // The waiting classes, less those whose head's priority is paused.
  const Port& pt = *ports_[port];
  uint32_t eligible = nonempty_[size_t(port)];
  uint64_t first_end = UINT64_MAX;
  for (uint32_t m = eligible; m; m &= m - 1) {
    const int c = __builtin_ctz(m);
    const uint8_t prio = q_[base + size_t(c)].front()->tc;
    if (pt.paused(prio)) {
      eligible &= ~(1u << c);
      first_end = std::min(first_end, pt.paused_until(prio));
    }
  }
  if (!eligible) {
    sel = -1;
    if (first_end != UINT64_MAX) Scheduler::instance().set(resume_[size_t(port)], first_end);
    return nullptr;
  }
  if (!dwrr_) {  // strict: the highest eligible class
    sel = 31 - __builtin_clz(eligible);
    return q_[base + size_t(sel)].front();
  }
  // DWRR: the pointer stays on a class while its deficit covers its head; moving on grants
  // the next class a quantum; ineligible (empty or paused) classes keep no deficit. Ends
  // because an eligible class gains a quantum on every visit.
  int& cur = cur_[port];
  for (;;) {
    int64_t& d = deficit_[base + size_t(cur)];
    if (eligible >> cur & 1) {
      if (d >= int64_t(q_[base + size_t(cur)].front()->payload_bytes)) {
        sel = cur;
        return q_[base + size_t(cur)].front();
      }
    } else {
      d = 0;
    }
    cur = (cur + 1) % ncls_;
    deficit_[base + size_t(cur)] += quantum_[size_t(cur)];
  }
}

void OutputQueuedSwitch::tx_pop(int port, Packet* p) {
  const int c = sel_[port];
  const size_t i = size_t(port) * nq_ + size_t(c);
  FABRICSIM_ASSERT(c >= 0 && !q_[i].empty() && q_[i].front() == p,
                   display_name_ + ": popped a packet that was not offered");
  q_[i].pop();
  if (c < ncls_ && q_[i].empty()) nonempty_[size_t(port)] &= ~(1u << c);
  qbytes_[i] -= p->payload_bytes;
  if (dwrr_ && c < ncls_) deficit_[i] = q_[i].empty() ? 0 : deficit_[i] - p->payload_bytes;
  egress_bytes_[port] -= p->payload_bytes;
  out_load_[port] -= p->payload_bytes;
  set_level(port, Port::now());
  for (SwitchFeature* f : departure_) f->departed(port, *p);
}

}  // namespace fabricsim
