// Crossbar allocators: plain C++, no SystemC, tested alone. Each call computes one
// matching of inputs to outputs from a request matrix; pointers persist across calls.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fabricsim {

// A fixed-size set of port indices, as 64-bit words. Sets of up to 128 ports keep their
// words inline, so a switch's per-input and per-output request sets (a vector of them)
// are one contiguous array: testing or changing one touches one cache line, not a
// vector header and then its heap buffer.
class PortSet {
 public:
  explicit PortSet(int n = 0) : n_(n), nw_((n + 63) / 64) {
    if (nw_ > kInline) heap_.assign(size_t(nw_), 0);
  }
  int size() const { return n_; }
  void set(int i) { w()[i >> 6] |= 1ull << (i & 63); }
  void reset(int i) { w()[i >> 6] &= ~(1ull << (i & 63)); }
  bool test(int i) const { return (w()[i >> 6] >> (i & 63)) & 1; }
  void clear() { std::fill(w(), w() + nw_, 0); }
  void assign_and(const PortSet& a, const PortSet& b) {
    uint64_t* d = w();
    for (int k = 0; k < nw_; ++k) d[k] = a.w()[k] & b.w()[k];
  }
  bool any() const {
    const uint64_t* d = w();
    for (int k = 0; k < nw_; ++k)
      if (d[k]) return true;
    return false;
  }
  // The one member if there is exactly one; -1 if the set is empty, -2 if it has more.
  int only() const {
    const uint64_t* d = w();
    int found = -1;
    for (int k = 0; k < nw_; ++k) {
      const uint64_t x = d[k];
      if (!x) continue;
      if (found != -1 || (x & (x - 1))) return -2;
      found = k * 64 + __builtin_ctzll(x);
    }
    return found;
  }
  // Calls f(i) for every member, in ascending order.
  template <typename F>
  void for_each(F f) const {
    const uint64_t* d = w();
    for (int k = 0; k < nw_; ++k)
      for (uint64_t x = d[k]; x; x &= x - 1) f(int(k * 64 + __builtin_ctzll(x)));
  }
  // First member at or after `from`, wrapping around; -1 if empty.
  int next_cyclic(int from) const;
  // First member of (*this & mask) at or after `from`, wrapping; -1 if none.
  int next_cyclic_masked(const PortSet& mask, int from) const;

 private:
  static constexpr int kInline = 2;  // words kept in the object (128 ports)
  uint64_t* w() { return nw_ > kInline ? heap_.data() : small_; }
  const uint64_t* w() const { return nw_ > kInline ? heap_.data() : small_; }
  int n_;
  int nw_;
  uint64_t small_[kInline] = {0, 0};
  std::vector<uint64_t> heap_;  // sets of more than 128 ports
};

class Arbiter {
 public:
  virtual ~Arbiter() = default;
  // rows[i]: outputs input i has traffic for; cols[o]: inputs with traffic for output o
  // (the same matrix by columns; the switch keeps both up to date incrementally). Only
  // inputs in `free_in` and outputs in `free_out` may be matched. On return match[i] is
  // the output granted to input i, or -1.
  virtual void match(const std::vector<PortSet>& rows, const std::vector<PortSet>& cols,
                     const PortSet& free_in, const PortSet& free_out,
                     std::vector<int>& match) = 0;
};

// Known names: "islip" (McKeown 1999: request-grant-accept, round-robin pointers that
// move only on first-iteration accepts) and "round_robin" (each output in turn grants the
// next requesting unmatched input after its pointer; one pass, no accept phase).
std::unique_ptr<Arbiter> make_arbiter(const std::string& name, int inputs, int outputs,
                                      int iterations);
const std::vector<std::string>& arbiter_names();

}  // namespace fabricsim
