#include "models/core/scheduler.h"

#include "models/core/errors.h"

namespace fabricsim {

namespace {
Scheduler* g_scheduler = nullptr;
}

uint64_t Scheduler::now_ps_ = 0;

Scheduler& Scheduler::instance() {
  if (!g_scheduler) g_scheduler = new Scheduler("fabric_scheduler");  // lives as long as the kernel
  return *g_scheduler;
}

Scheduler::Scheduler(sc_core::sc_module_name n) : sc_module(n) {
  SC_HAS_PROCESS(Scheduler);
  SC_METHOD(run);
  sensitive << ev_;
  dont_initialize();
}

void Scheduler::push(const Entry& e) {
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

Scheduler::Entry Scheduler::pop() {
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

void Scheduler::arm(uint64_t t_ps) {
  const uint64_t now_ps = sc_core::sc_time_stamp().value();
  FABRICSIM_ASSERT(t_ps >= now_ps, "scheduler: wake-up in the past");
  armed_for_ = t_ps;
  ev_.notify(sc_core::sc_time::from_value(t_ps - now_ps));
}

void Scheduler::run() {
  const uint64_t now_ps = sc_core::sc_time_stamp().value();
  now_ps_ = now_ps;
  armed_for_ = UINT64_MAX;
  // Wake-ups set for `now` while running are served in this same activation.
  while (!heap_.empty() && heap_[0].t() <= now_ps) {
    const Entry e = pop();
    Alarm& a = *e.alarm;
    if (a.when != e.t()) continue;  // superseded by an earlier set(), already served
    a.when = UINT64_MAX;
    a.target->wake(a.what);
  }
  if (!heap_.empty()) arm(heap_[0].t());
}

}  // namespace fabricsim
