#include "models/ualink/stream_link_layer.h"

#include "models/core/errors.h"

namespace fabricsim {

StreamLinkLayer::StreamLinkLayer(const UALinkFraming& f, const LinkParams& link, uint64_t seed,
                                 const std::string& port_name)
    : f_(f),
      port_name_(port_name),
      stream_(f, link.rate_bps),
      seed_(seed),
      nak_wait_ps_(2 * link.latency_ps + link.retry_latency_ps) {
  if (link.ber > 0) {
    errors_.emplace(link.ber, seed, port_name);
    stream_.enable_replay(&*errors_, nak_wait_ps_);
  }
}

void StreamLinkLayer::set_ber(double ber) {
  stream_.disable_replay();
  errors_.reset();
  if (ber <= 0) return;
  errors_.emplace(ber, seed_, port_name_ + "/ber_burst");
  stream_.close();  // the burst starts with a fresh codeword: none half drawn without errors
  stream_.enable_replay(&*errors_, nak_wait_ps_);
}

TxTiming StreamLinkLayer::send(const Packet& p, uint64_t t, uint64_t wire) {
  // Stream framing: the packet is usable downstream when the codeword holding its last
  // byte has been sent (its good copy, with replay); the transmitter is free for the
  // next packet as soon as its last byte is placed, and that packet may share the
  // codeword. With replay the stream draws the errors of the codewords this packet
  // opens, and every bad copy delays its codeword and all later ones by a codeword + D.
  const bool multi = p.npackets > 1;
  const uint64_t first_tl = multi ? f_.tl_bytes(p.packet_payload, p.kind) : tl_;
  const FlitStream::Placement pl = stream_.place(t, tl_, first_tl);
  FABRICSIM_ASSERT(pl.wire_bytes == wire, port_name_ + ": stream wire bytes changed");
  if (pl.bad_copies) {
    retry_.crc_errors += pl.bad_copies;
    retry_.replays += pl.bad_copies;
    retry_.replay_wire_bytes += uint64_t(pl.bad_copies) * f_.params().fec_codeword_bytes;
    retry_.retry_ps += uint64_t(pl.bad_copies) * stream_.replay_ps();
  }
  TxTiming tm;
  tm.tail_ps = pl.done_ps;
  tm.free_ps = pl.free_ps;
  // The tail has not arrived yet: the last packet's codeword cannot end (good copy)
  // before it has, plus that codeword's own replays.
  if (multi && p.tail_ps + stream_.codeword_ps() + pl.last_lost_ps > tm.tail_ps) {
    tm.tail_ps = p.tail_ps + stream_.codeword_ps() + pl.last_lost_ps;
    tm.free_ps = tm.tail_ps;
    stream_.close();
  }
  tm.head_ps = multi ? pl.first_ps : tm.tail_ps;
  return tm;
}

}  // namespace fabricsim
