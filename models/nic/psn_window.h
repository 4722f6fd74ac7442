// The receiver's view of one connection's packet sequence numbers: every PSN below `cum`
// has arrived; a bitmap records those above it that arrived out of order (unordered
// delivery with spraying). Gives the cumulative ack and 64-bit SACK words. Plain C++.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

namespace fabricsim {

class PsnWindow {
 public:
  // Records `psn`; false if it had already arrived (a duplicate).
  bool receive(uint32_t psn) {
    if (psn < cum_) return false;
    const uint32_t off = psn - cum_;
    grow(off);
    uint64_t& w = word(off);
    const uint64_t bit = 1ull << ((first_bit_ + off) & 63);
    if (w & bit) return false;
    w |= bit;
    ++held_;
    // Advance over the in-order prefix.
    while (held_ > 0 && (word(0) >> (first_bit_ & 63) & 1)) {
      word(0) &= ~(1ull << (first_bit_ & 63));
      --held_;
      ++cum_;
      if ((++first_bit_ & 63) == 0) {
        first_word_ = (first_word_ + 1) % words_.size();
      }
    }
    return true;
  }
  uint32_t cum() const { return cum_; }
  bool has(uint32_t psn) const {
    if (psn < cum_) return true;
    const uint32_t off = psn - cum_;
    if (off >= capacity()) return false;
    return word_const(off) >> ((first_bit_ + off) & 63) & 1;
  }
  // Bit i = psn base + i arrived, for 64 PSNs from `base` (>= cum() - 63): PSNs below cum()
  // are ones, the rest read from the bitmap's words (two at most).
  uint64_t bits(uint32_t base) const {
    uint64_t below = 0;  // PSNs base .. cum - 1
    uint32_t n = 0;
    if (base < cum_) {
      n = std::min<uint32_t>(64, cum_ - base);
      below = n == 64 ? ~0ull : (1ull << n) - 1;
      if (n == 64) return below;
    }
    const uint32_t off = base + n - cum_;  // first PSN past cum to read, relative to cum
    uint64_t above = 0;
    if (!words_.empty() && off < capacity()) {
      const uint64_t l = (first_bit_ & 63) + off;  // logical bit from the first word
      const size_t w = size_t(l / 64), sh = size_t(l % 64), nw = words_.size();
      above = words_[(first_word_ + w) % nw] >> sh;
      if (sh && w + 1 < nw) above |= words_[(first_word_ + w + 1) % nw] << (64 - sh);
    }
    return below | (above << n);
  }
  // Out-of-order PSNs held above cum().
  uint32_t held() const { return held_; }
  // Empty again, from PSN 0 (the ring keeps its size: what it answers does not depend on
  // it). Independent rows.
  void reset() {
    std::fill(words_.begin(), words_.end(), 0ull);
    first_word_ = 0;
    first_bit_ = 0;
    cum_ = 0;
    held_ = 0;
  }

 private:
  uint32_t capacity() const { return uint32_t(words_.size() * 64) - (first_bit_ & 63); }
  void grow(uint32_t off) {
    if (!words_.empty() && off < capacity()) return;
    // Re-lay the ring with the first word at 0, doubled.
    std::vector<uint64_t> n(std::max<size_t>(4, words_.size() * 2 + (off / 64 + 2)), 0);
    for (size_t i = 0; i < words_.size(); ++i) n[i] = words_[(first_word_ + i) % words_.size()];
    words_.swap(n);
    first_word_ = 0;
  }
  // The word holding bit `off` past cum (bit (first_bit_ + off) & 63 in it).
  uint64_t& word(uint32_t off) {
    return words_[(first_word_ + ((first_bit_ & 63) + off) / 64) % words_.size()];
  }
  uint64_t word_const(uint32_t off) const {
    return words_[(first_word_ + ((first_bit_ & 63) + off) / 64) % words_.size()];
  }

  std::vector<uint64_t> words_;
  size_t first_word_ = 0;   // ring index of the word holding cum's bit
  uint64_t first_bit_ = 0;  // cum's bit position, mod 64 (counts up with cum)
  uint32_t cum_ = 0;
  uint32_t held_ = 0;
};

}  // namespace fabricsim
