// A queue of future callbacks whose times never decrease (a serialised resource: a
// reduction engine, a compute unit). One pending wake-up (Alarm) for the whole queue.
#pragma once
#include <cstdint>
#include <functional>

#include <systemc>

#include "models/core/errors.h"
#include "models/core/fifo.h"
#include "models/core/scheduler.h"
#include "models/core/types.h"

namespace fabricsim {

class TimerQueue : public sc_core::sc_module, public Wakeable {
 public:
  using Fn = std::function<void(uint64_t payload)>;
  TimerQueue(sc_core::sc_module_name n, Fn fn) : sc_module(n), fn_(std::move(fn)) {
    alarm_ = Alarm{this, 0};
  }
  // Call fn(payload) at absolute time at_ps (>= now and >= every earlier entry).
  void at(uint64_t at_ps, uint64_t payload) {
    const uint64_t now = Scheduler::time();
    FABRICSIM_ASSERT(at_ps >= now, std::string(name()) + ": timer in the past");
    FABRICSIM_ASSERT(q_.empty() || q_.at(q_.size() - 1).at_ps <= at_ps,
                     std::string(name()) + ": timers out of order");
    if (q_.empty()) Scheduler::instance().set(alarm_, at_ps);
    q_.push(Entry{at_ps, payload});
  }
  bool empty() const { return q_.empty(); }

 private:
  struct Entry {
    uint64_t at_ps;
    uint64_t payload;
  };
  void wake(uint32_t) override {
    ++g_kernel_events;
    const uint64_t now = Scheduler::time();
    while (!q_.empty() && q_.front().at_ps <= now) fn_(q_.pop().payload);
    if (!q_.empty()) Scheduler::instance().set(alarm_, q_.front().at_ps);
  }
  Fn fn_;
  Fifo<Entry> q_;
  Alarm alarm_;
};

}  // namespace fabricsim
