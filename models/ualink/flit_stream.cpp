#include "models/ualink/flit_stream.h"

#include <algorithm>

namespace fabricsim {

FlitStream::Placement FlitStream::place(uint64_t t, uint64_t tl, uint64_t first_tl) {
  // Earliest slot at or after t in the open run: back to back after the previous packet,
  // or later in the codeword being sent (the slots in between go out as padding). Past the
  // end of that codeword the run is over and a new codeword starts at t, unless the
  // codeword is being replayed: then its content is fixed and the packet goes after its
  // good copy, back to back (what go-back-N does with a packet sent in the NAK window).
  uint64_t q = 0;
  if (open_ && t >= base_ + shift_open_) {
    const u128 num = u128(t - base_ - shift_open_) * dlp_ * rate_bps_;
    const u128 den = u128(cw_bytes_) * 8u * 1000000000000ull;
    const uint64_t s = uint64_t((num + den - 1) / den);  // first slot not yet passed at t
    const uint64_t cw_end = (pos_ + dlp_ - 1) / dlp_ * dlp_;  // end of the open codeword
    if (s <= pos_)
      q = pos_;
    else if (s < cw_end)
      q = s;
    else if (shift_ > shift_open_ && t < base_ + cw_end_ps(cw_end / dlp_) + shift_)
      q = cw_end;
    else
      open_ = false;
  } else {
    open_ = false;
  }
  if (!open_) {
    base_ = t;
    q = 0;
    open_ = true;
    drawn_ = 0;
    shift_ = shift_open_ = 0;
  }
  Placement pl;
  const uint64_t last = (q + tl - 1) / dlp_;        // codeword of its last byte
  const uint64_t first = (q + first_tl - 1) / dlp_; // codeword of its first packet's last byte
  pl.start_ps = base_ + slot_ps(q);
  pl.free_ps = base_ + slot_ps(q + tl);
  pl.first_ps = base_ + cw_end_ps(first + 1);
  pl.done_ps = base_ + cw_end_ps(last + 1);
  if (errors_) {
    // A slot of codeword n is on the wire at base_ + slot time + S(n - 1): the packet's
    // first slot is in the open codeword (drawn_ - 1) or opens the next one; its last
    // slot's successor is in codeword `last` or starts the next one. drawn_ becomes last + 1.
    pl.start_ps += q / dlp_ < drawn_ ? shift_open_ : shift_;
    pl.first_ps += draw_codewords(last, first, pl);
    pl.free_ps += (q + tl) / dlp_ <= last ? shift_open_ : shift_;
    pl.done_ps += shift_;
    pl.last_lost_ps = shift_ - shift_open_;
  }
  const u128 w = u128(tl) * cw_bytes_ + wire_rem_;
  pl.wire_bytes = uint64_t(w / dlp_);
  wire_rem_ = w % dlp_;
  pos_ = q + tl;
  return pl;
}

uint64_t FlitStream::draw_codewords(uint64_t last, uint64_t f, Placement& pl) {
  // Each codeword copy the receiver checks is 8 x fec_codeword_bytes bits of the bit
  // process: a run of good codewords is skipped in O(1); a codeword with an error in it
  // is NAKed and replayed, and its replayed copy draws afresh (the geometric distribution
  // is memoryless, so this is the same independent-bit process).
  const uint64_t cw_bits = 8 * cw_bytes_;
  uint64_t s_first = shift_;  // f == drawn_ - 1: the open codeword, already drawn
  const uint64_t opened = last + 1 - drawn_;  // 0 when the packet stays in the open codeword
  if (bits_to_error_ >= opened * cw_bits) {  // the common case: no error in them
    bits_to_error_ -= opened * cw_bits;
    if (opened) {
      drawn_ = last + 1;
      shift_open_ = shift_;
    }
    return s_first;
  }
  while (drawn_ <= last) {
    const uint64_t good = std::min(bits_to_error_ / cw_bits, last + 1 - drawn_);
    if (good > 0) {
      bits_to_error_ -= good * cw_bits;
      if (f >= drawn_ && f < drawn_ + good) s_first = shift_;
      drawn_ += good;
      shift_open_ = shift_;
      continue;
    }
    uint32_t bad = 0;
    while (bits_to_error_ < cw_bits) {
      ++bad;
      bits_to_error_ = errors_->next_gap();
    }
    bits_to_error_ -= cw_bits;
    shift_open_ = shift_;
    shift_ += uint64_t(bad) * replay_ps_;
    pl.bad_copies += bad;
    if (f == drawn_) s_first = shift_;
    ++drawn_;
  }
  return s_first;
}

}  // namespace fabricsim
