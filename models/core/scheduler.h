// One calendar for the fabric models' timed wake-ups, driven by a single sc_event.
//
// Every resource (a port's transmitter, a port's arrival queue, a crossbar, a timer
// queue) owns one Alarm: at most one pending wake-up, the earliest asked for, exactly as
// an sc_event with one pending notification. The calendar is a 4-ary heap of plain
// entries ordered by (time, insertion sequence), so wake-ups at equal times run in a
// deterministic order; an entry superseded by an earlier set() is skipped when popped.
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
  static Scheduler& instance();

  // Wake `a` at absolute time t_ps (>= now) unless it is already due no later.
  void set(Alarm& a, uint64_t t_ps) {
    if (t_ps >= a.when) return;
    a.when = t_ps;
    push(Entry{(u128(t_ps) << 64) | seq_++, &a});
    if (t_ps < armed_for_) arm(t_ps);
  }
  // Current simulated time in ps. Model code runs inside the calendar's activation (or
  // at time 0 from an SC_METHOD started by the kernel), where this equals
  // sc_time_stamp() without the library call.
  static uint64_t now() { return now_ps_; }

 private:
  explicit Scheduler(sc_core::sc_module_name n);
  struct Entry {
    u128 key;  // time << 64 | insertion sequence: one comparison orders by both
    Alarm* alarm;
    uint64_t t() const { return uint64_t(key >> 64); }
    bool before(const Entry& o) const { return key < o.key; }
  };
  void push(const Entry& e);
  Entry pop();
  void arm(uint64_t t_ps);
  void run();

  std::vector<Entry> heap_;
  uint64_t seq_ = 0;
  uint64_t armed_for_ = UINT64_MAX;
  static uint64_t now_ps_;
  sc_core::sc_event ev_;
};

}  // namespace fabricsim
