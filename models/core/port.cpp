#include "models/core/port.h"

#include <algorithm>

#include "models/core/errors.h"

namespace fabricsim {

using sc_core::sc_time;

Port::Port(sc_core::sc_module_name n, std::string display_name, PortOwner* owner, int index,
           bool rx_at_head, uint64_t rx_latency_ps)
    : sc_module(n),
      tx("tx"),
      rx("rx"),
      display_name_(std::move(display_name)),
      owner_(owner),
      index_(index),
      rx_at_head_(rx_at_head),
      rx_latency_ps_(rx_latency_ps) {
  tx.bind(*this);
  rx.bind(*this);
  Scheduler::instance();  // exists before the simulation starts
  tx_alarm_ = Alarm{this, kTx};
  rx_alarm_ = Alarm{this, kRx};
  credit_alarm_ = Alarm{this, kCredit};
}

void Port::wake(uint32_t what) {
  ++g_kernel_events;
  switch (what) {
    case kTx: tx_method(); break;
    case kRx: rx_method(); break;
    default: credit_method(); break;
  }
}

void Port::attach(const LinkParams& link, const LinkParams& peer_link) {
  FABRICSIM_ASSERT(!attached_, display_name_ + " attached twice");
  FABRICSIM_ASSERT(link.rate_bps > 0 && link.vcs > 0, display_name_ + ": bad link parameters");
  attached_ = true;
  link_ = link;
  peer_link_ = peer_link;
  ser_ = Serializer(link.rate_bps);
  latency_ = sc_time::from_value(link.latency_ps);
  // The peer's receive buffer is what this transmitter may fill.
  credits_.assign(link.vcs, peer_link.rx_buffer_bytes);
}

void Port::tx_method() {
  const uint64_t t = now();
  Scheduler& sched = Scheduler::instance();
  if (busy_until_ > t) {
    sched.set(tx_alarm_, busy_until_);
    return;
  }
  Packet* p = owner_->tx_peek(index_);
  if (!p) return;  // idle until the owner kicks
  if (p->head_ps > t) {
    sched.set(tx_alarm_, p->head_ps);
    return;
  }
  FABRICSIM_ASSERT(p->vc < link_.vcs, display_name_ + ": packet on a VC the link lacks");
  const uint64_t wire = link_.framing.transaction_wire_bytes(*p);
  absorb_credits(t);
  if (credits_[p->vc] < wire) {
    if (stall_since_ == UINT64_MAX) stall_since_ = t;
    // Wake when the next credit return lands (or, if none is in flight, when one is sent).
    if (!credit_fifo_.empty()) sched.set(credit_alarm_, credit_fifo_.front().at_ps);
    return;
  }
  if (stall_since_ != UINT64_MAX) {
    c_.credit_stall_ps += t - stall_since_;
    stall_since_ = UINT64_MAX;
  }
  owner_->tx_pop(index_, p);
  credits_[p->vc] -= wire;

  // Store-and-forward per packet, cut-through per transaction: the transaction's first
  // packet can leave once fully present (head_ps <= t), and its last packet cannot finish
  // before it has arrived here and been re-serialised.
  const uint64_t ser = ser_.take_ps(wire);
  const bool multi = p->npackets > 1;
  const uint64_t first = multi ? ser_.peek_ps(link_.framing.packet_wire_bytes(p->packet_payload))
                               : ser;
  const uint64_t last =
      multi ? ser_.peek_ps(link_.framing.packet_wire_bytes(p->last_packet_payload())) : ser;
  const uint64_t end = std::max(t + ser, p->tail_ps + last);
  p->head_ps = multi ? t + first : end;
  p->tail_ps = end;
  p->link_bytes = uint32_t(wire);
  ++p->hops;

  c_.tx_payload_bytes += p->payload_bytes;
  c_.tx_wire_bytes += wire;
  c_.tx_packets += p->npackets;
  ++c_.tx_transactions;
  c_.busy_ps += end - t;
  busy_until_ = end;

  Phase ph = tlm::BEGIN_REQ;
  sc_time d = latency_;
  tx->nb_transport_fw(*p, ph, d);
  sched.set(tx_alarm_, end);
}

tlm::tlm_sync_enum Port::nb_transport_fw(Packet& p, Phase& ph, sc_time& d) {
  FABRICSIM_ASSERT(ph == tlm::BEGIN_REQ, display_name_ + ": unexpected phase on rx");
  const uint64_t delay = d.value() + rx_latency_ps_;
  p.head_ps += delay;
  p.tail_ps += delay;
  const bool was_empty = arrivals_.empty();
  arrivals_.push(&p);
  c_.rx_payload_bytes += p.payload_bytes;
  c_.rx_packets += p.npackets;
  ++c_.rx_transactions;
  if (was_empty) Scheduler::instance().set(rx_alarm_, rx_at_head_ ? p.head_ps : p.tail_ps);
  return tlm::TLM_ACCEPTED;
}

void Port::rx_method() {
  const uint64_t t = now();
  while (!arrivals_.empty()) {
    Packet* p = arrivals_.front();
    const uint64_t at = rx_at_head_ ? p->head_ps : p->tail_ps;
    if (at > t) {
      Scheduler::instance().set(rx_alarm_, at);
      return;
    }
    arrivals_.pop();
    owner_->rx_arrive(index_, p);
  }
}

void Port::release_rx(Packet* p, uint64_t after_ps) {
  Phase ph = CREDIT_RETURN;
  uint64_t at = now() + after_ps + peer_link_.latency_ps;
  if (at < last_release_at_) at = last_release_at_;
  last_release_at_ = at;
  sc_time d = sc_time::from_value(at - now());
  rx->nb_transport_bw(*p, ph, d);
}

tlm::tlm_sync_enum Port::nb_transport_bw(Packet& p, Phase& ph, sc_time& d) {
  FABRICSIM_ASSERT(ph == CREDIT_RETURN, display_name_ + ": unexpected phase on tx");
  const uint64_t at = now() + d.value();
  FABRICSIM_ASSERT(credit_fifo_.empty() || credit_fifo_.at(credit_fifo_.size() - 1).at_ps <= at,
                   display_name_ + ": credits returned out of order");
  const bool was_empty = credit_fifo_.empty();
  credit_fifo_.push(CreditReturn{at, p.vc, p.link_bytes});
  // Credits are absorbed lazily by the transmitter; an event is needed only while it waits.
  if (was_empty && stall_since_ != UINT64_MAX) Scheduler::instance().set(credit_alarm_, at);
  return tlm::TLM_ACCEPTED;
}

void Port::absorb_credits(uint64_t t) {
  while (!credit_fifo_.empty() && credit_fifo_.front().at_ps <= t) {
    const CreditReturn c = credit_fifo_.pop();
    credits_[c.vc] += c.bytes;
    FABRICSIM_ASSERT(credits_[c.vc] <= peer_link_.rx_buffer_bytes,
                     display_name_ + ": more credits returned than the buffer holds");
  }
}

void Port::credit_method() {
  if (stall_since_ != UINT64_MAX) kick();
}

void Port::b_transport(Packet&, sc_time&) {
  throw InternalError(display_name_ + ": fabric ports are non-blocking only");
}

nlohmann::json Port::stats_json(uint64_t now_ps) const {
  nlohmann::json j;
  j["peer"] = peer_name;
  j["link_type"] = link_.type_name;
  j["tx_payload_bytes"] = c_.tx_payload_bytes;
  j["tx_wire_bytes"] = c_.tx_wire_bytes;
  j["tx_packets"] = c_.tx_packets;
  j["tx_transactions"] = c_.tx_transactions;
  j["rx_payload_bytes"] = c_.rx_payload_bytes;
  j["rx_packets"] = c_.rx_packets;
  j["busy_ps"] = c_.busy_ps;
  j["utilisation"] = now_ps ? double(c_.busy_ps) / double(now_ps) : 0.0;
  j["credit_stall_ps"] = c_.credit_stall_ps;
  // Egress queue of a switch port; an endpoint's backlog is per endpoint (its DMA queue).
  j["queue_depth_max_bytes"] = queue_.max();
  j["queue_depth_avg_bytes"] = queue_.average(now_ps);
  return j;
}

void bind_link(Port& a, Port& b, const LinkParams& link) {
  a.attach(link, link);
  b.attach(link, link);
  a.tx.bind(b.rx);
  b.tx.bind(a.rx);
  a.peer_name = b.display_name();
  b.peer_name = a.display_name();
}

}  // namespace fabricsim
