#include "models/core/scheduler.h"

#include <algorithm>
#include <new>

#include "models/core/errors.h"
#include "models/core/run_control.h"

namespace fabricsim {

uint64_t Scheduler::now_ps_ = 0;

Scheduler& Scheduler::create() {
  if (!instance_) instance_ = new Scheduler("fabric_scheduler");
  return *instance_;
}

Scheduler::Scheduler(sc_core::sc_module_name n)
    : sc_module(n), wheel_(kSlots), occupied_(kSlots / 64, 0) {
  SC_HAS_PROCESS(Scheduler);
  SC_METHOD(run);
  sensitive << ev_;
  dont_initialize();
}

Scheduler::~Scheduler() {
  for (Chunk* b : blocks_) ::operator delete[](b, std::align_val_t(kChunkBytes));
}

Scheduler::Chunk* Scheduler::take_chunk() {
  if (__builtin_expect(free_ == nullptr, 0)) {
    static_assert(sizeof(Chunk) == kChunkBytes, "a chunk is exactly kChunkBytes");
    Chunk* b = static_cast<Chunk*>(
        ::operator new[](kBlockChunks * sizeof(Chunk), std::align_val_t(kChunkBytes)));
    blocks_.push_back(b);
    for (size_t k = kBlockChunks; k-- > 0;) {
      b[k].next = free_;
      free_ = &b[k];
    }
  }
  Chunk* c = free_;
  free_ = c->next;
  c->next = nullptr;
  return c;
}

void Scheduler::wheel_append(uint64_t i, uint64_t t, uint64_t seq, Alarm* a,
                             const void* hint) {
  Slot& s = wheel_[i];
  if (at_chunk_end(s.end)) {  // empty (null), or the last chunk is full
    Chunk* c = take_chunk();
    if (s.end == nullptr)
      s.head = c;
    else
      chunk_of(s.end - 1)->next = c;
    s.end = c->e;
  }
  Entry* d = s.end++;
  d->key = (u128(t) << 64) | seq;
  d->alarm = a;
  d->hint = hint;
}

template <class Keep>
bool Scheduler::filter_slot(uint64_t i, Keep keep) {
  Slot& s = wheel_[i];
  if (s.head == nullptr) return true;
  Chunk* wc = s.head;  // where the next kept entry goes
  Entry* w = wc->e;
  Chunk* last = chunk_of(s.end - 1);
  for (Chunk* c = s.head;; c = c->next) {
    Entry* const stop = c == last ? s.end : c->e + kChunkEntries;
    for (Entry* r = c->e; r != stop; ++r) {
      if (!keep(*r)) continue;
      if (w == wc->e + kChunkEntries) {  // kept entries never outrun the reads
        wc = wc->next;
        w = wc->e;
      }
      *w++ = *r;
    }
    if (c == last) break;
  }
  // Return the chunks after the last kept entry (all of them if none was kept).
  const bool empty = w == s.head->e;
  Chunk* spare = empty ? s.head : wc->next;
  if (!empty) wc->next = nullptr;
  while (spare != nullptr) {
    Chunk* n = spare->next;
    spare->next = free_;
    free_ = spare;
    spare = n;
  }
  if (empty) {
    s.head = nullptr;
    s.end = nullptr;
  } else {
    s.end = w;
  }
  return empty;
}

void Scheduler::push(uint64_t t, uint64_t seq, Alarm* a, const void* hint) {
  if (running_) {
    if (t == running_at_) {
      // A later set() than everything already due: runs after them.
      ready_.push_back(Entry{(u128(t) << 64) | seq, a, hint});
      return;
    }
    if (t < pushed_min_) pushed_min_ = t;
  }
  const uint64_t slot = t >> kSlotShift;
  if (slot < cursor_ + kSlots) {
    const uint64_t i = slot & (kSlots - 1);
    wheel_append(i, t, seq, a, hint);
    occupied_[i >> 6] |= 1ull << (i & 63);
  } else {
    heap_push(Entry{(u128(t) << 64) | seq, a, hint});
  }
}

void Scheduler::heap_push(const Entry& e) {
  size_t i = heap_.size();
  heap_.push_back(e);
  while (i > 0) {
    const size_t parent = (i - 1) / 4;
    if (!e.before(heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

Scheduler::Entry Scheduler::heap_pop() {
  const Entry top = heap_[0];
  const Entry last = heap_.back();
  heap_.pop_back();
  const size_t n = heap_.size();
  if (n == 0) return top;
  size_t i = 0;
  for (;;) {
    const size_t first = 4 * i + 1;
    if (first >= n) break;
    size_t best = first;
    const size_t end = first + 4 < n ? first + 4 : n;
    for (size_t c = first + 1; c < end; ++c)
      if (heap_[c].before(heap_[best])) best = c;
    if (!heap_[best].before(last)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = last;
  return top;
}

void Scheduler::cancel(Alarm& a) {
  a.when = UINT64_MAX;
  cancelled_ = true;
  auto other = [&a](const Entry& e) { return e.alarm != &a; };
  for (uint64_t w = 0; w < kSlots / 64; ++w)
    for (uint64_t bits = occupied_[w]; bits; bits &= bits - 1) {  // occupied slots only
      const uint64_t i = (w << 6) | uint64_t(__builtin_ctzll(bits));
      if (filter_slot(i, other)) occupied_[w] &= ~(1ull << (i & 63));
    }
  // While running, entries due now are in ready_: a.when no longer matches them.
  const size_t n = heap_.size();
  heap_.erase(std::stable_partition(heap_.begin(), heap_.end(), other), heap_.end());
  if (heap_.size() != n) {  // rebuild the 4-ary heap from what is left
    std::vector<Entry> rest;
    rest.swap(heap_);
    for (const Entry& e : rest) heap_push(e);
  }
  // The kernel event may stay armed for a time nothing is due at: run() then finds an
  // empty instant and re-arms for the next entry.
}

// Earliest pending time: the first occupied slot from the cursor on, or the heap's top.
uint64_t Scheduler::next_time() const {
  uint64_t best = heap_.empty() ? UINT64_MAX : heap_[0].t();
  const uint64_t start = cursor_ & (kSlots - 1);
  for (uint64_t k = 0; k <= kSlots / 64; ++k) {
    const uint64_t w = ((start >> 6) + k) & (kSlots / 64 - 1);
    uint64_t bits = occupied_[w];
    if (k == 0) bits &= ~0ull << (start & 63);
    if (k == kSlots / 64) bits &= ~(~0ull << (start & 63));  // wrapped back to the start word
    if (!bits) continue;
    const uint64_t i = (w << 6) | uint64_t(__builtin_ctzll(bits));
    const Slot& s = wheel_[i];
    const Chunk* last = chunk_of(s.end - 1);
    for (const Chunk* c = s.head;; c = c->next) {
      const Entry* const stop = c == last ? s.end : c->e + kChunkEntries;
      for (const Entry* e = c->e; e != stop; ++e) best = std::min(best, e->t());
      if (c == last) break;
    }
    return best;
  }
  return best;
}

void Scheduler::arm(uint64_t t_ps) {
  const uint64_t now_ps = sc_core::sc_time_stamp().value();
  FABRICSIM_ASSERT(t_ps >= now_ps, "scheduler: wake-up in the past");
  armed_for_ = t_ps;
  ev_.notify(sc_core::sc_time::from_value(t_ps - now_ps));
}

void Scheduler::run() {
  // A stop request (run_control.h) ends the simulation here, between two instants: the
  // model's state stays consistent, and nothing more is simulated.
  if (stop_requested()) {
    // The kernel would announce "Simulation stopped by user" on stdout: the caller reports.
    sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO,
                                            sc_core::SC_DO_NOTHING);
    sc_core::sc_stop();
    return;
  }
  armed_for_ = UINT64_MAX;
  // The kernel's clock does not move while this activation runs.
  const uint64_t kernel_ps = sc_core::sc_time_stamp().value();
  uint64_t now_ps = kernel_ps;
  for (;;) {
    const uint64_t next = run_instant(now_ps);
    if (next == UINT64_MAX) return;  // nothing left: the kernel starves
    // Run the next instant here too if the kernel would do nothing before it but
    // activate this method: it is before the end of start()'s duration, and no other
    // process, delta or timed notification is pending earlier (tests, the kick-off
    // methods at time 0, a stop request). Otherwise leave it to the kernel.
    if (next < horizon_ps_ && !stop_requested() &&
        next - kernel_ps < sc_core::sc_time_to_pending_activity().value()) {
      now_ps = next;
      continue;
    }
    arm(next);
    return;
  }
}

void Scheduler::start(uint64_t duration_ps) {
  Scheduler& s = instance();
  // From the true time: after instants run back to back the kernel's clock may be behind
  // it (with SC_EXIT_ON_STARVATION the kernel leaves its clock at its last activation
  // when nothing is due by the end of the duration).
  const uint64_t k = sc_core::sc_time_stamp().value();
  const uint64_t t = time();
  const uint64_t end = duration_ps > UINT64_MAX - t ? UINT64_MAX : t + duration_ps;
  s.horizon_ps_ = end;
  sc_core::sc_start(sc_core::sc_time::from_value(end - k), sc_core::SC_EXIT_ON_STARVATION);
  s.horizon_ps_ = 0;
}

uint64_t Scheduler::run_instant(uint64_t now_ps) {
  now_ps_ = now_ps;
  // Advance the wheel and bring heap entries that now fall inside its horizon.
  cursor_ = now_ps >> kSlotShift;
  while (!heap_.empty() && (heap_[0].t() >> kSlotShift) < cursor_ + kSlots) push(heap_pop());
  // Take what is due now out of the current slot, in set() order.
  const uint64_t i = cursor_ & (kSlots - 1);
  uint64_t kept_min = UINT64_MAX;  // the earliest entry left in this slot
  if (filter_slot(i, [&](const Entry& e) {
        const uint64_t t = e.t();
        if (t == now_ps) {
          ready_.push_back(e);
          return false;
        }
        if (t < kept_min) kept_min = t;
        return true;
      }))
    occupied_[i >> 6] &= ~(1ull << (i & 63));
  if (!std::is_sorted(ready_.begin(), ready_.end(),
                      [](const Entry& a, const Entry& b) { return a.before(b); }))
    std::sort(ready_.begin(), ready_.end(),
              [](const Entry& a, const Entry& b) { return a.before(b); });
  running_ = true;
  running_at_ = now_ps;
  pushed_min_ = UINT64_MAX;
  cancelled_ = false;
  // Memory-level parallelism: on a large fabric one instant wakes hundreds of resources
  // whose state (a port, its arriving packet) left the caches long ago, and each wake-up
  // would wait for its misses in turn. Fetch the alarm (inside its resource) kFar
  // wake-ups ahead, then the resource's object and the hinted memory kNear ahead, so the
  // misses overlap. Order and results are untouched.
  // With the alarm, the line after it: a port's transmitter keeps the rest of its step
  // there, its receiver what hands an arrival over (models/link/port.h, "Layout").
  constexpr size_t kFar = 8, kNear = 4;
  auto fetch_alarm = [](const Alarm* a) {
    __builtin_prefetch(a);
    __builtin_prefetch(reinterpret_cast<const char*>(a) + 64);
  };
  for (size_t k = 0; k < ready_.size() && k < kFar; ++k) fetch_alarm(ready_[k].alarm);
  auto fetch_near = [](const Entry& f) {
    const Alarm* a = f.alarm;
    if (!(a->what & Alarm::kDirect)) __builtin_prefetch(a->target);
    if (f.hint) __builtin_prefetch(f.hint);
    if (a->also) {
      const char* also = reinterpret_cast<const char*>(a) + a->also;
      __builtin_prefetch(also, 1);
      __builtin_prefetch(also + 64, 1);
    }
  };
  for (size_t k = 0; k < ready_.size() && k < kNear; ++k) fetch_near(ready_[k]);
  for (size_t k = 0; k < ready_.size(); ++k) {  // ready_ grows while we run
    if (k + kFar < ready_.size()) fetch_alarm(ready_[k + kFar].alarm);
    if (k + kNear < ready_.size()) fetch_near(ready_[k + kNear]);
    const Entry e = ready_[k];
    Alarm& a = *e.alarm;
    if (a.when != e.t()) continue;  // superseded by an earlier set(), already served
    a.when = UINT64_MAX;
    if (a.what & Alarm::kDirect)
      a.call(a);
    else
      a.target->wake(a.what);
  }
  ready_.clear();
  running_ = false;
  // Entries left in this slot are earlier than any in a later slot or the heap: the next
  // time is the earliest of them and of what the wake-ups pushed, found without a scan
  // (next_time scans the first occupied slot). Not when cancel() may have removed one.
  return kept_min != UINT64_MAX && !cancelled_ ? std::min(kept_min, pushed_min_) : next_time();
}

}  // namespace fabricsim
