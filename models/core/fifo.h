// A growable ring buffer: FIFO without per-element heap allocation once warm.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace fabricsim {

template <typename T>
class Fifo {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  T& front() { return buf_[head_]; }
  const T& front() const { return buf_[head_]; }
  T& at(size_t i) { return buf_[(head_ + i) & (buf_.size() - 1)]; }
  const T& at(size_t i) const { return buf_[(head_ + i) & (buf_.size() - 1)]; }
  void push(const T& v) {
    if (size_ == buf_.size()) grow();
    buf_[(head_ + size_) & (buf_.size() - 1)] = v;
    ++size_;
  }
  T pop() {
    T v = buf_[head_];
    head_ = (head_ + 1) & (buf_.size() - 1);
    --size_;
    return v;
  }
  void clear() { head_ = size_ = 0; }  // keeps the capacity
  // Where the next pop reads: the front, or, while empty, where the next push writes
  // (until the buffer grows); nullptr before the first push. For prefetching only.
  const T* head_slot() const { return buf_.empty() ? nullptr : &buf_[head_]; }
  T& back() { return buf_[(head_ + size_ - 1) & (buf_.size() - 1)]; }
  T pop_back() {
    --size_;
    return buf_[(head_ + size_) & (buf_.size() - 1)];
  }

 private:
  void grow() {
    if (buf_.size() >= (size_t(1) << 31)) throw std::length_error("Fifo: more than 2^31 entries");
    std::vector<T> n(buf_.empty() ? 16 : buf_.size() * 2);
    for (size_t i = 0; i < size_; ++i) n[i] = buf_[(head_ + i) & (buf_.size() - 1)];
    buf_.swap(n);
    head_ = 0;
  }
  std::vector<T> buf_;
  // 32-bit: a Fifo is 32 bytes, so a port's hot line holds one with room to spare
  // (models/link/port.h, "Layout"); grow() checks the bound.
  uint32_t head_ = 0;
  uint32_t size_ = 0;
};

}  // namespace fabricsim
