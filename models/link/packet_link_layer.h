// The generic per-packet link layer: every packet of a transaction framed on its own
// (flits, frames), serialised at the link rate with the remainder carried, and, with
// ber > 0, link-level retry per packet. Plain C++.
//
// Link-level retry (docs/models.md, "Link-level retry"): go-back-N with a replay buffer,
// PCIe-like. CRC errors are drawn per wire bit from the port's Rng(seed, display name) as
// a geometric "bits until the next error" counter. The transmitter draws them when it
// starts a transaction, so it knows which packet the receiver will NAK and when the NAK
// returns (tail of the bad packet + 2 x latency + retry_latency); it holds the serialiser
// until then and re-sends from the bad packet. Delivery times equal those of a go-back-N
// sender that keeps sending into the NAK window and replays the window: the receiver
// discards everything after the bad packet. (The replay buffer and the acks are the
// Port's.)
#pragma once
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "models/link/bit_errors.h"
#include "models/link/link_layer.h"
#include "models/link/link_params.h"
#include "models/link/serializer.h"

namespace fabricsim {

class PacketLinkLayer : public LinkLayer {
 public:
  PacketLinkLayer(const LinkParams& link, uint64_t seed, const std::string& port_name);

 protected:
  // Sends `p` at `t`: `wire` bytes in all, `full` per full packet and `last` for the last
  // (all three `wire` for a single packet).
  TxTiming send_packets(const Packet& p, uint64_t t, uint64_t wire, uint64_t full,
                        uint64_t last);

 private:
  // Draws the CRC errors of a transaction of `n` packets (`full` wire bytes each, the last
  // `last`) and returns the extra bytes to serialise; adds NAK waits to `wait_ps` and the
  // delays of the first and last packet's good copies to `first_ps` / `last_ps`.
  uint64_t draw_crc_errors(uint32_t n, uint64_t full, uint64_t last, uint64_t& wait_ps,
                           uint64_t& first_ps, uint64_t& last_ps);

  Serializer ser_;
  // Link-level retry state (errors_ empty when ber == 0).
  std::optional<GeometricBitErrors> errors_;
  uint64_t bits_to_error_ = 0;  // good wire bits before the next bit error
  uint64_t nak_wait_ps_ = 0;    // bad packet's tail -> replay starts: 2 x latency + retry_latency
};

// The per-packet link layer of framing F (a final Framing): F's arithmetic is inlined.
template <class F>
class FramedLinkLayer final : public PacketLinkLayer {
 public:
  FramedLinkLayer(const F& f, const LinkParams& link, uint64_t seed,
                  const std::string& port_name)
      : PacketLinkLayer(link, seed, port_name), f_(f) {}

  uint64_t wire_bytes(const Packet& p) const override { return packets_wire_bytes(f_, p); }
  TxTiming send(const Packet& p, uint64_t t, uint64_t wire) override {
    if (p.npackets <= 1) return send_packets(p, t, wire, wire, wire);
    return send_packets(p, t, wire, f_.packet_wire_bytes(p.packet_payload, p.kind),
                        f_.packet_wire_bytes(p.last_packet_payload(), p.kind));
  }

 private:
  const F f_;  // a copy of the link's (immutable, small) framing: no hop to it per packet
};

inline TxTiming PacketLinkLayer::send_packets(const Packet& p, uint64_t t, uint64_t wire,
                                              uint64_t full, uint64_t last) {
  // Store-and-forward per packet, cut-through per transaction: the transaction's first
  // packet can leave once fully present (head_ps <= t), and its last packet cannot finish
  // before it has arrived here and been re-serialised.
  const bool multi = p.npackets > 1;
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

}  // namespace fabricsim
