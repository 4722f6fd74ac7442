// An open-addressing hash map for the packet path's short-lived keys (the collective
// engine's message matching): one array of slots, linear probing, deletion by backward
// shift (no tombstones), so an insert or an erase allocates nothing once the table has
// grown to the peak number of live keys, and a lookup touches one or two cache lines.
// std::unordered_map allocates a node per insert and follows a pointer per lookup; on a
// 72-GPU all-reduce that was ~5% of the run (docs/performance.md).
//
// The subset of std::unordered_map's interface the engine uses: find / end / erase(it) /
// operator[] / count / clear / size. Iterators are slot pointers (->first, ->second),
// valid until the next insert. for_each visits the keys in slot order, which depends on
// the inserts' history: only for what does not depend on the order (a sum, a count).
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace fabricsim {

// The hash of an integer key that is already well spread or sequential (message ids):
// the key itself, since FlatMap mixes the bits (Fibonacci hashing, home()).
struct IdentityHash {
  size_t operator()(uint64_t k) const { return size_t(k); }
};

template <typename K, typename V, typename Hash>
class FlatMap {
 public:
  struct Slot {
    K first{};
    V second{};
    bool used = false;
  };
  using iterator = Slot*;

  iterator end() const { return nullptr; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t count(const K& k) const { return const_cast<FlatMap*>(this)->find(k) ? 1 : 0; }

  iterator find(const K& k) {
    if (size_ == 0) return nullptr;
    for (size_t i = home(k);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (!s.used) return nullptr;
      if (s.first == k) return &s;
    }
  }

  // The value of `k`, inserted as V{} if absent.
  V& operator[](const K& k) {
    if (Slot* s = find(k)) return s->second;
    if ((size_ + 1) * 2 > slots_.size()) grow();
    size_t i = home(k);
    while (slots_[i].used) i = (i + 1) & mask_;
    Slot& s = slots_[i];
    s.first = k;
    s.second = V{};
    s.used = true;
    ++size_;
    return s.second;
  }

  // Removes the slot `it` (from find): later members of its probe run move back so that
  // every key stays reachable from its home slot without a gap.
  void erase(iterator it) {
    size_t hole = size_t(it - slots_.data());
    for (size_t j = (hole + 1) & mask_; slots_[j].used; j = (j + 1) & mask_) {
      const size_t h = home(slots_[j].first);
      // Slot j may fill the hole unless its home lies cyclically in (hole, j].
      const bool stays = hole < j ? (h > hole && h <= j) : (h > hole || h <= j);
      if (stays) continue;
      slots_[hole] = std::move(slots_[j]);
      hole = j;
    }
    slots_[hole].used = false;
    slots_[hole].second = V{};
    --size_;
  }

  // Calls f(key, value) for every key, in slot order (see the note at the top).
  template <typename F>
  void for_each(F f) const {
    for (const Slot& s : slots_)
      if (s.used) f(s.first, s.second);
  }

  // Empties the map and keeps its capacity (a collective after another reuses it).
  void clear() {
    if (size_ == 0) return;
    for (Slot& s : slots_) s = Slot{};
    size_ = 0;
  }

 private:
  size_t home(const K& k) const {
    // Fibonacci hashing of the key's hash: the top bits, whatever the hash's low bits do.
    return size_t((uint64_t(Hash{}(k)) * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    const size_t cap = old.empty() ? 16 : old.size() * 2;
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
    shift_ = 64 - unsigned(__builtin_ctzll(cap));
    size_ = 0;
    for (Slot& s : old) {
      if (!s.used) continue;
      size_t i = home(s.first);
      while (slots_[i].used) i = (i + 1) & mask_;
      slots_[i] = std::move(s);
      ++size_;
    }
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
  size_t mask_ = 0;
  unsigned shift_ = 64;
};

}  // namespace fabricsim
