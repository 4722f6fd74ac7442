#include "models/uec/uec_transport.h"

#include <algorithm>

#include "models/core/errors.h"
#include "models/core/types.h"

namespace fabricsim {

namespace {

bool is_transport_control(PacketKind k) {
  return k == PacketKind::kXportAck || k == PacketKind::kXportNack || k == PacketKind::kCnp ||
         k == PacketKind::kCredit || k == PacketKind::kCreditReq;
}

}  // namespace

UecTransport::UecTransport(const UecParams& p, NicServices& nic)
    : p_(p), nic_(nic), mode_(spray_mode(p.spraying)) {
  p_.nscc.mtu = nic.params().mss();
  p_.nscc.line_rate_bps = nic.line_rate_bps();
  p_.nscc.trimming = p.trim_ok;
  bdp_ = uint64_t(u128(p_.nscc.network_rtt_ps) * p_.nscc.line_rate_bps / 8 / 1000000000000ull);
}

UecTransport::Conn& UecTransport::conn(uint32_t dst) {
  if (conns_.size() <= dst) conns_.resize(nic_.endpoints());
  std::unique_ptr<Conn>& c = conns_.at(dst);
  if (!c) {
    Rng rng(nic_.params().seed, nic_.name() + ".uec." + std::to_string(dst));
    c = std::make_unique<Conn>(
        dst, EntropyPolicy(mode_, uint16_t(p_.entropies), uint16_t(p_.reps_buffer),
                           p_.reps_freeze_ps, rng));
    if (p_.cc == "nscc") {
      NsccParams np = p_.nscc;
      // The connection's own base RTT, from its path (htsim's accurate base RTT), so that a
      // short path does not mistake queueing for propagation.
      if (p_.path_base_rtt) np.base_rtt_ps = nic_.path_rtt_ps(dst);
      c->cc = std::make_unique<Nscc>(np);
    }
    c->credit = bdp_;  // rccc: a first BDP may go before any credit (speculative)
  }
  return *c;
}

UecTransport::RxConn& UecTransport::rx(uint32_t src) {
  if (rxs_.size() <= src) rxs_.resize(nic_.endpoints());
  std::unique_ptr<RxConn>& r = rxs_.at(src);
  if (!r) r = std::make_unique<RxConn>();
  return *r;
}

UecTransport::TxEntry* UecTransport::entry(Conn& c, uint32_t psn) {
  if (psn < c.base_psn || psn >= c.next_psn) return nullptr;
  return &c.win.at(psn - c.base_psn);
}

uint64_t UecTransport::window(const Conn& c) const {
  if (c.cc) return c.cc->cwnd();
  return std::max<uint64_t>(uint64_t(p_.nscc.max_window_bdp * double(bdp_)), p_.nscc.mtu);
}

bool UecTransport::may_send(const Conn& c, uint32_t bytes) const {
  if (p_.cc == "rccc" && c.credit < bytes) return false;
  return c.inflight == 0 || c.inflight + bytes <= window(c);
}

void UecTransport::list(Conn& c) {
  if (c.listed) return;
  c.listed = true;
  ready_.push(c.dst);
  nic_.kick();
}

void UecTransport::enqueue(uint32_t dst, Packet* p) {
  Conn& c = conn(dst);
  if (p_.trim_ok) p->flags |= kTrimOk;
  c.queued_bytes += p->payload_bytes;
  c.newq.push(p);
  list(c);
}

Packet* UecTransport::next(uint64_t*) {
  for (size_t n = ready_.size(); n > 0; --n) {
    const uint32_t d = ready_.pop();
    Conn& c = *conns_[d];
    if (Packet* p = produce(c)) {
      if (!c.rtx.empty() || !c.newq.empty())
        ready_.push(d);  // round robin: it goes to the back
      else
        c.listed = false;
      return p;
    }
    c.listed = false;  // empty or window-limited: an ack or new data lists it again
  }
  return nullptr;
}

// Retransmissions first, then new packets, within the window.
Packet* UecTransport::produce(Conn& c) {
  const uint64_t now = nic_.now();
  while (!c.rtx.empty()) {
    TxEntry* e = entry(c, c.rtx.front());
    if (!e || e->acked || !e->lost) {  // acked meanwhile, or already sent again
      c.rtx.pop();
      continue;
    }
    if (!may_send(c, e->copy.payload_bytes)) {
      request_credit(c, e->copy.src);
      return nullptr;
    }
    c.rtx.pop();
    e->lost = false;
    c.rtx_bytes -= e->copy.payload_bytes;
    ++e->copy.transport.retransmits;
    Packet* p = nic_.recreate(e->copy);
    // The credit request it carries is the backlog now (its first copy's is stale).
    p->tr().credit_bytes = uint32_t(std::min<uint64_t>(backlog(c), UINT32_MAX));
    p->entropy = c.ev.next(now);
    e->copy.entropy = p->entropy;  // the latest copy's path (a loss blames it)
    p->flags = uint8_t((p->flags & ~(kCe | kTrimmed | kUrgent)) | kAckReq);
    c.inflight += p->payload_bytes;
    if (p_.cc == "rccc") c.credit -= std::min<uint64_t>(c.credit, p->payload_bytes);
    int k = 2;
    switch (e->cause) {
      case Cause::kTrim: ++n_.rtx_trim; k = 0; break;
      case Cause::kGap: ++n_.rtx_gap; k = 1; break;
      default: ++n_.rtx_timeout; break;
    }
    n_.first_rtx_ps[k] = std::min(n_.first_rtx_ps[k], now);
    return p;
  }
  if (c.newq.empty()) return nullptr;
  if (!may_send(c, c.newq.front()->payload_bytes)) {
    request_credit(c, c.newq.front()->src);
    return nullptr;
  }
  Packet* p = c.newq.pop();
  c.queued_bytes -= p->payload_bytes;
  // Ack request (the PDS AR flag): the window closes behind it, or less than ack_bytes
  // follows it, so the receiver must not wait for ack_bytes to accumulate (else a lost
  // last packet would leave the ones before it unacknowledged until their timeout).
  if (c.queued_bytes < nic_.params().ack_bytes ||
      c.inflight + p->payload_bytes + c.newq.front()->payload_bytes > window(c))
    p->flags |= kAckReq;
  p->tr().psn = c.next_psn++;
  p->entropy = c.ev.next(now);
  p->tr().credit_bytes = uint32_t(std::min<uint64_t>(backlog(c), UINT32_MAX));
  TxEntry e;
  e.copy.assign(*p);
  c.win.push(e);
  c.inflight += p->payload_bytes;
  if (p_.cc == "rccc") c.credit -= std::min<uint64_t>(c.credit, p->payload_bytes);
  ++n_.sent_new;
  return p;
}

void UecTransport::sent(Packet* p) {
  Conn& c = *conns_.at(p->dst);
  TxEntry* e = entry(c, p->tr().psn);
  FABRICSIM_ASSERT(e, nic_.name() + ": sent a packet outside its window");
  e->order = ++c.order;
  e->copy.transport.tx_ps = p->tr().tx_ps;
  if (p->tr().retransmits == 0) nic_.first_sent(p->payload_bytes);
  const bool was_empty = rto_.empty();
  rto_.push(Rto{p->tr().tx_ps + nic_.params().rto_ps, c.dst, p->tr().psn, e->order});
  if (was_empty) nic_.wake_at(rto_.front().at_ps);
}

void UecTransport::declare_lost(Conn& c, TxEntry& e, Cause why) {
  e.lost = true;
  e.cause = why;
  // A packet that vanished (no trimmed header came back) blames its path: REPS stops
  // using the entropy and freezes (spraying.h). A trim proved the path alive.
  if (why == Cause::kGap || why == Cause::kTimeout) c.ev.on_loss(e.copy.entropy, nic_.now());
  // Receiver credits: a packet that vanished never reached the receiver, so the receiver
  // still counts the credit it used as held by this sender (RxConn::granted) and grants
  // nothing for it; the sender takes that credit back for the copy it must send again.
  // Without this a sender whose packets were all dropped (no trimming) waits for credit
  // that never comes. A loss declared on a SACK gap may be spurious (the copy arrives
  // late): the receiver then counts both copies and the sender holds one packet's credit
  // more than the receiver thinks, which is bounded and can only let it send, not stall.
  if (p_.cc == "rccc" && why != Cause::kTrim) c.credit += e.copy.payload_bytes;
  c.inflight -= e.copy.payload_bytes;
  c.rtx_bytes += e.copy.payload_bytes;
  c.rtx.push(e.copy.transport.psn);
}

// ---------------------------------------------------------------------------------------
// Receiving

void UecTransport::receive(Packet* p) {
  switch (p->kind) {
    case PacketKind::kXportAck: on_ack(p); return;
    case PacketKind::kXportNack: on_nack(p); return;
    case PacketKind::kCredit: on_credit(p); return;
    case PacketKind::kCreditReq: on_credit_request(p); return;
    default: break;
  }
  FABRICSIM_ASSERT(!is_transport_control(p->kind), nic_.name() + ": unexpected control packet");
  on_data(p);
}

void UecTransport::send_ack(Packet* d, RxConn& r, bool nack) {
  Packet* a = nic_.acquire();
  a->kind = nack ? PacketKind::kXportNack : PacketKind::kXportAck;
  a->src = d->dst;
  a->dst = d->src;
  a->tc = d->tc;
  a->entropy = d->entropy;
  PacketTransport& t = a->tr();
  const PacketTransport& dt = d->tr();
  t.psn = dt.psn;
  t.ack_psn = r.w.cum();
  t.sack_base = dt.psn < r.w.cum() + 64 ? r.w.cum() : dt.psn - 63;
  t.sack_bits = r.w.bits(t.sack_base);
  t.echo_psn = dt.psn;
  t.echo_tx_ps = dt.tx_ps;
  t.echo_entropy = d->entropy;
  t.echo_flags = d->flags;
  t.retransmits = dt.retransmits;
  if (p_.receiver_penalty && nic_.host_backlog(d->dst) > p_.penalty_backlog_bytes) {
    t.pend = p_.receiver_penalty;
    ++n_.penalties_sent;
  }
  r.unacked = 0;
  ++(nack ? n_.nacks_sent : n_.acks_sent);
  nic_.send_control(a);
}

void UecTransport::on_data(Packet* p) {
  RxConn& r = rx(p->src);
  r.local = p->dst;
  if (p_.cc == "rccc") {
    // The credit this copy used: its whole payload, also when a switch trimmed it to a
    // header (the payload of a packet follows from its message offset and length: the
    // NIC cuts messages into MSS packets). A trimmed packet will come again and needs
    // credit again: the receiver counts it as owed (resend) until a retransmitted copy
    // arrives, so that a credit request the sender made before it learnt of the trim
    // (packets sent earlier arriving later) does not hide it.
    const bool trimmed = p->flags & kTrimmed;
    const uint64_t used =
        trimmed ? std::min<uint64_t>(nic_.params().mss(), p->msg_bytes - p->offset)
                : p->payload_bytes;
    r.backlog = p->tr().credit_bytes;
    r.granted -= std::min<uint64_t>(r.granted, used);
    if (trimmed)
      r.resend += used;
    else if (p->tr().retransmits)
      r.resend -= std::min<uint64_t>(r.resend, p->payload_bytes);
    if (demand(r) > r.granted && !r.in_credit_list) {
      r.in_credit_list = true;
      credit_rr_.push(p->src);
      grant_credit();
    }
  }
  if (p->flags & kTrimmed) {  // the header of a trimmed packet: ask for it again
    ++n_.trimmed_received;
    send_ack(p, r, true);
    nic_.absorb(p);
    return;
  }
  const bool first = !r.any;
  r.any = true;
  const uint32_t held_before = r.w.held();
  if (!r.w.receive(p->tr().psn)) {  // a duplicate: the sender is unsure, tell it at once
    ++n_.duplicates;
    send_ack(p, r, false);
    nic_.absorb(p);
    return;
  }
  r.unacked += p->payload_bytes;
  const bool ecn = p->flags & kCe;
  const bool last = p->offset + p->payload_bytes >= p->msg_bytes;
  // Reordering alone does not trigger an ack (sprayed packets are reordered all the time;
  // the coalesced acks carry the SACK bitmap), but closing every gap does: the packets
  // that arrived out of order are then acknowledged even if nothing else follows.
  const bool closed = held_before > 0 && r.w.held() == 0;
  if (ecn || first || last || closed || (p->flags & kAckReq) ||
      r.unacked >= nic_.params().ack_bytes)
    send_ack(p, r, false);
  ++n_.delivered;
  nic_.deliver(p);
}

void UecTransport::acked(Conn& c, uint32_t psn, uint64_t& newly) {
  TxEntry* e = entry(c, psn);
  if (!e || e->acked) return;
  e->acked = true;
  // reps_recycle: acked: every first copy an ack newly covers came back unmarked (the
  // receiver acks a marked packet at once, as the echo), so its entropy is recycled too.
  if (p_.reps_recycle_acked && psn != echo_psn_ && e->copy.transport.retransmits == 0 && !e->lost)
    c.ev.on_ack(e->copy.entropy, false, nic_.now());
  if (!e->lost)
    c.inflight -= e->copy.payload_bytes;
  else
    c.rtx_bytes -= e->copy.payload_bytes;  // acked while waiting to go again
  newly += e->copy.payload_bytes;
  c.max_acked_order = std::max(c.max_acked_order, e->order);
}

// The cumulative PSN and SACK bitmap an ack or NACK carries: marks what they cover as
// acknowledged and frees the window's acknowledged prefix; returns the bytes newly acked.
uint64_t UecTransport::ack_state(Conn& c, const Packet& a) {
  uint64_t newly = 0;
  const PacketTransport& t = a.tr();
  for (uint32_t psn = c.base_psn; psn < t.ack_psn && psn < c.next_psn; ++psn) acked(c, psn, newly);
  for (uint64_t bits = t.sack_bits; bits; bits &= bits - 1)
    acked(c, t.sack_base + uint32_t(__builtin_ctzll(bits)), newly);
  while (!c.win.empty() && c.win.front().acked) {
    c.win.pop();
    ++c.base_psn;
  }
  return newly;
}

void UecTransport::on_ack(Packet* a) {
  const uint64_t now = nic_.now();
  ++n_.acks_received;
  Conn& c = conn(a->src);
  const PacketTransport& t = a->tr();
  echo_psn_ = t.echo_psn;
  const uint64_t newly = ack_state(c, *a);
  echo_psn_ = UINT32_MAX;
  const bool ecn = t.echo_flags & kCe;
  if (ecn) ++n_.ecn_echoes;
  // The RTT of the packet that triggered the ack (every copy carries its own send time).
  const uint64_t rtt = t.echo_tx_ps && now > t.echo_tx_ps ? now - t.echo_tx_ps : 0;
  if (c.cc) {
    c.cc->on_ack(now, newly, rtt, ecn, t.pend, c.inflight);
    const uint64_t w = c.cc->cwnd();
    c.cwnd_min = std::min(c.cwnd_min, w);
    c.cwnd_max = std::max(c.cwnd_max, w);
    c.cwnd_sum += w;
    ++c.cwnd_samples;
  }
  c.ev.on_ack(t.echo_entropy, ecn, now);
  // SACK gaps: a packet is lost once enough packets sent after it have arrived: the larger
  // of reorder_threshold and 1.5 windows of packets (sprayed packets overtake each other by
  // up to a window; htsim's SLEEK uses the same 1.5 x cwnd). First copies are in PSN order,
  // so the scan stops at the first one still in time.
  const uint64_t thr = std::max<uint64_t>(p_.reorder_threshold,
                                          (3 * window(c) / 2 + p_.nscc.mtu - 1) / p_.nscc.mtu);
  for (size_t i = 0; i < c.win.size(); ++i) {
    TxEntry& e = c.win.at(i);
    if (e.acked || e.lost) continue;
    if (e.order + thr > c.max_acked_order) {
      if (e.copy.transport.retransmits == 0) break;
      continue;
    }
    declare_lost(c, e, Cause::kGap);
  }
  PacketPool::global().release(a);
  if (!c.rtx.empty() || !c.newq.empty()) list(c);
}

void UecTransport::on_nack(Packet* a) {
  ++n_.nacks_received;
  Conn& c = conn(a->src);
  // A NACK carries the receiver's ack state too (nothing else may come for a while).
  const uint64_t newly = ack_state(c, *a);
  if (newly && c.cc) c.cc->on_ack(nic_.now(), newly, 0, false, 0, c.inflight);
  TxEntry* e = entry(c, a->tr().psn);
  if (e && !e->acked && !e->lost && e->copy.transport.retransmits == a->tr().retransmits) {
    const uint64_t bytes = e->copy.payload_bytes;
    declare_lost(c, *e, Cause::kTrim);
    if (c.cc) c.cc->on_nack(nic_.now(), bytes, c.inflight);
  }
  PacketPool::global().release(a);
  if (!c.rtx.empty() || !c.newq.empty()) list(c);
}

void UecTransport::on_timer() {
  const uint64_t now = nic_.now();
  // Entries are in send order; acked ones are dropped whatever their deadline, so the
  // timer only fires for the oldest packet still unacknowledged.
  while (!rto_.empty()) {
    const Rto r = rto_.front();
    Conn& c = *conns_[r.dst];
    TxEntry* e = entry(c, r.psn);
    const bool live = e && !e->acked && !e->lost && e->order == r.order;
    if (live && r.at_ps > now) break;
    rto_.pop();
    if (!live) continue;
    const uint64_t bytes = e->copy.payload_bytes;
    declare_lost(c, *e, Cause::kTimeout);
    if (c.cc) c.cc->on_timeout(bytes);
    list(c);
  }
  if (!rto_.empty()) nic_.wake_at(rto_.front().at_ps);
  // Credit requests not answered in time go again (the request or its answer was lost, or
  // the receiver granted nothing: produce() asks again only if it still needs to).
  while (!request_timers_.empty() && request_timers_.front().at_ps <= now) {
    const RequestTimer t = request_timers_.pop();
    Conn& c = *conns_[t.dst];
    if (!c.requested || c.request_seq != t.seq) continue;
    c.requested = false;
    list(c);
  }
  if (!request_timers_.empty()) nic_.wake_at(request_timers_.front().at_ps);
  if (grant_pending_ && now >= next_grant_ps_) {
    grant_pending_ = false;
    grant_credit();
  }
}

// ---------------------------------------------------------------------------------------
// Receiver credits (cc: rccc)

// The pacer grants credit_chunk to the next sender with an unmet backlog, one chunk per
// chunk time at the line rate.
void UecTransport::grant_credit() {
  const uint64_t now = nic_.now();
  if (now < next_grant_ps_) {
    if (!grant_pending_) {
      grant_pending_ = true;
      nic_.wake_at(next_grant_ps_);
    }
    return;
  }
  while (!credit_rr_.empty()) {
    const uint32_t src = credit_rr_.pop();
    RxConn& r = *rxs_[src];
    r.in_credit_list = false;
    if (demand(r) <= r.granted) continue;
    const uint64_t chunk = std::min<uint64_t>(p_.credit_chunk_bytes, demand(r) - r.granted);
    r.granted += chunk;
    Packet* c = nic_.acquire();
    c->kind = PacketKind::kCredit;
    c->src = r.local;  // from our endpoint back to the sender's
    c->dst = src;
    c->tr().credit_bytes = uint32_t(chunk);
    c->tc = uint8_t(nic_.params().traffic_class);
    ++n_.credits_sent;
    n_.credit_bytes_granted += chunk;
    nic_.send_control(c);
    if (demand(r) > r.granted) {
      r.in_credit_list = true;
      credit_rr_.push(src);
    }
    next_grant_ps_ = now + transfer_ps(chunk, nic_.line_rate_bps());
    if (!credit_rr_.empty()) {
      grant_pending_ = true;
      nic_.wake_at(next_grant_ps_);
    }
    return;
  }
}

void UecTransport::on_credit(Packet* a) {
  Conn& c = conn(a->src);  // the granting endpoint
  c.credit += a->tr().credit_bytes;
  c.requested = false;
  PacketPool::global().release(a);
  if (!c.newq.empty() || !c.rtx.empty()) list(c);
}

// A sender that cannot send for want of credit announces its backlog only on the packets
// it sends, so with nothing in flight the receiver may never learn of it: every packet it
// sent vanished (dropped, not trimmed), or its hosts queued more after its last packet
// left with a smaller backlog. Then it asks (one request out at a time; the window, not
// credit, holds it back while packets are in flight). The request carries the credit it
// holds, so that a receiver that believes it holds more (a grant or packet lost on the
// way) grants again.
void UecTransport::request_credit(Conn& c, uint32_t src) {
  if (p_.cc != "rccc" || c.inflight != 0 || c.requested) return;
  Packet* q = nic_.acquire();
  q->kind = PacketKind::kCreditReq;
  q->src = src;
  q->dst = c.dst;
  q->tr().credit_bytes = uint32_t(std::min<uint64_t>(backlog(c), UINT32_MAX));
  q->tr().ack_psn = uint32_t(std::min<uint64_t>(c.credit, UINT32_MAX));
  q->tc = uint8_t(nic_.params().traffic_class);
  ++n_.credit_requests_sent;
  nic_.send_control(q);
  c.requested = true;
  ++c.request_seq;
  const uint64_t at = nic_.now() + nic_.params().rto_ps;
  request_timers_.push(RequestTimer{at, c.dst, c.request_seq});
  nic_.wake_at(at);
}

void UecTransport::on_credit_request(Packet* q) {
  ++n_.credit_requests_received;
  const uint32_t src = q->src;
  RxConn& r = rx(src);
  r.local = q->dst;
  r.backlog = q->tr().credit_bytes;
  r.granted = std::min<uint64_t>(r.granted, q->tr().ack_psn);
  PacketPool::global().release(q);
  if (demand(r) > r.granted && !r.in_credit_list) {
    r.in_credit_list = true;
    credit_rr_.push(src);
    grant_credit();
  }
}

// ---------------------------------------------------------------------------------------
// Independent measurements

// The credit pacer's next grant still sends a packet (a sender's announced backlog it has
// not covered yet): wait for it. Retransmission timers of acknowledged packets are dead.
uint64_t UecTransport::idle_at() const { return grant_pending_ ? next_grant_ps_ : 0; }

// What a reset keeps and what it throws away (docs/validation.md, "Independent rows"):
//  * kept, configuration: the parameters, the scaling they derive from the NIC (MSS, line
//    rate, BDP) and the path latencies the elaborator gave (NicServices::path_rtt_ps);
//  * kept, statistics and ledger: the counters (n_), each connection's congestion window
//    samples, NSCC rule counts and spraying counts;
//  * reset, dynamic: every connection (sender and receiver side) returns to the state
//    conn() and rx() build it in: PSNs and the receiver's PSN window, NSCC's window and
//    everything it learned (average delay, QuickAdapt period, a base RTT lowered by short
//    samples: a row alone starts from the configured one), the entropy policy (REPS ring,
//    bad entropies, freeze) and its random stream (Rng(seed, "<nic>.uec.<dst>") from its
//    start), rccc credit and grants; the ready list, retransmission timers and the credit
//    pacer. In place: queues and rings keep their capacity (no allocation per row), which
//    changes nothing they answer; a connection a row never uses behaves as one not made.
void UecTransport::reset() {
  FABRICSIM_ASSERT(in_flight() == 0, nic_.name() + ": transport reset with packets in flight");
  for (const std::unique_ptr<Conn>& c : conns_) {
    if (!c) continue;
    c->ev.reset();
    if (c->cc) c->cc->reset();
    c->newq.clear();
    c->win.clear();
    c->rtx.clear();
    c->queued_bytes = 0;
    c->next_psn = c->base_psn = 0;
    c->inflight = 0;
    c->order = c->max_acked_order = 0;
    c->credit = bdp_;
    c->requested = false;
    c->request_seq = 0;
    c->rtx_bytes = 0;
    c->listed = false;
  }
  for (const std::unique_ptr<RxConn>& r : rxs_) {
    if (!r) continue;
    r->w.reset();
    r->unacked = 0;
    r->any = false;
    r->backlog = r->granted = r->resend = 0;
    r->in_credit_list = false;
    r->local = 0;
  }
  ready_.clear();
  rto_.clear();
  credit_rr_.clear();
  request_timers_.clear();
  next_grant_ps_ = 0;
  grant_pending_ = false;
  echo_psn_ = UINT32_MAX;
}

// ---------------------------------------------------------------------------------------

uint64_t UecTransport::in_flight() const {
  uint64_t n = 0;
  for (const std::unique_ptr<Conn>& c : conns_)
    if (c) n += c->newq.size() + c->win.size();
  return n;
}

uint64_t UecTransport::cwnd(uint32_t dst) const {
  return dst < conns_.size() && conns_[dst] ? window(*conns_[dst]) : 0;
}

uint64_t UecTransport::inflight_bytes(uint32_t dst) const {
  return dst < conns_.size() && conns_[dst] ? conns_[dst]->inflight : 0;
}

const EntropyPolicy* UecTransport::entropy(uint32_t dst) const {
  return dst < conns_.size() && conns_[dst] ? &conns_[dst]->ev : nullptr;
}

const Nscc* UecTransport::nscc(uint32_t dst) const {
  return dst < conns_.size() && conns_[dst] ? conns_[dst]->cc.get() : nullptr;
}

void UecTransport::add_stats(nlohmann::json& j) const {
  nlohmann::json t;
  t["cc"] = p_.cc;
  t["spraying"] = p_.spraying;
  t["packets_sent_new"] = n_.sent_new;
  t["retransmissions"] = {{"trim_nack", n_.rtx_trim},
                          {"sack_gap", n_.rtx_gap},
                          {"timeout", n_.rtx_timeout}};
  if (n_.rtx_trim + n_.rtx_gap + n_.rtx_timeout) {
    nlohmann::json f;
    const char* names[3] = {"trim_nack", "sack_gap", "timeout"};
    for (int k = 0; k < 3; ++k)
      if (n_.first_rtx_ps[k] != UINT64_MAX) f[names[k]] = n_.first_rtx_ps[k];
    t["first_retransmit_ps"] = f;
  }
  t["acks_sent"] = n_.acks_sent;
  t["nacks_sent"] = n_.nacks_sent;
  t["acks_received"] = n_.acks_received;
  t["nacks_received"] = n_.nacks_received;
  t["ecn_echoes_received"] = n_.ecn_echoes;
  t["duplicates_received"] = n_.duplicates;
  t["trimmed_received"] = n_.trimmed_received;
  t["packets_delivered"] = n_.delivered;
  if (p_.receiver_penalty) t["penalties_sent"] = n_.penalties_sent;
  if (p_.cc == "rccc") {
    t["credits_sent"] = n_.credits_sent;
    t["credit_bytes_granted"] = n_.credit_bytes_granted;
    t["credit_requests_sent"] = n_.credit_requests_sent;
    t["credit_requests_received"] = n_.credit_requests_received;
  }
  // Congestion window samples (one per ack) and spraying, over its connections.
  uint64_t wmin = UINT64_MAX, wmax = 0, wsum = 0, wn = 0, recycled = 0, explored = 0, freezes = 0;
  Nscc::Counts rules;
  for (const std::unique_ptr<Conn>& c : conns_) {
    if (!c) continue;
    wmin = std::min(wmin, c->cwnd_min);
    wmax = std::max(wmax, c->cwnd_max);
    wsum += c->cwnd_sum;
    wn += c->cwnd_samples;
    recycled += c->ev.recycled();
    explored += c->ev.explored();
    freezes += c->ev.freezes();
    if (c->cc) {
      const Nscc::Counts& k = c->cc->counts();
      rules.fair += k.fair;
      rules.proportional += k.proportional;
      rules.fast += k.fast;
      rules.md += k.md;
      rules.quick_adapt += k.quick_adapt;
      rules.nack += k.nack;
      rules.adjustments += k.adjustments;
      rules.penalties += k.penalties;
    }
  }
  if (wn) {
    t["cwnd_min_bytes"] = wmin;
    t["cwnd_max_bytes"] = wmax;
    t["cwnd_avg_bytes"] = wsum / wn;
    t["nscc_rules"] = {{"fair_increase", rules.fair},     {"proportional_increase", rules.proportional},
                       {"fast_increase", rules.fast},     {"multiplicative_decrease", rules.md},
                       {"quick_adapt", rules.quick_adapt}, {"nack_decrease", rules.nack},
                       {"adjustments", rules.adjustments}, {"receiver_penalties", rules.penalties}};
  }
  if (mode_ == SprayMode::kReps) {
    t["reps"] = {{"entropies_recycled", recycled}, {"entropies_explored", explored}};
    if (freezes) t["reps"]["freezes"] = freezes;  // after a loss (spraying.h)
  }
  j["uec"] = t;
}

void UecTransport::add_to_ledger(PacketLedger& l) const {
  if (n_.rtx_trim) l.retransmitted["trim_nack"] += n_.rtx_trim;
  if (n_.rtx_gap) l.retransmitted["sack_gap"] += n_.rtx_gap;
  if (n_.rtx_timeout) l.retransmitted["timeout"] += n_.rtx_timeout;
  l.duplicates += n_.duplicates;
}

}  // namespace fabricsim
