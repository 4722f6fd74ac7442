// TimerQueue (models/core/timer.h): callbacks at non-decreasing times on the calendar.
// One SystemC kernel per process: ctest runs each TEST in its own process.
#include "models/core/timer.h"

#include <cstdint>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <systemc>

#include "models/core/errors.h"
#include "models/core/scheduler.h"

using namespace fabricsim;

namespace {

using Log = std::vector<std::pair<uint64_t, uint64_t>>;  // (time ps, payload)

uint64_t now_ps() { return sc_core::sc_time_stamp().value(); }

}  // namespace

TEST(TimerQueue, CallbacksFireAtTheirTimesInOrderWithPayload) {
  Log log;
  TimerQueue tq("tq", [&](uint64_t payload) { log.emplace_back(now_ps(), payload); });
  EXPECT_TRUE(tq.empty());
  tq.at(100, 7);
  tq.at(100, 8);  // equal times keep insertion order
  tq.at(250, 0xDEADBEEFCAFEF00Dull);
  tq.at(1'000'000, 10);
  EXPECT_FALSE(tq.empty());
  sc_core::sc_start();
  EXPECT_EQ(log, (Log{{100, 7}, {100, 8}, {250, 0xDEADBEEFCAFEF00Dull}, {1'000'000, 10}}));
  EXPECT_TRUE(tq.empty());
  EXPECT_EQ(now_ps(), 1'000'000u);
}

TEST(TimerQueue, TimerAtTimeZero) {
  Log log;
  TimerQueue tq("tq", [&](uint64_t payload) { log.emplace_back(now_ps(), payload); });
  tq.at(0, 1);
  tq.at(0, 2);
  tq.at(5, 3);
  sc_core::sc_start();
  EXPECT_EQ(log, (Log{{0, 1}, {0, 2}, {5, 3}}));
}

// Thousands of entries (the ring buffer grows several times) with runs of equal times.
TEST(TimerQueue, ManyEntriesKeepOrder) {
  Log log;
  TimerQueue tq("tq", [&](uint64_t payload) { log.emplace_back(now_ps(), payload); });
  Log expected;
  for (uint64_t k = 0; k < 10'000; ++k) {
    const uint64_t t = 1000 + (k / 3) * 17;  // three entries per time
    tq.at(t, k);
    expected.emplace_back(t, k);
  }
  sc_core::sc_start();
  EXPECT_EQ(log, expected);
}

// Callbacks may add entries: at the current time (same timestep) and later, both when the
// queue has just emptied and when it still holds entries (appended at the tail's time).
TEST(TimerQueue, CallbacksCanScheduleMore) {
  Log log;
  TimerQueue* self = nullptr;
  TimerQueue tq("tq", [&](uint64_t payload) {
    log.emplace_back(now_ps(), payload);
    if (payload == 1) self->at(now_ps(), 2);       // queue empty: same time
    if (payload == 2) self->at(now_ps() + 40, 3);  // queue empty: later (140)
    if (payload == 5) self->at(300, 8);            // queue holds 7 at 300: equal to the tail
    if (payload == 8) self->at(now_ps(), 9);       // queue empty again: same time
  });
  self = &tq;
  tq.at(100, 1);
  sc_core::sc_start(sc_core::sc_time::from_value(120));  // stop with 3 pending at 140
  EXPECT_EQ(log, (Log{{100, 1}, {100, 2}}));
  tq.at(200, 5);  // appended behind 3 while the queue is non-empty
  tq.at(300, 7);
  sc_core::sc_start();
  EXPECT_EQ(log, (Log{{100, 1}, {100, 2}, {140, 3}, {200, 5}, {300, 7}, {300, 8}, {300, 9}}));
  EXPECT_TRUE(tq.empty());
}

// Two queues share one calendar: their callbacks interleave by time.
TEST(TimerQueue, TwoQueuesInterleaveByTime) {
  std::vector<std::pair<uint64_t, int>> log;
  TimerQueue a("a", [&](uint64_t p) { log.emplace_back(now_ps(), int(p)); });
  TimerQueue b("b", [&](uint64_t p) { log.emplace_back(now_ps(), 100 + int(p)); });
  a.at(10, 1);
  a.at(30, 2);
  a.at(50, 3);
  b.at(20, 1);
  b.at(40, 2);
  b.at(60, 3);
  sc_core::sc_start();
  EXPECT_EQ(log, (std::vector<std::pair<uint64_t, int>>{
                     {10, 1}, {20, 101}, {30, 2}, {40, 102}, {50, 3}, {60, 103}}));
}

// Times must never decrease: an out-of-order entry is a model bug (InternalError).
TEST(TimerQueue, OutOfOrderEntryIsAnInternalError) {
  TimerQueue tq("tq", [](uint64_t) {});
  tq.at(500, 1);
  EXPECT_THROW(tq.at(400, 2), InternalError);
  EXPECT_NO_THROW(tq.at(500, 3));  // equal is fine
}

// A timer in the past is a model bug too.
TEST(TimerQueue, TimerInThePastIsAnInternalError) {
  bool threw = false;
  TimerQueue* self = nullptr;
  TimerQueue tq("tq", [&](uint64_t) {
    try {
      self->at(now_ps() - 1, 0);
    } catch (const InternalError&) {
      threw = true;
    }
  });
  self = &tq;
  tq.at(1000, 1);
  sc_core::sc_start();
  EXPECT_TRUE(threw);
}
