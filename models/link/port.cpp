#include "models/link/port.h"

#include <algorithm>
#include <cmath>

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

void Port::attach(const LinkParams& link, const LinkParams& peer_link, uint64_t seed) {
  FABRICSIM_ASSERT(!attached_, display_name_ + " attached twice");
  FABRICSIM_ASSERT(link.rate_bps > 0 && link.vcs > 0, display_name_ + ": bad link parameters");
  attached_ = true;
  link_ = link;
  peer_link_ = peer_link;
  ser_ = Serializer(link.rate_bps);
  ualink_ = link.framing.kind == Framing::Kind::kUALink;
  if (ualink_) stream_ = FlitStream(link.framing, link.rate_bps);
  latency_ = sc_time::from_value(link.latency_ps);
  // The peer's receive buffer is what this transmitter may fill.
  credits_.assign(link.vcs, peer_link.rx_buffer_bytes);
  retry_ = link.ber > 0;
  if (retry_) {
    FABRICSIM_ASSERT(link.ber < 1 && link.replay_buffer_bytes > 0,
                     display_name_ + ": bad link-level retry parameters");
    rng_.emplace(seed, display_name_);
    log_keep_ = std::log1p(-link.ber);
    nak_wait_ps_ = 2 * link.latency_ps + link.retry_latency_ps;
    ack_wait_ps_ = 2 * link.latency_ps + link.ack_delay_ps;
    if (ualink_) {
      // UALink: the error unit is the codeword; the stream draws from the same bit process.
      gaps_.port = this;
      stream_.enable_replay(&gaps_, nak_wait_ps_);
    } else {
      bits_to_error_ = draw_error_gap();
    }
  }
}

// Inverse CDF of the geometric distribution: with U uniform in (0, 1],
// G = floor(ln U / ln(1 - ber)) has P(G >= g) = (1 - ber)^g, the chance that g bits in a
// row are good. Capped at 2^62 (never reached for ber >= 1e-15 in any run).
uint64_t Port::draw_error_gap() {
  const double u = 1.0 - rng_->uniform01();
  const double g = std::floor(std::log(u) / log_keep_);
  return g >= 0x1p62 ? (uint64_t(1) << 62) : uint64_t(g);
}

uint64_t Port::draw_crc_errors(uint32_t n, uint64_t full, uint64_t last, uint64_t& wait_ps,
                               uint64_t& first_ps, uint64_t& last_ps) {
  uint64_t extra = 0;
  uint32_t k = 0;  // first packet of the current pass (the replay restarts at the bad one)
  for (;;) {
    const uint64_t pass_bits = 8 * (uint64_t(n - 1 - k) * full + last);
    if (bits_to_error_ >= pass_bits) {
      bits_to_error_ -= pass_bits;
      return extra;
    }
    // The error falls in packet j: packets k..j-1 arrive good, j is NAKed, and go-back-N
    // re-sends from j once the NAK is back. Error draws restart with the replayed copy
    // (the geometric distribution is memoryless, so this is the same bit process).
    const uint32_t j = uint32_t(std::min<uint64_t>(k + bits_to_error_ / (8 * full), n - 1));
    const uint64_t bytes = j == n - 1 ? last : full;
    const uint64_t lost = ser_.peek_ps(bytes) + nak_wait_ps_;
    ++c_.crc_errors;
    ++c_.replays;
    c_.replay_wire_bytes += bytes;
    c_.retry_ps += lost;
    extra += bytes;
    wait_ps += nak_wait_ps_;
    if (j == 0) first_ps += lost;
    if (j == n - 1) last_ps += lost;
    bits_to_error_ = draw_error_gap();
    k = j;
  }
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
  const uint64_t tl = ualink_ ? link_.framing.transaction_tl_bytes(*p) : 0;
  const uint64_t wire = ualink_ ? stream_.peek_wire(tl) : link_.framing.transaction_wire_bytes(*p);
  absorb_credits(t);
  if (credits_[p->vc] < wire) {
    if (stall_since_ == UINT64_MAX) stall_since_ = t;
    if (replay_stall_since_ != UINT64_MAX) {  // now waiting for credits: count each wait once
      c_.replay_stall_ps += t - replay_stall_since_;
      replay_stall_since_ = UINT64_MAX;
    }
    // Wake when the next credit return lands (or, if none is in flight, when one is sent).
    if (!credit_fifo_.empty()) sched.set(credit_alarm_, credit_fifo_.front().at_ps);
    return;
  }
  if (stall_since_ != UINT64_MAX) {
    c_.credit_stall_ps += t - stall_since_;
    stall_since_ = UINT64_MAX;
  }
  if (retry_) {
    // Acks are absorbed lazily like credits; a full replay buffer waits for the next one.
    while (!acks_.empty() && acks_.front().at_ps <= t) replay_used_ -= acks_.pop().bytes;
    FABRICSIM_ASSERT(wire <= link_.replay_buffer_bytes,
                     display_name_ + ": transaction larger than the replay buffer");
    if (replay_used_ + wire > link_.replay_buffer_bytes) {
      if (replay_stall_since_ == UINT64_MAX) replay_stall_since_ = t;
      sched.set(tx_alarm_, acks_.front().at_ps);
      return;
    }
    if (replay_stall_since_ != UINT64_MAX) {
      c_.replay_stall_ps += t - replay_stall_since_;
      replay_stall_since_ = UINT64_MAX;
    }
  }
  owner_->tx_pop(index_, p);
  credits_[p->vc] -= wire;

  // Store-and-forward per packet, cut-through per transaction: the transaction's first
  // packet can leave once fully present (head_ps <= t), and its last packet cannot finish
  // before it has arrived here and been re-serialised.
  const bool multi = p->npackets > 1;
  uint64_t end, busy_end;
  bool clean = true;  // no bit error in this transaction (always so without retry)
  if (ualink_) {
    // Stream framing: the packet is usable downstream when the codeword holding its last
    // byte has been sent (its good copy, with replay); the transmitter is free for the
    // next packet as soon as its last byte is placed, and that packet may share the
    // codeword. With replay the stream draws the errors of the codewords this packet
    // opens, and every bad copy delays its codeword and all later ones by a codeword + D.
    const Framing& f = link_.framing;
    const uint64_t first_tl = multi ? f.tl_bytes(p->packet_payload, p->kind) : tl;
    const FlitStream::Placement pl = stream_.place(t, tl, first_tl);
    FABRICSIM_ASSERT(pl.wire_bytes == wire, display_name_ + ": stream wire bytes changed");
    if (pl.bad_copies) {
      c_.crc_errors += pl.bad_copies;
      c_.replays += pl.bad_copies;
      c_.replay_wire_bytes += uint64_t(pl.bad_copies) * f.fec_codeword_bytes;
      c_.retry_ps += uint64_t(pl.bad_copies) * stream_.replay_ps();
    }
    end = pl.done_ps;
    busy_end = pl.free_ps;
    // The tail has not arrived yet: the last packet's codeword cannot end (good copy)
    // before it has, plus that codeword's own replays.
    if (multi && p->tail_ps + stream_.codeword_ps() + pl.last_lost_ps > end) {
      end = p->tail_ps + stream_.codeword_ps() + pl.last_lost_ps;
      busy_end = end;
      stream_.close();
    }
    p->head_ps = multi ? pl.first_ps : end;
  } else {
    const uint64_t full_bytes =
        multi ? link_.framing.packet_wire_bytes(p->packet_payload, p->kind) : wire;
    const uint64_t last_bytes =
        multi ? link_.framing.packet_wire_bytes(p->last_packet_payload(), p->kind) : wire;
    uint64_t ser, first, last;
    clean = !retry_ || bits_to_error_ >= 8 * wire;
    if (clean) {
      ser = ser_.take_ps(wire);
      first = multi ? ser_.peek_ps(full_bytes) : ser;
      last = multi ? ser_.peek_ps(last_bytes) : ser;
    } else {
      // Bad copies are serialised again and each NAK round trip holds the serialiser; the
      // first and last packets' good copies come later by their own losses.
      uint64_t wait = 0, first_lost = 0, last_lost = 0;
      const uint64_t extra = draw_crc_errors(multi ? p->npackets : 1, full_bytes, last_bytes,
                                             wait, first_lost, last_lost);
      ser = ser_.take_ps(wire + extra) + wait;
      first = multi ? ser_.peek_ps(full_bytes) + first_lost : ser;
      last = multi ? ser_.peek_ps(last_bytes) + last_lost : ser;
    }
    end = std::max(t + ser, p->tail_ps + last);
    busy_end = end;
    p->head_ps = multi ? t + first : end;
  }
  p->tail_ps = end;
  if (retry_) {
    // Flit/frame links count bits here (draw_crc_errors() consumed them otherwise); the
    // UALink stream counts its codewords' bits itself.
    if (clean && !ualink_) bits_to_error_ -= 8 * wire;
    replay_used_ += wire;
    acks_.push(Ack{end + ack_wait_ps_, wire});
  }
  p->link_bytes = uint32_t(wire);
  ++p->hops;

  c_.tx_payload_bytes += p->payload_bytes;
  c_.tx_wire_bytes += wire;
  c_.tx_packets += p->npackets;
  ++c_.tx_transactions;
  c_.busy_ps += busy_end - t;
  busy_until_ = busy_end;

  Phase ph = tlm::BEGIN_REQ;
  sc_time d = latency_;
  tx->nb_transport_fw(*p, ph, d);
  sched.set(tx_alarm_, busy_end);
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
  // Link-level retry on this port's transmit direction (docs/models.md).
  j["crc_errors"] = c_.crc_errors;
  j["replays"] = c_.replays;
  j["replay_wire_bytes"] = c_.replay_wire_bytes;
  j["retry_ps"] = c_.retry_ps;
  j["replay_stall_ps"] = c_.replay_stall_ps;
  // Egress queue of a switch port; an endpoint's backlog is per endpoint (its DMA queue).
  j["queue_depth_max_bytes"] = queue_.max();
  j["queue_depth_avg_bytes"] = queue_.average(now_ps);
  return j;
}

void bind_link(Port& a, Port& b, const LinkParams& link, uint64_t seed) {
  a.attach(link, link, seed);
  b.attach(link, link, seed);
  a.tx.bind(b.rx);
  b.tx.bind(a.rx);
  a.peer_name = b.display_name();
  b.peer_name = a.display_name();
}

}  // namespace fabricsim
