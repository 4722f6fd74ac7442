// The seam between the generic Port (models/link/port.h) and a link's framing. Plain C++.
//
//  * Framing: an immutable description of how a link type puts packets on the wire,
//    shared by every port of that type (LinkParams::framing). It answers the static
//    questions (wire bytes of a packet, efficiency, what a receiver must take in before it
//    can use a packet) and makes each port's LinkLayer.
//  * LinkLayer: the transmit discipline of one port (stateful): the wire bytes of the next
//    transaction (its credits and replay-buffer share), and when it is usable at the far
//    end and the transmitter free again, including link-level retry and its counters. The
//    Port calls prepare() for the transaction it could send next and send() when it sends
//    it; the link layer calls nothing back.
//
// A new framing plugs in without touching the port: a parameter struct and a final
// Framing next to it (e.g. models/nvlink/flit_framing.h), a LinkLayer (the generic
// per-packet one, FramedLinkLayer<F> in models/link/packet_link_layer.h, or its own), and
// a FramingKind in the same file (models/link/link_type.h: its keys bound to the
// parameter struct, and how to build the Framing from them) registered by one line in
// fabrics/plugins.cpp. docs/extending.md walks through it.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "models/core/packet.h"

namespace fabricsim {

struct LinkParams;

// Link-level retry of one port's transmit direction (all 0 when ber == 0).
struct RetryCounters {
  uint64_t crc_errors = 0;         // packets (UALink: codeword copies) the peer received
                                   // with a bad CRC
  uint64_t replays = 0;            // go-back-N replays started by a NAK
  uint64_t replay_wire_bytes = 0;  // wire bytes serialised again by replays (UALink:
                                   // whole codewords)
  uint64_t retry_ps = 0;           // transmitter time lost: bad copies + NAK round trips
};

// A transaction on the wire, in ps at the transmitter (the receiver adds the link latency).
struct TxTiming {
  uint64_t head_ps = 0;  // its first packet is usable at the far end (complete, checked)
  uint64_t tail_ps = 0;  // its last packet is
  uint64_t free_ps = 0;  // the transmitter may start the next transaction
};

class LinkLayer {
 public:
  LinkLayer() = default;
  LinkLayer(const LinkLayer&) = delete;
  LinkLayer& operator=(const LinkLayer&) = delete;
  virtual ~LinkLayer() = default;

  // Sizes `p` as the next transaction to send and returns its wire bytes: the credits it
  // takes and what it holds in the replay buffer. Changes nothing but what send() reuses;
  // the port may prepare again (the same or another transaction) before it sends.
  virtual uint64_t prepare(const Packet& p) = 0;
  // Sends `p`, the transaction prepared last, whose wire bytes prepare() returned as
  // `wire`, at `t` (its first packet is present, p.head_ps <= t; its last arrives here at
  // p.tail_ps). Draws its bit errors (ber > 0) and returns its timing; `p` is not changed.
  virtual TxTiming send(const Packet& p, uint64_t t, uint64_t wire) = 0;

  const RetryCounters& retry_counters() const { return retry_; }
  // Between independent measurements, on an idle link: forget carried remainders (the
  // bit-error stream and the counters stay).
  virtual void reset() {}

  // A bit-error burst (faults): from now on CRC errors are drawn at `ber` per wire bit
  // (0: none), from the stream Rng(seed, port name + "/ber_burst"). Needs a port built
  // with its replay buffer on (Port::attach with retry).
  virtual void set_ber(double ber) = 0;

 protected:
  RetryCounters retry_;
};

// A framing whose packets follow one rule, answerable without a call: a packet of
// `payload` bytes is max(payload rounded up to a power of two `unit` + `fixed`, `min`) +
// `gap` wire bytes, and one without payload `empty` bytes when that is not 0. The flit
// (unit = flit, fixed = overhead flits) and frame (unit 1, fixed = header + FCS, min =
// minimum frame, gap = preamble + gap) framings are of this form (Framing::plain).
struct PlainFraming {
  uint32_t unit_mask = 0;  // unit - 1
  uint32_t fixed = 0, min = 0, gap = 0, empty = 0;
  uint64_t wire(uint32_t payload) const {
    if (payload == 0 && empty) return empty;
    const uint64_t framed = ((uint64_t(payload) + unit_mask) & ~uint64_t(unit_mask)) + fixed;
    return (framed > min ? framed : min) + gap;
  }
};

class Framing {
 public:
  virtual ~Framing() = default;

  // Wire bytes of one packet carrying `payload` bytes.
  virtual uint64_t packet_wire_bytes(uint32_t payload,
                                     PacketKind pk = PacketKind::kData) const = 0;
  // Wire bytes of a transaction: every packet framed separately.
  uint64_t transaction_wire_bytes(const Packet& p) const;
  // Payload / wire for back-to-back packets of `payload` bytes: the protocol efficiency.
  virtual double efficiency(uint32_t payload, PacketKind pk = PacketKind::kData) const {
    return double(payload) / double(packet_wire_bytes(payload, pk));
  }
  virtual std::string describe() const = 0;
  // Wire bytes a receiver takes in before it can use a packet of `packet_payload` bytes
  // (its CRC checked): the store-and-forward unit of a switch port. One packet by default.
  virtual uint64_t receive_unit_bytes(uint32_t packet_payload) const {
    return packet_wire_bytes(packet_payload);
  }
  // Wire bytes by which a packet may become usable after its last byte was sent (0 by
  // default): the replay buffer holds it that much longer before its ack is back.
  virtual uint64_t replay_slack_bytes() const { return 0; }
  // The transmit discipline of one port on `link` (whose framing is this one; the link
  // layer keeps what it needs of both). With link.ber > 0 its bit errors come from
  // Rng(seed, port_name).
  virtual std::unique_ptr<LinkLayer> make_link_layer(const LinkParams& link, uint64_t seed,
                                                     const std::string& port_name) const = 0;
  // True (and the rule in `out`) when this framing's link layer is the generic per-packet
  // one (FramedLinkLayer, models/link/packet_link_layer.h) and its packet_wire_bytes is
  // `out`'s rule for every payload and packet kind: a port without link-level retry may
  // then frame and time its transactions itself, as that link layer would, without the
  // call (Port::attach). Default: no.
  virtual bool plain(PlainFraming* out) const {
    (void)out;
    return false;
  }

 protected:
  // A concrete framing may be copied whole (a link layer keeps one), never sliced.
  Framing() = default;
  Framing(const Framing&) = default;
  Framing& operator=(const Framing&) = delete;
};

inline uint64_t Framing::transaction_wire_bytes(const Packet& p) const {
  if (p.npackets <= 1) return packet_wire_bytes(p.payload_bytes, p.kind);
  return uint64_t(p.npackets - 1) * packet_wire_bytes(p.packet_payload, p.kind) +
         packet_wire_bytes(p.last_packet_payload(), p.kind);
}

}  // namespace fabricsim
