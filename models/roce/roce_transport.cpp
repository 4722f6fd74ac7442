#include "models/roce/roce_transport.h"

#include <algorithm>

#include "models/core/errors.h"
#include "models/core/rng.h"
#include "models/core/types.h"

namespace fabricsim {

RoceTransport::RoceTransport(const RoceParams& p, NicServices& nic) : p_(p), nic_(nic) {
  p_.rp.line_rate_bps = nic.line_rate_bps();
}

RoceTransport::Qp& RoceTransport::qp(uint32_t dst) {
  if (qps_.size() <= dst) qps_.resize(nic_.endpoints());
  std::unique_ptr<Qp>& q = qps_.at(dst);
  if (!q) {
    q = std::make_unique<Qp>();
    q->dst = dst;
    q->entropy = uint16_t(Rng(nic_.params().seed, nic_.name() + ".qp." + std::to_string(dst)).next());
    if (p_.dcqcn) q->cc = std::make_unique<Dcqcn>(p_.rp);
  }
  return *q;
}

RoceTransport::RxQp& RoceTransport::rx(uint32_t src) {
  if (rxs_.size() <= src) rxs_.resize(nic_.endpoints());
  std::unique_ptr<RxQp>& r = rxs_.at(src);
  if (!r) r = std::make_unique<RxQp>();
  return *r;
}

void RoceTransport::list(Qp& q) {
  if (q.listed) return;
  q.listed = true;
  ready_.push(q.dst);
  nic_.kick();
}

void RoceTransport::enqueue(uint32_t dst, Packet* p) {
  Qp& q = qp(dst);
  q.newq.push(p);
  list(q);
}

Packet* RoceTransport::next(uint64_t* retry_at) {
  const uint64_t now = nic_.now();
  for (size_t n = ready_.size(); n > 0; --n) {
    const uint32_t d = ready_.pop();
    Qp& q = *qps_[d];
    if (!has_work(q)) {
      q.listed = false;
      continue;
    }
    if (q.next_tx_ps > now) {  // the rate limiter: not yet
      *retry_at = std::min(*retry_at, q.next_tx_ps);
      ready_.push(d);
      continue;
    }
    Packet* p;
    if (q.snd_nxt < q.next_new) {  // go-back-N replay from the copies
      TxEntry& e = q.win.at(q.snd_nxt - q.snd_una);
      ++e.copy.transport.retransmits;
      p = nic_.recreate(e.copy);
      p->flags = uint8_t(p->flags & ~(kCe | kUrgent));
      ++(q.replay == Cause::kNack ? n_.rtx_nack : n_.rtx_timeout);
    } else {
      p = q.newq.pop();
      p->tr().psn = q.next_new++;
      p->entropy = q.entropy;
      if (q.newq.empty()) p->flags |= kAckReq;
      TxEntry e;
      e.copy.assign(*p);
      q.win.push(e);
      ++n_.sent_new;
    }
    ++q.snd_nxt;
    if (has_work(q))
      ready_.push(d);
    else
      q.listed = false;
    return p;
  }
  return nullptr;
}

void RoceTransport::sent(Packet* p) {
  Qp& q = *qps_.at(p->dst);
  const uint64_t now = nic_.now();
  FABRICSIM_ASSERT(p->tr().psn >= q.snd_una && p->tr().psn < q.next_new,
                   nic_.name() + ": sent a packet outside its window");
  TxEntry& e = q.win.at(p->tr().psn - q.snd_una);
  e.order = ++q.order;
  if (p->tr().retransmits == 0) nic_.first_sent(p->payload_bytes);
  const uint64_t wire = p->payload_bytes + p_.wire_overhead_bytes;
  if (q.cc) {
    q.cc->on_sent(wire, now);
    const uint64_t r = q.cc->rate_bps();
    q.next_tx_ps = now + transfer_ps(wire, r);
    q.rate_min = std::min(q.rate_min, r);
    q.rate_sum += r / 1000000;  // Mb/s, to keep the sum in range
    ++q.rate_samples;
  }
  const bool was_empty = rto_.empty();
  rto_.push(Rto{now + nic_.params().rto_ps, q.dst, p->tr().psn, e.order});
  if (was_empty) nic_.wake_at(rto_.front().at_ps);
}

void RoceTransport::acked_below(Qp& q, uint32_t psn) {
  while (q.snd_una < psn && !q.win.empty()) {
    q.win.pop();
    ++q.snd_una;
  }
  if (q.snd_nxt < q.snd_una) q.snd_nxt = q.snd_una;
}

void RoceTransport::rewind(Qp& q, uint32_t psn, Cause why) {
  acked_below(q, psn);
  if (q.snd_nxt > q.snd_una) {
    q.snd_nxt = q.snd_una;
    q.replay = why;
  }
  if (has_work(q)) list(q);
}

// ---------------------------------------------------------------------------------------
// Receiving

void RoceTransport::control(Packet* d, PacketKind kind, uint32_t psn) {
  Packet* a = nic_.acquire();
  a->kind = kind;
  a->src = d->dst;
  a->dst = d->src;
  a->tc = d->tc;
  a->entropy = d->entropy;
  a->tr().ack_psn = psn;
  a->tr().psn = psn;
  nic_.send_control(a);
}

void RoceTransport::on_data(Packet* p) {
  RxQp& r = rx(p->src);
  const uint64_t now = nic_.now();
  if ((p->flags & kCe) && (!r.cnp_sent || now - r.last_cnp_ps >= p_.cnp_interval_ps)) {
    r.cnp_sent = true;
    r.last_cnp_ps = now;
    control(p, PacketKind::kCnp, 0);
    ++n_.cnps_sent;
  }
  if (p->tr().psn > r.epsn) {  // a gap: discarded; go back to the expected PSN
    ++n_.out_of_order;
    if (!r.nacked) {
      r.nacked = true;
      control(p, PacketKind::kXportNack, r.epsn);
      ++n_.nacks_sent;
    }
    nic_.absorb(p);
    return;
  }
  if (p->tr().psn < r.epsn) {  // a duplicate of what arrived: acknowledge again
    ++n_.duplicates;
    control(p, PacketKind::kXportAck, r.epsn);
    ++n_.acks_sent;
    nic_.absorb(p);
    return;
  }
  ++r.epsn;
  r.nacked = false;
  r.unacked += p->payload_bytes;
  const bool last = p->offset + p->payload_bytes >= p->msg_bytes;
  if (last || (p->flags & kAckReq) || r.unacked >= nic_.params().ack_bytes) {
    control(p, PacketKind::kXportAck, r.epsn);
    ++n_.acks_sent;
    r.unacked = 0;
  }
  ++n_.delivered;
  nic_.deliver(p);
}

void RoceTransport::receive(Packet* p) {
  switch (p->kind) {
    case PacketKind::kXportAck: {
      ++n_.acks_received;
      Qp& q = qp(p->src);
      acked_below(q, p->tr().ack_psn);
      if (has_work(q)) list(q);
      break;
    }
    case PacketKind::kXportNack: {
      ++n_.nacks_received;
      Qp& q = qp(p->src);
      const uint32_t psn = p->tr().ack_psn;
      if (psn >= q.snd_una && psn < q.snd_nxt) rewind(q, psn, Cause::kNack);
      break;
    }
    case PacketKind::kCnp: {
      ++n_.cnps_received;
      Qp& q = qp(p->src);
      if (q.cc) q.cc->on_cnp(nic_.now());
      break;
    }
    case PacketKind::kCredit:
    case PacketKind::kCreditReq: FABRICSIM_ASSERT(false, nic_.name() + ": RoCE takes no credits"); break;
    default: on_data(p); return;
  }
  PacketPool::global().release(p);
}

void RoceTransport::on_timer() {
  const uint64_t now = nic_.now();
  while (!rto_.empty()) {
    const Rto r = rto_.front();
    Qp& q = *qps_[r.dst];
    const bool live = r.psn >= q.snd_una && r.psn < q.next_new &&
                      q.win.at(r.psn - q.snd_una).order == r.order;
    if (live && r.at_ps > now) break;
    rto_.pop();
    if (live && r.psn == q.snd_una) rewind(q, q.snd_una, Cause::kTimeout);
  }
  if (!rto_.empty()) nic_.wake_at(rto_.front().at_ps);
}

// ---------------------------------------------------------------------------------------
// Independent measurements

// What a reset keeps and what it throws away (docs/validation.md, "Independent rows"):
//  * kept, configuration: the parameters, the rates derived from the NIC's line rate and
//    each queue pair's entropy (UDP source port: drawn once from Rng(seed,
//    "<nic>.qp.<dst>"), the value a fresh queue pair draws again);
//  * kept, statistics and ledger: the counters (n_) and each queue pair's DCQCN rate
//    samples;
//  * reset, dynamic: every queue pair (sender and receiver side) returns to the state qp()
//    and rx() build it in: PSNs, the expected PSN and its NACK state, the pacer's next
//    slot, DCQCN's rates, alpha, stages, byte counter and (lazy) timers, the notification
//    point's CNP interval; the ready list and retransmission timers. In place (queues keep
//    their capacity). DCQCN's timers are lazy (no event): none keeps the fabric from
//    settling.
void RoceTransport::reset() {
  FABRICSIM_ASSERT(in_flight() == 0, nic_.name() + ": transport reset with packets in flight");
  for (const std::unique_ptr<Qp>& q : qps_) {
    if (!q) continue;
    q->newq.clear();
    q->win.clear();
    q->snd_una = q->snd_nxt = q->next_new = 0;
    q->replay = Cause::kNack;
    q->order = 0;
    q->next_tx_ps = 0;
    if (q->cc) *q->cc = Dcqcn(p_.rp);
    q->listed = false;
  }
  for (const std::unique_ptr<RxQp>& r : rxs_)
    if (r) *r = RxQp();
  ready_.clear();
  rto_.clear();
}

// ---------------------------------------------------------------------------------------

uint64_t RoceTransport::in_flight() const {
  uint64_t n = 0;
  for (const std::unique_ptr<Qp>& q : qps_)
    if (q) n += q->newq.size() + q->win.size();
  return n;
}

const Dcqcn* RoceTransport::dcqcn(uint32_t dst) const {
  return dst < qps_.size() && qps_[dst] ? qps_[dst]->cc.get() : nullptr;
}

void RoceTransport::add_stats(nlohmann::json& j) const {
  nlohmann::json t;
  t["dcqcn"] = p_.dcqcn;
  t["packets_sent_new"] = n_.sent_new;
  t["retransmissions"] = {{"nack", n_.rtx_nack}, {"timeout", n_.rtx_timeout}};
  t["acks_sent"] = n_.acks_sent;
  t["nacks_sent"] = n_.nacks_sent;
  t["cnps_sent"] = n_.cnps_sent;
  t["acks_received"] = n_.acks_received;
  t["nacks_received"] = n_.nacks_received;
  t["cnps_received"] = n_.cnps_received;
  t["out_of_order_discarded"] = n_.out_of_order;
  t["duplicates_received"] = n_.duplicates;
  t["packets_delivered"] = n_.delivered;
  uint64_t rmin = UINT64_MAX, rsum = 0, rn = 0;
  for (const std::unique_ptr<Qp>& q : qps_) {
    if (!q || !q->rate_samples) continue;
    rmin = std::min(rmin, q->rate_min);
    rsum += q->rate_sum;
    rn += q->rate_samples;
  }
  if (rn) {  // DCQCN's current rate, sampled at every packet sent
    t["rate_min_Gbps"] = double(rmin) * 1e-9;
    t["rate_avg_Gbps"] = double(rsum) / double(rn) * 1e-3;
  }
  j["roce"] = t;
}

void RoceTransport::add_to_ledger(PacketLedger& l) const {
  if (n_.rtx_nack) l.retransmitted["go_back_n_nack"] += n_.rtx_nack;
  if (n_.rtx_timeout) l.retransmitted["timeout"] += n_.rtx_timeout;
  l.duplicates += n_.duplicates + n_.out_of_order;
}

}  // namespace fabricsim
