#include "models/nic/nic.h"

#include <algorithm>

#include "models/core/errors.h"

namespace fabricsim {

Nic::Nic(sc_core::sc_module_name n, std::string display_name, const NicParams& p,
         const std::vector<int>& used_ports, const MakeTransport& make)
    : sc_module(n),
      display_name_(std::move(display_name)),
      p_(p),
      net_(p.host_ports),
      ports_(size_t(p.host_ports) + 1),
      make_(make),
      host_payload_(size_t(p.host_ports), 0),
      host_q_(size_t(p.host_ports)),
      host_q_bytes_(size_t(p.host_ports), 0) {
  PacketPool::global().enable_transport();  // tx_ps, pause frames, its transport's fields
  for (int i : used_ports) {
    FABRICSIM_ASSERT(i >= 0 && i <= net_ && !ports_[size_t(i)],
                     display_name_ + ": bad used port list");
    // Both sides store and forward: a packet is usable when its tail is in, after the
    // NIC's pipeline.
    ports_[size_t(i)] = std::make_unique<Port>(("port_" + std::to_string(i)).c_str(),
                                               display_name_ + ".port[" + std::to_string(i) + "]",
                                               this, i, /*rx_at_head=*/false,
                                               p.pipeline_latency_ps);
  }
  FABRICSIM_ASSERT(ports_[size_t(net_)], display_name_ + ": the network port is not linked");
  // The network port drains at line rate and its link covers the credit loop (checked by
  // the NIC kinds): no credit accounting into it.
  ports_[size_t(net_)]->set_credit_free_rx();
  timer_ = Alarm{this, kTimer};
  resume_ = Alarm{this, kResume};
}

void Nic::end_of_elaboration() {
  // Built once the links are bound: the transport scales with the network port's rate.
  transport_ = make_(*this);
  for (int i = 0; i < net_; ++i)
    if (ports_[size_t(i)]) host_payload_[size_t(i)] = ports_[size_t(i)]->link().packet_payload;
}

void Nic::set_routes(const std::vector<std::vector<int>>& routes) {
  // Routes recomputed after a fault: an accelerator of this NIC whose host link is down
  // stays behind that port (nothing else leads to it; its traffic waits for the link).
  std::vector<int> before;
  before.swap(host_route_);
  host_route_.assign(routes.size(), -1);
  for (size_t d = 0; d < routes.size(); ++d) {
    for (int port : routes[d])
      if (port < net_) host_route_[d] = port;
    if (routes[d].empty() && d < before.size()) host_route_[d] = before[d];
  }
}

void Nic::tx_recover(int port, Packet* p) {
  p->head_ps = p->tail_ps = now();
  if (port == net_) {
    recovered_.push(p);
  } else {
    host_q_[size_t(port)].push(p);
    host_q_bytes_[size_t(port)] += p->payload_bytes;
  }
  ports_[size_t(port)]->kick();
}

void Nic::wake(uint32_t what) {
  ++g_kernel_events;
  if (what == kTimer)
    transport_->on_timer();
  else
    kick();
}

// ---------------------------------------------------------------------------------------
// Host side

void Nic::rx_arrive(int port, Packet* p) {
  if (port == net_)
    net_arrive(p);
  else
    host_arrive(port, p);
}

void Nic::host_arrive(int port, Packet* p) {
  host_rx_bytes_ += p->payload_bytes;
  FABRICSIM_ASSERT(p->dst < host_route_.size(), display_name_ + ": no route to the destination");
  const int local = host_route_[p->dst];
  if (local >= 0) {  // between two accelerators of this NIC: forwarded as it is
    ports_[size_t(port)]->release_rx(p, 0);
    p->head_ps = p->tail_ps = now();
    host_q_[size_t(local)].push(p);
    host_q_bytes_[size_t(local)] += p->payload_bytes;
    ports_[size_t(local)]->kick();
    return;
  }
  if (!held_.empty() || !accept(p)) {
    held_.push({port, p});  // its host-link credits stay taken: the GPU waits
    return;
  }
  ports_[size_t(port)]->release_rx(p, 0);
  PacketPool::global().release(p);
}

// Takes `p`'s payload into the send buffer and cuts what is complete into packets; false
// if the buffer is full (an empty buffer takes any transaction).
bool Nic::accept(Packet* p) {
  if (buffered_ > 0 && buffered_ + p->payload_bytes > p_.send_buffer_bytes) return false;
  buffered_ += p->payload_bytes;
  send_buffer_.set(now(), buffered_);
  auto it = std::find_if(partials_.begin(), partials_.end(),
                         [&](const Partial& s) { return s.proto.msg_id == p->msg_id; });
  if (it == partials_.end()) {
    Partial s;
    s.proto = *p;
    s.next = s.end = p->offset;
    partials_.push_back(s);
    it = partials_.end() - 1;
  } else if (p->offset != it->end) {
    // Not contiguous (the message is striped over several NICs): cut what we have.
    cut(*it, true);
    it->next = it->end = p->offset;
  }
  it->end += p->payload_bytes;
  const bool complete = it->end == p->msg_bytes;
  cut(*it, complete);
  if (complete) partials_.erase(it);
  return true;
}

// Cuts the arrived bytes of `s` into packets of one MSS; with `flush` also the remainder.
// A message without payload (a read request) is one header-only packet.
void Nic::cut(Partial& s, bool flush) {
  const uint32_t mss = p_.mss();
  const bool empty_msg = s.proto.msg_bytes == 0;
  while (s.end - s.next >= mss || (flush && (s.next < s.end || empty_msg))) {
    const uint32_t bytes = uint32_t(std::min<uint64_t>(mss, s.end - s.next));
    Packet* d = PacketPool::global().acquire();
    *d = s.proto;
    d->clear_transport();
    d->offset = s.next;
    d->payload_bytes = bytes;
    d->packet_payload = bytes;
    d->npackets = 1;
    d->vc = 0;
    d->tc = uint8_t(p_.traffic_class);
    d->flags = kEct;
    d->route_port = -1;
    d->head_ps = d->tail_ps = now();
    s.next += bytes;
    transport_->enqueue(d->dst, d);
    if (empty_msg) break;
  }
  kick();
}

void Nic::first_sent(uint32_t payload_bytes) {
  buffered_ -= payload_bytes;
  send_buffer_.set(now(), buffered_);
  // Space: take the waiting host transactions in order.
  while (!held_.empty() && accept(held_.front().second)) {
    const std::pair<int, Packet*> h = held_.pop();
    ports_[size_t(h.first)]->release_rx(h.second, 0);
    PacketPool::global().release(h.second);
  }
}

void Nic::deliver(Packet* p) {
  const int port = p->dst < host_route_.size() ? host_route_[p->dst] : -1;
  FABRICSIM_ASSERT(port >= 0, display_name_ + ": data for an endpoint it does not serve");
  // One host-link transaction, framed as that link's packets.
  const uint32_t pp = host_payload_[size_t(port)];
  p->packet_payload = pp;
  p->npackets = std::max<uint32_t>(1, (p->payload_bytes + pp - 1) / pp);
  p->head_ps = p->tail_ps = now();
  p->vc = 0;
  host_q_[size_t(port)].push(p);
  host_q_bytes_[size_t(port)] += p->payload_bytes;
  ports_[size_t(port)]->kick();
}

uint64_t Nic::host_backlog(uint32_t dst) const {
  const int port = dst < host_route_.size() ? host_route_[dst] : -1;
  return port < 0 ? 0 : host_q_bytes_[size_t(port)];
}

void Nic::absorb(Packet* p) {
  absorbed_ += p->payload_bytes;
  PacketPool::global().release(p);
}

// ---------------------------------------------------------------------------------------
// Network side

void Nic::send_control(Packet* p) {
  p->flags |= kUrgent;
  p->head_ps = p->tail_ps = now();
  p->npackets = 1;
  ctl_.push(p);
  kick();
}

Packet* Nic::acquire() {
  Packet* p = PacketPool::global().acquire();
  p->clear_transport();
  return p;
}

Packet* Nic::recreate(const PacketWithTransport& copy) {
  Packet* p = PacketPool::global().acquire();
  copy.copy_to(p);
  p->head_ps = p->tail_ps = now();
  p->route_port = -1;
  emitted_ += p->payload_bytes;
  return p;
}

void Nic::net_arrive(Packet* p) {
  if (p->kind == PacketKind::kPause) {
    // One quantum is 512 bit times at the link's rate.
    const uint64_t ps = transfer_ps(uint64_t(p->tr().pause_quanta) * 64, line_rate_bps());
    ports_[size_t(net_)]->pause(p->tc, now() + ps);
    PacketPool::global().release(p);
    return;
  }
  ++received_;
  transport_->receive(p);
}

Packet* Nic::tx_peek(int port) {
  if (port != net_) return host_q_[size_t(port)].empty() ? nullptr : host_q_[size_t(port)].front();
  if (!recovered_.empty()) return recovered_.front();  // faults only
  if (!ctl_.empty()) return ctl_.front();
  const Port& net = *ports_[size_t(net_)];
  const uint8_t tc = uint8_t(p_.traffic_class);
  if (net.paused(tc)) {  // PFC: data waits, control goes; look again when the pause ends
    Scheduler::instance().set(resume_, net.paused_until(tc));
    return nullptr;
  }
  if (staged_) return staged_;
  uint64_t retry = UINT64_MAX;
  staged_ = transport_->next(&retry);
  if (!staged_ && retry != UINT64_MAX) Scheduler::instance().set(resume_, retry);
  return staged_;
}

void Nic::tx_pop(int port, Packet* p) {
  if (port != net_) {
    host_q_[size_t(port)].pop();
    host_q_bytes_[size_t(port)] -= p->payload_bytes;
    host_tx_bytes_ += p->payload_bytes;
    return;
  }
  if (!recovered_.empty() && recovered_.front() == p) {  // sent before: injected once
    recovered_.pop();
    return;
  }
  ++injected_;
  if (!ctl_.empty() && ctl_.front() == p) {
    ctl_.pop();
    ++control_sent_;
    return;
  }
  FABRICSIM_ASSERT(p == staged_, display_name_ + ": popped a packet that was not offered");
  staged_ = nullptr;
  ++data_sent_;
  p->tr().tx_ps = now();
  transport_->sent(p);
}

uint64_t Nic::idle_at() const {
  uint64_t t = transport_ ? transport_->idle_at() : 0;
  for (const auto& port : ports_)
    if (port) t = std::max(t, port->idle_at());
  return t;
}

// Kept: the configuration (parameters, routes, path latencies, host links' packet sizes)
// and the statistics and ledger counts (bytes and packets in and out, retransmitted and
// discarded payload, the send buffer's level statistics). Reset: the ports (credits,
// serialisation remainders, link layer, pauses), the message cutter, the NIC's timer and
// resume wake-ups, and the transport (Transport::reset).
void Nic::reset_dynamic_state() {
  FABRICSIM_ASSERT(held_.empty() && ctl_.empty() && recovered_.empty() && !staged_ &&
                       buffered_ == 0,
                   display_name_ + ": reset with traffic queued");
  for (size_t i = 0; i < host_q_.size(); ++i)
    FABRICSIM_ASSERT(host_q_[i].empty(), display_name_ + ": reset with host traffic queued");
  for (const Partial& s : partials_)
    FABRICSIM_ASSERT(s.next == s.end, display_name_ + ": reset with bytes not cut");
  partials_.clear();
  for (auto& port : ports_)
    if (port) port->reset();
  Scheduler::instance().cancel(timer_);
  Scheduler::instance().cancel(resume_);
  if (transport_) transport_->reset();
}

void Nic::add_to_ledger(PacketLedger& l) const {
  l.injected += injected_;
  l.received += received_;
  transport_->add_to_ledger(l);
}

nlohmann::json Nic::stats_json(uint64_t now_ps) const {
  nlohmann::json j;
  j["host_rx_bytes"] = host_rx_bytes_;
  j["host_tx_bytes"] = host_tx_bytes_;
  j["send_buffer_max_bytes"] = send_buffer_.max();
  j["send_buffer_avg_bytes"] = send_buffer_.average(now_ps);
  j["packets_injected"] = injected_;
  j["packets_received"] = received_;
  j["data_packets_sent"] = data_sent_;
  j["control_packets_sent"] = control_sent_;
  j["payload_retransmitted_bytes"] = emitted_;
  j["payload_discarded_bytes"] = absorbed_;
  transport_->add_stats(j);
  return j;
}

}  // namespace fabricsim
