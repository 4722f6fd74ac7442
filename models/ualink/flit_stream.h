// Byte-exact wire time: protocol framing (payload bytes -> wire bytes) and serialisation
// in integer picoseconds with the remainder carried, so long runs at rates that do not
// divide 1 ps (e.g. 200 Gb/s -> 40 ps/byte exactly, 212.5 Gb/s -> not) never drift.
#pragma once
#include <cstdint>
#include <string>

#include "models/core/packet.h"
#include "models/core/types.h"

namespace fabricsim {

struct Framing {
  enum class Kind : uint8_t {
    kFlit,   // NVLink-style: whole flits; header/CRC and byte-enable flits per packet
    kFrame,  // Ethernet-style: header + FCS, minimum frame, preamble + inter-frame gap
    kUALink, // stream: TL fields + data packed into DL flits, each sent as one FEC codeword
  };
  Kind kind = Kind::kFlit;
  uint32_t flit_bytes = 16;     // kFlit: bytes per flit
  uint32_t overhead_flits = 1;  // kFlit: non-data flits per packet (header incl. CRC, ...)
  uint32_t request_flits = 0;   // kFlit: flits of a header-only packet (a read request,
                                // no payload); 0 = overhead_flits
  uint32_t header_bytes = 0;    // kFrame: per-packet header + trailer bytes (incl. FCS)
  uint32_t min_frame_bytes = 0; // kFrame: frames shorter than this are padded
  uint32_t gap_bytes = 0;       // kFrame: preamble + SFD + inter-frame gap
  // kUALink (UALink 1.0; docs/models.md "UALink 1.0"). A packet is a TL field (request
  // or response header) plus its data in half-flits of tl_flit_bytes / 2; the TL stream
  // fills the dl_flit_bytes - dl_overhead_bytes payload of each DL flit back to back, and
  // every DL flit goes on the wire as one fec_codeword_bytes codeword.
  uint32_t tl_flit_bytes = 64;       // TL flit; data travels in its 32 B half-flits
  uint32_t tl_request_bytes = 16;    // request field (write, read request)
  uint32_t tl_response_bytes = 8;    // response field (read response, write response)
  uint32_t dl_flit_bytes = 640;      // DL flit
  uint32_t dl_overhead_bytes = 12;   // DL flit header + segment headers + CRC
  uint32_t fec_codeword_bytes = 680; // RS(544,514) codeword carrying one DL flit

  // Wire bytes of one packet carrying `payload` bytes. kUALink: the packet's share of
  // codeword bytes rounded up (a lone packet; streams carry the remainder, FlitStream).
  uint64_t packet_wire_bytes(uint32_t payload, PacketKind pk = PacketKind::kData) const;
  // Wire bytes of a transaction: every packet framed separately.
  uint64_t transaction_wire_bytes(const Packet& p) const;
  // kUALink: TL stream bytes of one packet: its field + data rounded up to half-flits.
  uint64_t tl_bytes(uint32_t payload, PacketKind pk = PacketKind::kData) const;
  uint64_t transaction_tl_bytes(const Packet& p) const;
  uint32_t dl_payload_bytes() const { return dl_flit_bytes - dl_overhead_bytes; }
  // Payload / wire for back-to-back packets of `payload` bytes: the protocol efficiency.
  // kUALink, exact for a long stream: payload / (tl_bytes x codeword / DL payload).
  double efficiency(uint32_t payload, PacketKind pk = PacketKind::kData) const;
  // kUALink: efficiency against the data rate instead of the signalling rate, i.e. against
  // DL-flit bytes instead of codeword bytes: payload x (dl_flit - dl_overhead) /
  // (tl_bytes x dl_flit). The UALink 1.0 "200 Gb/s per lane" is this data rate: 212.5
  // GT/s x 640 / 680. For 256 B writes: 256 x 628 / (272 x 640) = 92.35%.
  double data_rate_efficiency(uint32_t payload, PacketKind pk = PacketKind::kData) const {
    return double(payload) * dl_payload_bytes() / (double(tl_bytes(payload, pk)) * dl_flit_bytes);
  }
  std::string describe() const;
};

// Serialisation time in integer picoseconds at a fixed bit rate. Remainders are carried
// from one call to the next, so the sum over N transactions equals the exact total to
// within one picosecond, whatever N is.
class Serializer {
 public:
  explicit Serializer(uint64_t rate_bps = 1) : rate_bps_(rate_bps) {}
  uint64_t rate_bps() const { return rate_bps_; }
  // Time to put `wire_bytes` on the wire; advances the carried remainder.
  uint64_t take_ps(uint64_t wire_bytes) {
    u128 num = u128(wire_bytes) * 8u * 1000000000000ull + rem_;
    rem_ = num % rate_bps_;
    return uint64_t(num / rate_bps_);
  }
  // Same time without touching the remainder (rounded up): for latency bookkeeping only.
  uint64_t peek_ps(uint64_t wire_bytes) const {
    return transfer_ps(wire_bytes, rate_bps_);
  }

 private:
  uint64_t rate_bps_;
  u128 rem_ = 0;
};

// Source of bit errors for a FlitStream with link-level replay: the number of good wire
// bits before the next bit error, drawn afresh at each call (a geometric distribution for
// independent bit errors; tests script it).
class BitErrors {
 public:
  virtual ~BitErrors() = default;
  virtual uint64_t next_gap() = 0;
};

// UALink DL stream (one per transmitter): places each packet's TL bytes in the DL-flit
// stream and says when its bytes are on the wire and when the codeword holding its last
// byte has been sent (the receiver checks a DL flit's CRC before it uses any of it).
// Positions are TL byte slots counted from the start of the current run of back-to-back
// codewords, and every time is computed from the run's start, so a run of any length is
// exact to within 1 ps; wire bytes carry their remainder across packets (exact to within
// 1 byte). Assumptions (docs/models.md "UALink 1.0"): the TL stream is packed at byte
// granularity across segment and DL flit boundaries; a codeword starts as soon as there
// is a byte to send on an idle link (the flit-boundary grid of an always-on PHY is not
// modelled); a packet that arrives while a codeword is partly filled goes into its
// remaining slots (slots that passed empty are padding); within a codeword the TL bytes
// are spread evenly over its time (header, CRC and FEC parity are not placed).
//
// Link-level replay (enable_replay; docs/models.md "Link-level retry", "UALink 1.0"): the
// error unit is the codeword. When a packet opens a codeword (places its first byte in
// it), the stream draws that codeword's bit errors over its 8 x fec_codeword_bytes bits;
// a bad copy is NAKed and go-back-N replays from it, so its good copy ends one codeword +
// the NAK wait D later per bad copy, and so does every later codeword of the run. The
// bad codeword's content is what was placed while its first copy was being sent (the
// replay re-sends the same DL flit); packets that come later go after its good copy. So
// a packet whose last byte is in or after a bad codeword is delivered late by
// (codeword + D) per bad copy; one finished in an earlier codeword is not.
class FlitStream {
 public:
  FlitStream() = default;
  FlitStream(const Framing& f, uint64_t rate_bps)
      : cw_bytes_(f.fec_codeword_bytes), dlp_(f.dl_payload_bytes()), rate_bps_(rate_bps) {}

  struct Placement {
    uint64_t start_ps = 0;  // its first TL byte goes on the wire
    uint64_t free_ps = 0;   // its last TL byte is on the wire: the next packet may follow
    uint64_t first_ps = 0;  // the codeword holding byte `first_tl` - 1 has been sent
    uint64_t done_ps = 0;   // the codeword holding its last byte has been sent
    uint64_t wire_bytes = 0;  // share of codeword bytes (remainder carried)
    // Replay only: bad codeword copies among the codewords this placement opened, and the
    // replay time (bad copies x (codeword + D)) of the codeword holding its last byte.
    uint32_t bad_copies = 0;
    uint64_t last_lost_ps = 0;
  };
  // Turn on link-level replay: codeword errors come from `errors` (not owned; it must
  // outlive the stream), a bad copy's NAK is back and the replay starts `nak_wait_ps`
  // after its end. Without it no codeword is ever bad.
  void enable_replay(BitErrors* errors, uint64_t nak_wait_ps) {
    errors_ = errors;
    replay_ps_ = codeword_ps() + nak_wait_ps;
    bits_to_error_ = errors_->next_gap();
  }
  // Time one bad copy costs: its codeword + the NAK wait (0 without replay).
  uint64_t replay_ps() const { return replay_ps_; }
  // Codeword bytes `tl` stream bytes would be charged now (no state change).
  uint64_t peek_wire(uint64_t tl) const {
    return uint64_t((u128(tl) * cw_bytes_ + wire_rem_) / dlp_);
  }
  // Place `tl` bytes at the earliest slot at or after `t`; `first_tl` <= tl is the first
  // packet's part of a multi-packet transaction (for its head time).
  Placement place(uint64_t t, uint64_t tl, uint64_t first_tl);
  // The transmitter stays busy until `t` (a multi-packet transaction waiting for its
  // tail): the open codeword is closed, the next packet starts a new run.
  void close() { open_ = false; }
  // Time of one codeword (rounded up).
  uint64_t codeword_ps() const { return transfer_ps(cw_bytes_, rate_bps_); }

 private:
  // Time from the run's start to slot `pos` / to the end of codeword `n`.
  uint64_t slot_ps(uint64_t pos) const {
    return uint64_t(u128(pos) * cw_bytes_ * 8u * 1000000000000ull / (u128(dlp_) * rate_bps_));
  }
  uint64_t cw_end_ps(uint64_t n) const {
    return uint64_t(u128(n) * cw_bytes_ * 8u * 1000000000000ull / rate_bps_);
  }
  // Draws the errors of codewords drawn_..last (run indices); returns S(f), the replay
  // time through codeword f (drawn_ - 1 <= f <= last), and adds to `pl`.
  uint64_t draw_codewords(uint64_t last, uint64_t f, Placement& pl);

  uint64_t cw_bytes_ = 680, dlp_ = 628, rate_bps_ = 1;
  bool open_ = false;
  uint64_t base_ = 0;  // start of the current run of back-to-back codewords
  uint64_t pos_ = 0;   // next free TL byte slot of the run
  u128 wire_rem_ = 0;
  // Replay (errors_ set). S(n) = replay time of the run's codewords 0..n: codeword n's
  // slots go on the wire at base_ + slot time + S(n - 1), its good copy ends at
  // base_ + cw_end_ps(n + 1) + S(n). All 0 without replay.
  BitErrors* errors_ = nullptr;
  uint64_t replay_ps_ = 0;     // one bad copy: codeword + NAK wait
  uint64_t bits_to_error_ = 0; // good wire bits before the next bit error
  uint64_t drawn_ = 0;         // codewords of the run whose errors are drawn
  uint64_t shift_ = 0;         // S(drawn_ - 1)
  uint64_t shift_open_ = 0;    // S(drawn_ - 2): applies to codeword drawn_ - 1's slots
};

}  // namespace fabricsim
