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

  TxTiming send(const Packet& p, uint64_t t, uint64_t wire) final;
  void set_ber(double ber) final;
  void reset() final { ser_ = Serializer(ser_.rate_bps()); }

 protected:
  // What prepare() sized for a transaction of several packets: the wire bytes of a full
  // packet and of the last one.
  uint64_t full_ = 0, last_ = 0;

 private:
  // Out of line, so that send()'s common case needs no registers saved.
  [[gnu::noinline]] TxTiming send_general(const Packet& p, uint64_t t, uint64_t wire);
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
  uint64_t seed_ = 0;           // for bursts (set_ber)
  std::string port_name_;
};

// The per-packet link layer of framing F (a final Framing): F's arithmetic is inlined.
template <class F>
class FramedLinkLayer final : public PacketLinkLayer {
 public:
  FramedLinkLayer(const F& f, const LinkParams& link, uint64_t seed,
                  const std::string& port_name)
      : PacketLinkLayer(link, seed, port_name), f_(f) {}

  // Every packet framed separately: npackets - 1 full packets and the (possibly shorter)
  // last one.
  uint64_t prepare(const Packet& p) override {
    if (p.npackets <= 1) return f_.packet_wire_bytes(p.payload_bytes, p.kind);
    full_ = f_.packet_wire_bytes(p.packet_payload, p.kind);
    last_ = f_.packet_wire_bytes(p.last_packet_payload(), p.kind);
    return uint64_t(p.npackets - 1) * full_ + last_;
  }

 private:
  const F f_;  // a copy of the link's (immutable, small) framing: no hop to it per packet
};

}  // namespace fabricsim
