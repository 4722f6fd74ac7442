// The UALink DL stream: where each packet's TL bytes land in the stream of DL flits (FEC
// codewords), when they are on the wire, and codeword replay (docs/models.md "UALink 1.0").
// Plain C++.
#pragma once
#include <cstdint>

#include "models/core/types.h"
#include "models/link/bit_errors.h"
#include "models/ualink/ualink_framing.h"

namespace fabricsim {

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
  FlitStream(const UALinkFraming& f, uint64_t rate_bps)
      : cw_bytes_(f.params().fec_codeword_bytes),
        dlp_(f.dl_payload_bytes()),
        rate_bps_(rate_bps) {}

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
  // No more errors (the end of a bit-error burst). The open codeword's replay shifts were
  // drawn with errors on: the next packet opens a new codeword (as after close()).
  void disable_replay() {
    errors_ = nullptr;
    close();
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
  // An idle link between independent measurements: the next packet starts a new run and
  // the wire bytes' carried remainder starts from zero.
  void restart() {
    open_ = false;
    wire_rem_ = 0;
  }
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
