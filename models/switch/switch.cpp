#include "models/switch/switch.h"

#include <algorithm>

#include "models/core/errors.h"
#include "models/core/rng.h"

namespace fabricsim {

using sc_core::sc_time;

Switch::Switch(sc_core::sc_module_name n, std::string display_name, const SwitchParams& p,
               const std::vector<int>& used_ports, Features features)
    : sc_module(n),
      display_name_(std::move(display_name)),
      params_(p),
      n_(p.ports),
      ports_(p.ports),
      voq_mode_(p.input_queues == "voq"),
      adaptive_(p.route_select == "adaptive"),
      rows_(p.ports, PortSet(p.ports)),
      cols_(p.ports, PortSet(p.ports)),
      free_in_(p.ports),
      free_out_(p.ports),
      pending_in_(p.ports),
      requested_out_(p.ports),
      in_busy_(p.ports, 0),
      out_busy_(p.ports, 0),
      xbar_rate_bps_(p.ports, 0),
      xbar_ps_per_byte_(p.ports, 0),
      in_framing_(p.ports, nullptr),
      egress_(p.ports),
      egress_bytes_(p.ports, 0),
      out_load_(p.ports, 0),
      rr_(p.ports, 0),
      rx_freed_(p.ports, 0),
      features_(std::move(features)) {
  in_hold_.resize(size_t(p.ports));
  out_hold_.resize(size_t(p.ports));
  const bool output_queued = p.input_queues == "output";  // OutputQueuedSwitch
  FABRICSIM_ASSERT(p.input_queues == "voq" || p.input_queues == "fifo" || output_queued,
                   "bad input_queues");
  if (p.salted_hash) hash_salt_ = Rng(p.seed, display_name_ + ".hash").next();
  if (output_queued) ncls_ = std::max(1, p.traffic_classes);
  for (int i : used_ports) {
    FABRICSIM_ASSERT(i >= 0 && i < n_ && !ports_[i], display_name_ + ": bad used port list");
    ports_[i] = std::make_unique<Port>(("port_" + std::to_string(i)).c_str(),
                                       display_name_ + ".port[" + std::to_string(i) + "]", this,
                                       i, /*rx_at_head=*/true, p.pipeline_latency_ps);
    ports_[i]->keep_level_at(&egress_[size_t(i)].level);
  }
  if (!output_queued) {
    arbiter_ = make_arbiter(p.arbiter, n_, n_, p.islip_iterations);
    matched_in_.assign(size_t(n_), -1);
    if (voq_mode_)
      voq_.resize(size_t(n_) * n_);
    else
      inq_.resize(n_);
  }
  xbar_alarm_ = Alarm{this, kXbar};
  for (const std::unique_ptr<SwitchFeature>& f : features_) {
    f->attach(SwitchFrame(*this));
    for (PacketKind k : f->claims()) {
      SwitchFeature*& c = claim_[size_t(k)];
      FABRICSIM_ASSERT(!c, display_name_ + ": " + c->name() + " and " + f->name() +
                               " claim one packet kind");
      c = f.get();
    }
    const unsigned h = f->hooks();
    if (h & SwitchFeature::kAfterCrossbar) after_xbar_.push_back(f.get());
    if (h & SwitchFeature::kEgressAdmission) admission_.push_back(f.get());
    if (h & SwitchFeature::kEgressDeparture) departure_.push_back(f.get());
    if (h & SwitchFeature::kRoute) {
      FABRICSIM_ASSERT(!router_, display_name_ + ": two routing features");
      router_ = f.get();
    }
    if (h & SwitchFeature::kCrossbarGate) {
      FABRICSIM_ASSERT(!gate_ && !output_queued, display_name_ + ": two crossbar gates, or "
                       "a crossbar gate on the output-queued frame");
      gate_ = f.get();
    }
  }
  FABRICSIM_ASSERT(departure_.empty() || output_queued,
                   display_name_ + ": egress-departure features need the output-queued frame");
  if (gate_) {
    gated_rows_ = rows_;
    gated_cols_ = cols_;
  }
  between_ok_ = !gate_ && after_xbar_.empty() && admission_.empty();
}

void Switch::wake(uint32_t what) {
  FABRICSIM_ASSERT(what == kXbar, display_name_ + ": bad wake-up");
  xbar_method();
}

void Switch::set_peers(const std::vector<SwitchPeer>& peers) {
  FABRICSIM_ASSERT(int(peers.size()) == n_, display_name_ + ": one peer per port expected");
  for (const std::unique_ptr<SwitchFeature>& f : features_) f->peers_known(peers);
}

bool Switch::offers_collectives(int port) const {
  for (const std::unique_ptr<SwitchFeature>& f : features_)
    if (f->offers_collectives(port)) return true;
  return false;
}

uint64_t Switch::payload_absorbed() const {
  uint64_t n = 0;
  for (const std::unique_ptr<SwitchFeature>& f : features_) n += f->payload_absorbed();
  return n;
}

uint64_t Switch::payload_emitted() const {
  uint64_t n = 0;
  for (const std::unique_ptr<SwitchFeature>& f : features_) n += f->payload_emitted();
  return n;
}

void Switch::connected(const std::vector<Peer>& peers) {
  std::vector<SwitchPeer> far(static_cast<size_t>(n_));
  for (const Peer& p : peers) far[size_t(p.port)] = SwitchPeer{p.device, p.endpoint_id, p.peer_port};
  set_peers(far);
}

void Switch::end_of_elaboration() {
  for (int o = 0; o < n_; ++o)
    if (ports_[o]) {
      const uint64_t r = uint64_t(double(ports_[o]->link().rate_bps) * params_.speedup);
      xbar_rate_bps_[o] = r;
      constexpr uint64_t kBitPsPerByte = 8 * 1000000000000ull;  // 8 bits x 1e12 ps per second
      xbar_ps_per_byte_[o] = r && r <= kBitPsPerByte && kBitPsPerByte % r == 0 ? kBitPsPerByte / r : 0;
      in_framing_[o] = ports_[o]->link().framing.get();
    }
}

uint64_t Switch::xbar_ps(int out, uint64_t bytes) const {
  // A rate of whole ps per byte (every shipped NVSwitch: 400 or 800 Gb/s x speedup 2)
  // needs no 128-bit division per transfer; the same value as transfer_ps.
  if (const uint64_t k = xbar_ps_per_byte_[out]) return bytes * k;
  return transfer_ps(bytes, xbar_rate_bps_[out]);
}

// -1 when no route leads to p's destination (only after a fault).
int Switch::select_route(int in, const Packet& p) {
  const SwitchFrame::PortList r = routes_to(p.dst);
  const int* c = r.first;
  const size_t k = r.size();
  if (k == 1) return c[0];
  if (k == 0) return -1;
  if (!adaptive_) {
    uint64_t h = (uint64_t(p.src) * 0x9E3779B97F4A7C15ull) ^ (uint64_t(p.dst) << 32) ^ p.entropy ^
                 hash_salt_;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    return c[h % k];
  }
  // Least queued output; ties rotate per input so equal loads spread evenly. (One
  // division for the start, none in the scan: this runs for every packet on a
  // multi-path fabric.)
  const size_t start = rr_[in]++ % k;
  auto least_loaded = [&](auto load) {
    int best = c[start];
    uint64_t best_load = load(best);
    auto consider = [&](int o) {
      if (const uint64_t l = load(o); l < best_load) best = o, best_load = l;
    };
    for (size_t j = start + 1; j < k; ++j) consider(c[j]);
    for (size_t j = 0; j < start; ++j) consider(c[j]);
    return best;
  };
  if (__builtin_expect(Port::multi_packet_sent(), 0)) {
    // Aggregated: the transaction on an output's wire left its queue whole, but per
    // packet its packets that have not begun to leave would still be queued there.
    const uint64_t t = Port::now();
    return least_loaded([&](int o) { return out_load_[o] + ports_[o]->unstarted_payload(t); });
  }
  return least_loaded([&](int o) { return out_load_[o]; });
}

void Switch::rx_arrive(int in, Packet* p) {
  if (SwitchFeature* f = claim_[size_t(p->kind)]) {
    f->arrive(in, p);
    return;
  }
  p->route_port = router_ ? router_->route(in, *p) : -1;
  if (p->route_port < 0) p->route_port = select_route(in, *p);
  if (p->route_port < 0) {  // cut off by a fault: wait in the ingress buffer for a route
    parked_in_.push_back(Parked{in, p});
    return;
  }
  out_load_[p->route_port] += p->payload_bytes;
  const PacketQueue* q = voq_mode_ ? &voq_[size_t(in) * n_ + p->route_port] : &inq_[in];
  __builtin_prefetch(q, 1);
  arrived_.push_back(Arrival{in, p->route_port, p});
  ++pending_;
  // The first arrival of the instant sets the crossbar's wake-up: its queue is the hint,
  // fetched again a few wake-ups before the flush (on a large fabric the flush comes
  // after thousands of other wake-ups, and the prefetch above is long gone by then).
  Scheduler::instance().set(xbar_alarm_, Port::now(), q);
}

void Switch::flush_arrivals() {
  // On a large fabric the crossbar's wake-up comes after the instant's other wake-ups
  // (thousands on NVL576), when what rx_arrive prefetched is out of the caches again, and
  // a switch has only a few arrivals per instant: fetch every arrival's queue (head and
  // tail) and packet first, then every queue's last packet, whose link the enqueue writes,
  // so that the misses of each kind overlap instead of following one another. In blocks,
  // to bound the fetches in flight.
  const size_t m = arrived_.size();
  constexpr size_t kBlock = 16;
  auto queue_of = [&](const Arrival& a) -> PacketQueue& {
    return voq_mode_ ? voq_[size_t(a.in) * n_ + a.out] : inq_[a.in];
  };
  for (size_t b = 0; b < m; b += kBlock) {
    const size_t e = std::min(m, b + kBlock);
    for (size_t k = b; k < e; ++k) {
      __builtin_prefetch(&queue_of(arrived_[k]), 1);
      __builtin_prefetch(arrived_[k].p, 1);
    }
    for (size_t k = b; k < e; ++k)
      if (Packet* last = queue_of(arrived_[k]).back()) __builtin_prefetch(last, 1);
    for (size_t k = b; k < e; ++k) enqueue(arrived_[k].in, arrived_[k].p);
  }
  arrived_.clear();
}

void Switch::enqueue(int in, Packet* p) {
  const int o = p->route_port;
  // A packet of one that may go between (goes_between: a control packet, or the last packet
  // of a message) first in its queue: per packet it waits for at most one packet of a
  // transaction that holds its input or output. Only once transactions of several packets
  // exist, so per-packet runs never take this path.
  if (__builtin_expect(Port::multi_packet_sent(), 0) && goes_between(*p) && between_ok_ &&
      (voq_mode_ ? voq_[size_t(in) * n_ + o].empty() : inq_[in].empty()) &&
      cross_between(in, p, Port::now()))
    return;
  if (voq_mode_) {
    voq_[size_t(in) * n_ + o].push(p);
    rows_[in].set(o);
    cols_[o].set(in);
  } else {
    const bool was_empty = inq_[in].empty();
    inq_[in].push(p);
    if (was_empty) {
      rows_[in].set(o);
      cols_[o].set(in);
    }
  }
  pending_in_.set(in);
  if (cols_[o].any()) requested_out_.set(o);
}

void Switch::level_probe(int port, LevelProbe* probe) {
  if (level_probe_.empty()) level_probe_.assign(size_t(n_), nullptr);
  LevelProbe*& slot = level_probe_[size_t(port)];
  level_probes_ += size_t(probe != nullptr) - size_t(slot != nullptr);
  slot = probe;
}

void Switch::xbar_method() {
  ++g_kernel_events;
  const uint64_t t = Port::now();
  if (pending_ == 0) return;
  if (!arrived_.empty()) flush_arrivals();
  ++arbitrations_;
  free_in_.clear();
  free_out_.clear();
  pending_in_.for_each([&](int i) {
    if (in_busy_[i] <= t) free_in_.set(i);
  });
  requested_out_.for_each([&](int o) {
    if (out_busy_[o] <= t && egress_bytes_[o] < params_.egress_buffer_bytes) free_out_.set(o);
  });
  if (free_in_.any() && free_out_.any() && gate_) {
    // The gate's refusals for this arbitration only: the requests stay queued.
    gated_rows_ = rows_;
    gated_cols_ = cols_;
    free_out_.for_each([&](int o) {
      cols_[o].for_each([&](int i) {
        if (!free_in_.test(i)) return;
        const Packet& head = voq_mode_ ? *voq_[size_t(i) * n_ + o].front() : *inq_[i].front();
        if (!gate_->may_cross(i, o, head)) {
          gated_rows_[i].reset(o);
          gated_cols_[o].reset(i);
        }
      });
    });
    arbiter_->match(gated_rows_, gated_cols_, free_in_, free_out_, match_);
    transfer_matched(t);
  } else if (free_in_.any() && free_out_.any()) {
    arbiter_->match(rows_, cols_, free_in_, free_out_, match_);
    transfer_matched(t);
  }
  if (pending_ == 0) return;
  // Wake at the first moment a busy input with traffic, or a busy output that traffic is
  // waiting for, becomes free. Outputs blocked by a full egress queue wake us on tx_pop.
  uint64_t next = UINT64_MAX;
  pending_in_.for_each([&](int i) {
    if (in_busy_[i] > t) next = std::min(next, in_busy_[i]);
  });
  requested_out_.for_each([&](int o) {
    if (out_busy_[o] > t) next = std::min(next, out_busy_[o]);
  });
  if (next != UINT64_MAX) Scheduler::instance().set(xbar_alarm_, next);
}

// The arbitration's matches, in input order. On a large fabric one arbitration matches
// tens of pairs (NVL576 all-to-all: 37 on average) and every pair's queue, packets and
// ports are cold: their lines are fetched for all pairs first, and each head packet two
// transfers ahead, so the misses overlap instead of queueing one behind another (no effect
// on results).
void Switch::transfer_matched(uint64_t t) {
  int m = 0;
  free_in_.for_each([&](int i) {
    const int o = match_[i];
    if (o < 0) return;
    matched_in_[size_t(m++)] = i;
    if (voq_mode_) __builtin_prefetch(&voq_[size_t(i) * n_ + o]);
    __builtin_prefetch(&egress_[o]);
    ports_[i]->prefetch_release();
    ports_[o]->prefetch_kick();
  });
  constexpr int kAhead = 2;
  auto head_of = [&](int i) {
    return voq_mode_ ? voq_[size_t(i) * n_ + match_[i]].front() : inq_[i].front();
  };
  for (int k = 0; k < m && k < kAhead; ++k) {
    __builtin_prefetch(head_of(matched_in_[k]), 1);
    if (Packet* b = egress_[match_[matched_in_[k]]].q.back()) __builtin_prefetch(b, 1);
  }
  for (int k = 0; k < m; ++k) {
    if (k + kAhead < m) {
      const int a = matched_in_[k + kAhead];
      __builtin_prefetch(head_of(a), 1);
      if (Packet* b = egress_[match_[a]].q.back()) __builtin_prefetch(b, 1);
    }
    const int i = matched_in_[k];
    transfer(i, match_[i], t);
  }
}

void Switch::transfer(int in, int out, uint64_t t) {
  Packet* p;
  if (voq_mode_) {
    PacketQueue& q = voq_[size_t(in) * n_ + out];
    p = q.pop();
    if (q.empty()) {
      rows_[in].reset(out);
      cols_[out].reset(in);
    }
  } else {
    p = inq_[in].pop();
    rows_[in].reset(out);
    cols_[out].reset(in);
    if (!inq_[in].empty()) {
      const int nh = inq_[in].front()->route_port;
      rows_[in].set(nh);
      cols_[nh].set(in);
      requested_out_.set(nh);
    }
  }
  FABRICSIM_ASSERT(p->route_port == out, display_name_ + ": crossbar matched a wrong output");
  if (!rows_[in].any()) pending_in_.reset(in);
  if (!cols_[out].any()) requested_out_.reset(out);
  --pending_;
  ++transfers_;

  // The crossbar moves the ingress wire bytes; a transaction of several packets may
  // cut through, but its tail cannot cross before it has arrived.
  const Framing& f = *in_framing_[in];
  const uint64_t xs = xbar_ps(out, p->link_bytes);
  uint64_t end = t + xs;
  if (p->npackets > 1) {
    const uint64_t xlast = xbar_ps(out, f.packet_wire_bytes(p->last_packet_payload(), p->kind));
    end = std::max(end, p->tail_ps + xlast);
    p->head_ps = t + xbar_ps(out, f.packet_wire_bytes(p->packet_payload, p->kind));
  } else {
    p->head_ps = end;
  }
  p->tail_ps = end;
  // Features after the crossbar (a root complex's host path) hold the transaction until
  // it may leave, whole. The crossbar itself is free at `end`; the egress queue, bounded
  // by egress_buffer, holds it meanwhile.
  for (SwitchFeature* feature : after_xbar_)
    p->head_ps = p->tail_ps = std::max(p->tail_ps, feature->ready_ps(in, out, *p, t));
  // Input and output are held for the crossbar time only. A multi-packet transaction
  // arriving at line rate would otherwise hold both until its tail has arrived, i.e. for
  // its whole length whatever the speedup, and a short packet (an ack) waiting for that
  // input and output could starve while two such streams alternate (docs/scaleup.md,
  // "Aggregation on a two-level switch path"). The tail constraint travels in tail_ps; the
  // ingress buffer is freed when the tail has crossed, and credits go back in time order.
  in_busy_[in] = t + xs;
  out_busy_[out] = t + xs;
  if (__builtin_expect(p->npackets > 1, 0)) {  // a control packet may cross between its packets
    const uint64_t step = xbar_ps(out, f.packet_wire_bytes(p->packet_payload, p->kind));
    in_hold_[size_t(in)] = Hold{t, step, t + xs};
    out_hold_[size_t(out)] = Hold{t, step, t + xs};
  }
  to_egress(in, out, p, t, end);
}

bool Switch::cross_between(int in, Packet* p, uint64_t t) {
  const int out = p->route_port;
  if (egress_bytes_[out] >= params_.egress_buffer_bytes) return false;
  // Each side is free at t, or held by a crossing of several packets: then the next
  // boundary between two of its packets at or after t (at most its end).
  int held = 0;
  auto boundary = [&](uint64_t busy, const Hold& h, uint64_t* b) {
    if (busy <= t) {
      *b = t;
      return true;
    }
    if (busy != h.end || h.step == 0) return false;  // a packet of one holds it
    ++held;
    *b = std::min(busy, h.start + (t - h.start + h.step - 1) / h.step * h.step);
    return true;
  };
  uint64_t bi = 0, bo = 0;
  if (!boundary(in_busy_[size_t(in)], in_hold_[size_t(in)], &bi) ||
      !boundary(out_busy_[size_t(out)], out_hold_[size_t(out)], &bo) || held == 0)
    return false;  // the crossbar's arbitration, as for any packet
  const uint64_t at = std::max(bi, bo);
  const uint64_t xs = xbar_ps(out, p->link_bytes);
  const uint64_t end = at + xs;
  p->head_ps = p->tail_ps = end;
  // The side a transaction holds is held that much longer (its own tail_ps, already in
  // the egress queue, is not moved: at most one control packet's crossbar time per
  // packet between); a free side is held by this packet alone.
  auto hold = [&](uint64_t& busy, Hold& h) {
    if (busy > t) {
      busy = std::max(busy, at) + xs;
      h.end = busy;
    } else {
      busy = end;
    }
  };
  hold(in_busy_[size_t(in)], in_hold_[size_t(in)]);
  hold(out_busy_[size_t(out)], out_hold_[size_t(out)]);
  --pending_;
  ++transfers_;
  ++crossed_between_;
  to_egress(in, out, p, t, end);
  return true;
}

void Switch::to_egress(int in, int out, Packet* p, uint64_t t, uint64_t end) {
  const uint64_t freed = std::max(end, rx_freed_[in]);
  rx_freed_[in] = freed;

  ports_[in]->release_rx(p, freed - t);
  if (!admission_.empty() && !admit(out, p, true)) return;
  egress_[out].q.push(p);
  egress_bytes_[out] += p->payload_bytes;
  set_level(out, t);
  // A control packet (an acknowledgement, a flag) or the last packet of a message first in
  // its queue may go between the packets of the transaction on the wire, after those that
  // were queued before it, as per packet (Port::kick_between; asked only once transactions
  // of several packets exist). Other data packets of one wait for the transaction:
  // docs/architecture.md, "Control packets between a transaction's packets", says why.
  if (__builtin_expect(Port::multi_packet_sent(), 0) && goes_between(*p) &&
      egress_[out].q.front() == p)
    ports_[out]->kick_between(true, p->tail_ps);
  else
    ports_[out]->kick();
}

Packet* Switch::tx_peek(int port) { return egress_[port].q.front(); }

Packet* Switch::tx_peek_between(int port, uint32_t* skip) {
  (void)skip;  // first in, first out
  Packet* p = egress_[port].q.front();
  return p && goes_between(*p) ? p : nullptr;
}

void Switch::tx_pop(int port, Packet* p) {
  egress_[port].q.pop();
  egress_bytes_[port] -= p->payload_bytes;
  out_load_[port] -= p->payload_bytes;
  set_level(port, Port::now());
  if (pending_ > 0) Scheduler::instance().set(xbar_alarm_, Port::now());
}

void Switch::emit(int out, Packet* p) {
  const uint64_t t = Port::now();
  // A feature may set a later time at which the packet may leave (p->head_ps), and for
  // a transaction of several packets a time its last packet cannot leave before
  // (p->tail_ps, cut-through: the port applies it as to a forwarded transaction). Such a
  // transaction starts no earlier than lets it run at the line rate to that bound: its
  // inputs may trickle in (an NVLS result waits for members that answer at different
  // times), and per packet the link carries other traffic meanwhile instead of idling.
  p->head_ps = std::max(t, p->head_ps);
  if (p->npackets > 1) {
    p->tail_ps = std::max(p->head_ps, p->tail_ps);
    const Framing& f = *ports_[out]->link().framing;
    const uint64_t before_last =
        transfer_ps(f.transaction_wire_bytes(*p) -
                        f.packet_wire_bytes(p->last_packet_payload(), p->kind),
                    ports_[out]->link().rate_bps);
    if (p->tail_ps > p->head_ps + before_last) p->head_ps = p->tail_ps - before_last;
  } else {
    p->tail_ps = p->head_ps;
  }
  if (!admission_.empty() && !admit(out, p, false)) return;
  egress_[out].q.push(p);
  egress_bytes_[out] += p->payload_bytes;
  out_load_[out] += p->payload_bytes;
  set_level(out, t);
  ports_[out]->kick();
}

// The egress admission hooks, in attach order, for `p` entering egress queue `out`.
// `routed`: its payload is counted in out_load_ (crossbar traffic; a feature's emits are
// counted after admission). Returns false when a feature dropped it (released here).
bool Switch::admit(int out, Packet* p, bool routed) {
  const uint32_t before = p->payload_bytes;
  for (SwitchFeature* f : admission_) {
    if (f->admit(out, *p) == SwitchFeature::Admission::kDrop) {
      if (routed) out_load_[out] -= before;
      PacketPool::global().release(p);
      return false;
    }
  }
  FABRICSIM_ASSERT(p->payload_bytes <= before,
                   display_name_ + ": egress admission grew a packet");
  if (routed) out_load_[out] -= before - p->payload_bytes;
  return true;
}

// ---------------------------------------------------------------------------------------
// The frame API features use (feature.h)

int SwitchFrame::ports() const { return sw_->n_; }

bool SwitchFrame::connected(int port) const { return sw_->ports_.at(port) != nullptr; }

const std::string& SwitchFrame::display_name() const { return sw_->display_name_; }

void SwitchFrame::emit(int out, Packet* p) const { sw_->emit(out, p); }

void SwitchFrame::release_rx(int in, Packet* p, uint64_t after_ps) const {
  sw_->ports_[in]->release_rx(p, after_ps);
}

uint64_t SwitchFrame::egress_bytes(int out) const { return sw_->egress_bytes_[out]; }

int SwitchFrame::traffic_classes() const { return sw_->traffic_classes(); }

int SwitchFrame::queue_of(const Packet& p) const { return sw_->queue_of(p); }

uint64_t SwitchFrame::queue_bytes(int out, int queue) const { return sw_->queue_bytes(out, queue); }

uint64_t SwitchFrame::port_rate_bps(int port) const { return sw_->ports_.at(port)->link().rate_bps; }

uint64_t SwitchFrame::seed() const { return sw_->params_.seed; }

void SwitchFrame::pause_port(int port, uint8_t prio, uint64_t until_ps) const {
  sw_->ports_.at(port)->pause(prio, until_ps);
}

const std::vector<int>& SwitchFrame::coords() const { return sw_->params_.coords; }

SwitchFrame::PortList SwitchFrame::routes(uint32_t dst) const { return sw_->routes_to(dst); }

uint64_t SwitchFrame::egress_buffer() const { return sw_->params_.egress_buffer_bytes; }

nlohmann::json Switch::stats_json(uint64_t now_ps) const {
  nlohmann::json j;
  j["crossbar_transfers"] = transfers_;
  j["arbitrations"] = arbitrations_;
  if (crossed_between_) j["crossed_between"] = crossed_between_;
  j["input_queues"] = params_.input_queues;
  if (arbiter_) j["arbiter"] = params_.arbiter;
  for (const std::unique_ptr<SwitchFeature>& f : features_) f->add_stats(j, now_ps);
  return j;
}

uint64_t Switch::idle_at() const {
  uint64_t t = 0;
  for (const auto& port : ports_)
    if (port && port->attached()) t = std::max(t, port->idle_at());
  return t;
}

void Switch::reset_dynamic_state() {
  FABRICSIM_ASSERT(pending_ == 0, display_name_ + ": reset with queued traffic");
  for (auto& port : ports_)
    if (port && port->attached()) port->reset();
  // Frames with a crossbar arbiter get a fresh one (the output-queued frame has none).
  if (arbiter_) arbiter_ = make_arbiter(params_.arbiter, n_, n_, params_.islip_iterations);
  std::fill(rr_.begin(), rr_.end(), 0u);
  for (const std::unique_ptr<SwitchFeature>& f : features_) f->reset_dynamic_state();
}

}  // namespace fabricsim
