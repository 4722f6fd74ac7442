#include "models/link/packet_link_layer.h"

#include <algorithm>

namespace fabricsim {

PacketLinkLayer::PacketLinkLayer(const LinkParams& link, uint64_t seed,
                                 const std::string& port_name)
    : ser_(link.rate_bps),
      nak_wait_ps_(2 * link.latency_ps + link.retry_latency_ps),
      seed_(seed),
      port_name_(port_name) {
  if (link.ber > 0) {
    errors_.emplace(link.ber, seed, port_name);
    bits_to_error_ = errors_->next_gap();
  }
}

void PacketLinkLayer::set_ber(double ber) {
  if (ber <= 0) {
    errors_.reset();
    return;
  }
  errors_.emplace(ber, seed_, port_name_ + "/ber_burst");
  bits_to_error_ = errors_->next_gap();
}

TxTiming PacketLinkLayer::send(const Packet& p, uint64_t t, uint64_t wire) {
  // The common case, kept lean: one packet and no link-level retry (send_general() gives
  // the same times for it).
  if (p.npackets <= 1 && !errors_) {
    const uint64_t ser = ser_.take_ps(wire);
    const uint64_t end = std::max(t + ser, p.tail_ps + ser);
    return TxTiming{end, end, end};
  }
  return send_general(p, t, wire);
}

TxTiming PacketLinkLayer::send_general(const Packet& p, uint64_t t, uint64_t wire) {
  // Store-and-forward per packet, cut-through per transaction: the transaction's first
  // packet can leave once fully present (head_ps <= t), and its last packet cannot finish
  // before it has arrived here and been re-serialised.
  const bool multi = p.npackets > 1;
  const uint64_t full = multi ? full_ : wire, last = multi ? last_ : wire;
  uint64_t ser, first_ps, last_ps;
  if (!errors_ || bits_to_error_ >= 8 * wire) {  // no bit error in this transaction
    ser = ser_.take_ps(wire);
    first_ps = multi ? ser_.peek_ps(full) : ser;
    last_ps = multi ? ser_.peek_ps(last) : ser;
    if (errors_) bits_to_error_ -= 8 * wire;
  } else {
    // Bad copies are serialised again and each NAK round trip holds the serialiser; the
    // first and last packets' good copies come later by their own losses.
    uint64_t wait = 0, first_lost = 0, last_lost = 0;
    const uint64_t extra = draw_crc_errors(multi ? p.npackets : 1, full, last, wait,
                                           first_lost, last_lost);
    ser = ser_.take_ps(wire + extra) + wait;
    first_ps = multi ? ser_.peek_ps(full) + first_lost : ser;
    last_ps = multi ? ser_.peek_ps(last) + last_lost : ser;
  }
  TxTiming tm;
  tm.tail_ps = std::max(t + ser, p.tail_ps + last_ps);
  tm.free_ps = tm.tail_ps;
  tm.head_ps = multi ? t + first_ps : tm.tail_ps;
  return tm;
}

uint64_t PacketLinkLayer::draw_crc_errors(uint32_t n, uint64_t full, uint64_t last,
                                          uint64_t& wait_ps, uint64_t& first_ps,
                                          uint64_t& last_ps) {
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
    ++retry_.crc_errors;
    ++retry_.replays;
    retry_.replay_wire_bytes += bytes;
    retry_.retry_ps += lost;
    extra += bytes;
    wait_ps += nak_wait_ps_;
    if (j == 0) first_ps += lost;
    if (j == n - 1) last_ps += lost;
    bits_to_error_ = errors_->next_gap();
    k = j;
  }
}

}  // namespace fabricsim
