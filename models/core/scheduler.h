// One calendar for the fabric models' timed wake-ups, driven by a single sc_event.
//
// Every resource (a port's transmitter, a port's arrival queue, a crossbar, a timer
// queue) owns one Alarm: at most one pending wake-up, the earliest asked for, exactly as
// an sc_event with one pending notification. Wake-ups run in (time, set() order), so the
// order is deterministic; an entry superseded by an earlier set() is skipped when due.
// The calendar is a timing wheel of 4096 slots of 256 ps (a 1.05 us horizon, where
// nearly all fabric wake-ups fall) with a 4-ary heap for later ones: O(1) per wake-up
// instead of a heap's O(log n) with unpredictable branches. A slot is scanned once per
// distinct time in it: slots of 256 ps hold fewer times than slots of 1024 ps did
// (docs/performance.md, 2026-12-03).
// Measured here: SystemC's own timed-event queue (sc_ppq with an indirect comparison)
// was about 35% of run time when each resource had its own sc_event; this calendar does
// the same job inside one SC_METHOD activation per distinct time.
#pragma once
#include <cstdint>
#include <vector>

#include <systemc>

#include "models/core/types.h"

namespace fabricsim {

class Wakeable {
 public:
  virtual ~Wakeable() = default;
  virtual void wake(uint32_t what) = 0;
};

struct Alarm {
  Wakeable* target = nullptr;
  uint32_t what = 0;
  uint64_t when = UINT64_MAX;  // pending wake-up time, UINT64_MAX if none
  bool pending() const { return when != UINT64_MAX; }
};

class Scheduler : public sc_core::sc_module {
 public:
  // The calendar of this simulation (one kernel per process). Created on first use;
  // create it before other modules (System does) so it sits at the top of the hierarchy.
  // Inline: every set() on the packet path asks for it (an out-of-line call was ~2% of
  // NVL576's instructions per hop).
  static Scheduler& instance() {
    if (__builtin_expect(instance_ == nullptr, 0)) return create();
    return *instance_;
  }

  // Wake `a` at absolute time t_ps (>= now) unless it is already due no later.
  // `hint`: memory the wake-up will read first (an arriving packet), prefetched with the
  // alarm a few wake-ups ahead of it (it changes nothing but the time memory takes).
  void set(Alarm& a, uint64_t t_ps, const void* hint = nullptr) {
    if (t_ps >= a.when) return;
    a.when = t_ps;
    push(Entry{(u128(t_ps) << 64) | seq_++, &a, hint});
    if (!running_ && t_ps < armed_for_) arm(t_ps);  // run() re-arms when it finishes
  }
  // Withdraws `a`'s pending wake-up, if any, and every entry of it the calendar still
  // holds (superseded ones included), so that nothing of it fires later and a later set()
  // is ordered as on a fresh alarm. O(entries): for the reset between independent
  // measurements (DeviceModel::reset_dynamic_state), not for the packet path.
  void cancel(Alarm& a);
  // Current simulated time in ps. Model code runs inside the calendar's activation (or
  // at time 0 from an SC_METHOD started by the kernel), where this equals
  // sc_time_stamp() without the library call.
  static uint64_t now() { return now_ps_; }

 private:
  explicit Scheduler(sc_core::sc_module_name n);
  struct Entry {
    u128 key;  // time << 64 | insertion sequence: one comparison orders by both
    Alarm* alarm;
    const void* hint;  // prefetched ahead of the wake-up (fills the 16-byte-aligned entry)
    uint64_t t() const { return uint64_t(key >> 64); }
    bool before(const Entry& o) const { return key < o.key; }
  };
  static constexpr unsigned kSlotShift = 8;   // 256 ps per slot
  static constexpr uint64_t kSlots = 4096;    // power of two
  void push(const Entry& e);
  void heap_push(const Entry& e);
  Entry heap_pop();
  uint64_t next_time() const;
  void arm(uint64_t t_ps);
  void run();

  std::vector<std::vector<Entry>> wheel_;  // slot s holds entries of absolute slot s (mod kSlots)
  std::vector<uint64_t> occupied_;         // bit per wheel slot
  uint64_t cursor_ = 0;                    // absolute slot of the last run; no entry is earlier
  std::vector<Entry> heap_;                // entries beyond the wheel's horizon
  std::vector<Entry> ready_;               // due now, in set() order
  bool running_ = false;
  uint64_t running_at_ = 0;
  // While running: the earliest time pushed (run() then knows the next time without a
  // scan when the current slot keeps entries), and whether cancel() removed any.
  uint64_t pushed_min_ = UINT64_MAX;
  bool cancelled_ = false;
  uint64_t seq_ = 0;
  uint64_t armed_for_ = UINT64_MAX;
  static uint64_t now_ps_;
  static inline Scheduler* instance_ = nullptr;  // lives as long as the kernel
  [[gnu::noinline]] static Scheduler& create();
  sc_core::sc_event ev_;
};

}  // namespace fabricsim
