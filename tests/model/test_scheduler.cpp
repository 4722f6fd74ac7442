// The fabric calendar (models/core/scheduler.h): Alarm semantics and wake-up order.
// One SystemC kernel per process: ctest runs each TEST in its own process.
#include "models/core/scheduler.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <systemc>

#include "models/core/rng.h"

using namespace fabricsim;

namespace {

struct WakeRecord {
  uint64_t t_ps;        // sc_time_stamp() at the wake
  uint32_t what;        // the alarm's tag
  uint64_t delta;       // sc_delta_count(): equal means the same calendar activation
  uint64_t sched_now;   // Scheduler::now() at the wake
};

// Records every wake; optionally runs a hook (which may set alarms) after recording.
class Recorder : public Wakeable {
 public:
  void wake(uint32_t what) override {
    log.push_back(WakeRecord{sc_core::sc_time_stamp().value(), what,
                             uint64_t(sc_core::sc_delta_count()), Scheduler::now()});
    if (hook) hook(what);
  }
  std::vector<WakeRecord> log;
  std::function<void(uint32_t)> hook;

  std::vector<std::pair<uint64_t, uint32_t>> times_and_tags() const {
    std::vector<std::pair<uint64_t, uint32_t>> v;
    for (const WakeRecord& r : log) v.emplace_back(r.t_ps, r.what);
    return v;
  }
};

using Log = std::vector<std::pair<uint64_t, uint32_t>>;

uint64_t now_ps() { return sc_core::sc_time_stamp().value(); }

}  // namespace

// The default time resolution is 1 ps: the calendar's integer times are sc_time values.
TEST(Scheduler, AlarmsFireAtTheirTimes) {
  Scheduler& s = Scheduler::instance();
  Recorder rec;
  Alarm a{&rec, 1}, b{&rec, 2}, c{&rec, 3};
  s.set(a, 1000);
  s.set(b, 500);
  s.set(c, 12'345'678);
  EXPECT_TRUE(a.pending());
  EXPECT_EQ(a.when, 1000u);
  sc_core::sc_start();
  EXPECT_EQ(rec.times_and_tags(), (Log{{500, 2}, {1000, 1}, {12'345'678, 3}}));
  for (const WakeRecord& r : rec.log) EXPECT_EQ(r.sched_now, r.t_ps) << "tag " << r.what;
  EXPECT_FALSE(a.pending());
  EXPECT_FALSE(b.pending());
  EXPECT_FALSE(c.pending());
  EXPECT_EQ(now_ps(), 12'345'678u);
}

// A direct alarm (Alarm::direct: a plain function that finds its object from the alarm's
// address, as a port's transmitter and receiver do) is ordered with virtual-call alarms by
// (time, set() order), supersedes as they do, and is called with its own alarm.
namespace {
struct DirectHolder {
  int id;
  Alarm alarm = Alarm::direct(&DirectHolder::fire);
  static inline std::vector<std::pair<uint64_t, int>>* log = nullptr;
  static void fire(Alarm& a) {
    const DirectHolder& h = *reinterpret_cast<DirectHolder*>(
        reinterpret_cast<char*>(&a) - offsetof(DirectHolder, alarm));
    log->emplace_back(Scheduler::now(), h.id);
  }
};
}  // namespace

TEST(Scheduler, DirectAlarmsAreOrderedWithVirtualOnes) {
  Scheduler& s = Scheduler::instance();
  std::vector<std::pair<uint64_t, int>> log;
  DirectHolder::log = &log;
  struct Tagged : Wakeable {
    std::vector<std::pair<uint64_t, int>>* log;
    void wake(uint32_t what) override { log->emplace_back(Scheduler::now(), 100 + int(what)); }
  } v;
  v.log = &log;
  DirectHolder d1{1}, d2{2};
  EXPECT_TRUE(d1.alarm.what & Alarm::kDirect);
  Alarm a{&v, 1}, b{&v, 2};
  s.set(d1.alarm, 700);
  s.set(a, 500);
  s.set(d2.alarm, 500);  // after a at 500: set() order
  s.set(b, 900);
  s.set(d1.alarm, 300);  // supersedes 700: one call, at 300
  sc_core::sc_start();
  using L = std::vector<std::pair<uint64_t, int>>;
  EXPECT_EQ(log, (L{{300, 1}, {500, 101}, {500, 2}, {900, 102}}));
  EXPECT_FALSE(d1.alarm.pending());
}

TEST(Scheduler, AlarmAtTimeZeroFiresAtTimeZero) {
  Scheduler& s = Scheduler::instance();
  Recorder rec;
  Alarm a{&rec, 7};
  s.set(a, 0);
  sc_core::sc_start();
  EXPECT_EQ(rec.times_and_tags(), (Log{{0, 7}}));
}

// Setting an earlier time supersedes the pending one: one wake, at the earlier time.
TEST(Scheduler, EarlierSetSupersedes) {
  Scheduler& s = Scheduler::instance();
  Recorder rec;
  Alarm a{&rec, 1};
  s.set(a, 1000);
  s.set(a, 400);
  EXPECT_EQ(a.when, 400u);
  sc_core::sc_start();
  EXPECT_EQ(rec.times_and_tags(), (Log{{400, 1}}));
  EXPECT_FALSE(a.pending());
}

// Setting a later (or equal) time while one is pending is ignored.
TEST(Scheduler, LaterSetWhilePendingIsIgnored) {
  Scheduler& s = Scheduler::instance();
  Recorder rec;
  Alarm a{&rec, 1};
  s.set(a, 400);
  s.set(a, 1000);
  s.set(a, 400);
  EXPECT_EQ(a.when, 400u);
  sc_core::sc_start();
  EXPECT_EQ(rec.times_and_tags(), (Log{{400, 1}}));
}

// Superseded at 1000 by 400; re-set to 1000 from its own wake at 400. The stale calendar
// entry at 1000 and the new one coincide: it must still fire exactly once at 1000.
TEST(Scheduler, ReSetToSupersededTimeFiresOnce) {
  Scheduler& s = Scheduler::instance();
  Recorder rec;
  Alarm a{&rec, 1};
  rec.hook = [&](uint32_t) {
    if (rec.log.size() == 1) s.set(a, 1000);
  };
  s.set(a, 1000);
  s.set(a, 400);
  sc_core::sc_start();
  EXPECT_EQ(rec.times_and_tags(), (Log{{400, 1}, {1000, 1}}));
}

// Wake-ups at equal times run in the order of the set() calls that scheduled them.
TEST(Scheduler, EqualTimesFireInSetOrder) {
  Scheduler& s = Scheduler::instance();
  Recorder rec;
  std::vector<Alarm> al(6);
  for (uint32_t i = 0; i < al.size(); ++i) al[i] = Alarm{&rec, i};
  s.set(al[3], 700);
  s.set(al[0], 700);
  s.set(al[5], 700);
  s.set(al[1], 900);  // first set at 900 ...
  s.set(al[4], 700);
  s.set(al[1], 700);  // ... moved to 700 here: it orders by this later set() call
  s.set(al[2], 700);
  sc_core::sc_start();
  EXPECT_EQ(rec.times_and_tags(), (Log{{700, 3}, {700, 0}, {700, 5}, {700, 4}, {700, 1}, {700, 2}}));
  // All served in one calendar activation.
  for (const WakeRecord& r : rec.log) EXPECT_EQ(r.delta, rec.log[0].delta);
}

// An alarm re-set from inside its own wake at the current time fires again in the same
// timestep (and, per the calendar's contract, the same activation).
TEST(Scheduler, ReSetAtNowFromOwnWakeFiresAgainSameTimestep) {
  Scheduler& s = Scheduler::instance();
  Recorder rec;
  Alarm a{&rec, 1};
  rec.hook = [&](uint32_t) {
    if (rec.log.size() < 3) s.set(a, Scheduler::now());
  };
  s.set(a, 300);
  sc_core::sc_start();
  ASSERT_EQ(rec.times_and_tags(), (Log{{300, 1}, {300, 1}, {300, 1}}));
  EXPECT_EQ(rec.log[1].delta, rec.log[0].delta);
  EXPECT_EQ(rec.log[2].delta, rec.log[0].delta);
  EXPECT_FALSE(a.pending());
}

// Alarms set during a timestep for that same time run after the ones already due then.
TEST(Scheduler, SetAtNowDuringTimestepRunsAfterEarlierSets) {
  Scheduler& s = Scheduler::instance();
  Recorder rec;
  Alarm a{&rec, 1}, b{&rec, 2}, c{&rec, 3};
  rec.hook = [&](uint32_t what) {
    if (what == 1) s.set(c, Scheduler::now());
  };
  s.set(a, 300);
  s.set(b, 300);
  sc_core::sc_start();
  EXPECT_EQ(rec.times_and_tags(), (Log{{300, 1}, {300, 2}, {300, 3}}));
}

// From inside a wake: a later time fires later; moving a pending alarm earlier works;
// moving it later is ignored.
TEST(Scheduler, SetsFromInsideWakes) {
  Scheduler& s = Scheduler::instance();
  Recorder rec;
  Alarm a{&rec, 1}, b{&rec, 2}, c{&rec, 3};
  rec.hook = [&](uint32_t what) {
    if (what != 1) return;
    s.set(b, now_ps() + 500);  // 600
    s.set(c, 450);             // earlier than its pending 5000
    s.set(b, now_ps() + 900);  // later than its pending 600: ignored
  };
  s.set(a, 100);
  s.set(c, 5000);
  sc_core::sc_start();
  EXPECT_EQ(rec.times_and_tags(), (Log{{100, 1}, {450, 3}, {600, 2}}));
}

// Many alarms, each set one to three times at random (many ties): every alarm fires once,
// at the earliest time asked for, and the whole log is ordered by (time, sequence of the
// set() call that fixed that time). Exercises the 4-ary heap well beyond one level.
TEST(Scheduler, RandomAlarmsFireOnceInTimeThenSetOrder) {
  Scheduler& s = Scheduler::instance();
  Recorder rec;
  Rng rng(11, "scheduler_test");
  const uint32_t n = 2000;
  std::vector<Alarm> al(n);
  for (uint32_t i = 0; i < n; ++i) al[i] = Alarm{&rec, i};
  struct Expect {
    uint64_t t = UINT64_MAX;
    uint64_t seq = 0;
  };
  std::vector<Expect> ex(n);
  uint64_t seq = 0;
  // Interleave the alarms' sets so that supersessions happen across the whole heap.
  for (int round = 0; round < 3; ++round) {
    for (uint32_t i = 0; i < n; ++i) {
      if (round > 0 && rng.below(2) == 0) continue;
      const uint64_t t = 1 + rng.below(400);  // 2000 alarms in 400 times: many ties
      s.set(al[i], t);
      if (t < ex[i].t) ex[i] = Expect{t, seq};
      ++seq;
    }
  }
  std::vector<uint32_t> order(n);
  for (uint32_t i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
    return std::tie(ex[x].t, ex[x].seq) < std::tie(ex[y].t, ex[y].seq);
  });
  Log expected;
  for (uint32_t i : order) expected.emplace_back(ex[i].t, i);
  sc_core::sc_start();
  const Log got = rec.times_and_tags();
  ASSERT_EQ(got.size(), expected.size());
  for (size_t k = 0; k < got.size(); ++k)
    ASSERT_EQ(got[k], expected[k]) << "wake #" << k;
}

// Random chains: every wake sets one or two random alarms at now + [0, 50] (often at now,
// often an alarm that is already pending). Checked against an independent model of each
// alarm's pending time: `when` follows min(pending, new) on every set, each wake happens
// exactly at the modelled time, wake times never decrease, and nothing is left pending.
TEST(Scheduler, RandomChainsNeverGoBackInTimeOrLoseWakes) {
  Scheduler& s = Scheduler::instance();
  Recorder rec;
  Rng rng(12, "scheduler_chains");
  const uint32_t n = 64;
  std::vector<Alarm> al(n);
  std::vector<uint64_t> expected_when(n, UINT64_MAX);  // our own model of each alarm
  for (uint32_t i = 0; i < n; ++i) al[i] = Alarm{&rec, i};
  uint64_t wakes_left = 20'000;
  bool bad = false;
  auto model_set = [&](uint32_t i, uint64_t t) {
    s.set(al[i], t);
    if (t < expected_when[i]) expected_when[i] = t;
    if (al[i].when != expected_when[i]) bad = true;
  };
  rec.hook = [&](uint32_t what) {
    if (expected_when[what] != now_ps()) bad = true;  // fired at the time we expected
    expected_when[what] = UINT64_MAX;
    if (wakes_left == 0) return;
    --wakes_left;
    const int sets = 1 + int(rng.below(2));
    for (int k = 0; k < sets; ++k) model_set(uint32_t(rng.below(n)), now_ps() + rng.below(51));
  };
  for (uint32_t i = 0; i < n; ++i) model_set(i, rng.below(100));
  sc_core::sc_start();
  EXPECT_FALSE(bad);
  for (size_t k = 1; k < rec.log.size(); ++k)
    ASSERT_LE(rec.log[k - 1].t_ps, rec.log[k].t_ps) << "wake #" << k;
  for (uint32_t i = 0; i < n; ++i) {
    EXPECT_FALSE(al[i].pending()) << "alarm " << i << " still pending at the end";
    EXPECT_EQ(expected_when[i], UINT64_MAX) << "alarm " << i << " never fired";
  }
  EXPECT_GE(rec.log.size(), 20'000u);  // the chains ran until the budget was spent
}

// cancel() withdraws every entry of an alarm, superseded ones too: nothing of it fires,
// and an alarm set again at a time where an old entry of it lay is ordered by the new set()
// (after an alarm set before it for the same time), as a fresh alarm would be. Entries in
// the wheel and beyond its horizon (the heap) alike; other alarms are untouched.
TEST(Scheduler, CancelWithdrawsEveryEntryOfTheAlarm) {
  Scheduler& s = Scheduler::instance();
  Recorder rec;
  Alarm a{&rec, 1}, b{&rec, 2}, far{&rec, 3}, keep{&rec, 4};
  s.set(a, 9000);   // superseded below: its entry stays in the calendar
  s.set(a, 5000);
  s.set(far, 50'000'000'000ull);  // beyond the wheel's horizon
  s.set(keep, 7000);
  s.cancel(a);
  s.cancel(far);
  EXPECT_FALSE(a.pending());
  EXPECT_FALSE(far.pending());
  s.set(b, 9000);
  s.set(a, 9000);  // the old entry at 9000 would have run it before b
  sc_core::sc_start();
  EXPECT_EQ(rec.times_and_tags(), (Log{{7000, 4}, {9000, 2}, {9000, 1}}));
}

// A slot's entries span several chunks of its chain (31 entries each): cancel() of every
// third alarm compacts the chain across chunk boundaries, the others fire in (time, set)
// order, and entries kept in a slot after its earliest time fired stay in order too.
TEST(Scheduler, CancelInsideAMultiChunkSlotKeepsTheRestInOrder) {
  Scheduler& s = Scheduler::instance();
  Recorder rec;
  const uint32_t n = 200;  // 7 chunks' worth in one 256 ps slot
  std::vector<Alarm> al(n);
  for (uint32_t i = 0; i < n; ++i) al[i] = Alarm{&rec, i};
  Log expected;
  for (uint32_t i = 0; i < n; ++i) s.set(al[i], 1024 + (n - 1 - i) % 97);  // times out of order
  for (uint32_t i = 0; i < n; i += 3) s.cancel(al[i]);
  for (uint32_t i = 0; i < n; ++i)
    if (i % 3 != 0) expected.emplace_back(1024 + (n - 1 - i) % 97, i);
  std::stable_sort(expected.begin(), expected.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  sc_core::sc_start();
  EXPECT_EQ(rec.times_and_tags(), expected);
  for (uint32_t i = 0; i < n; ++i) EXPECT_FALSE(al[i].pending());
}

// Scheduler::start: instants before the end of the duration run one after another inside
// one kernel activation (same delta count), in time order, with Scheduler::now() at each
// instant's time while the kernel's clock stays at the first; nothing at or beyond the end
// runs early. After it, Scheduler::time() is the true time, and a second start() goes on.
TEST(Scheduler, StartRunsInstantsInOneActivationUpToTheEnd) {
  Scheduler& s = Scheduler::instance();
  Recorder rec;
  std::vector<Alarm> al(5);
  for (uint32_t i = 0; i < al.size(); ++i) al[i] = Alarm{&rec, i};
  rec.hook = [&](uint32_t what) {  // a chain: each wake sets the next alarm 100 ps on
    if (what + 1 < al.size()) s.set(al[what + 1], Scheduler::now() + 100);
  };
  s.set(al[0], 700);  // then 800, 900, 1000 (the end), 1100
  Scheduler::start(1000);
  ASSERT_GE(rec.log.size(), 3u);
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(rec.log[k].sched_now, 700 + 100 * k) << "wake #" << k;
    EXPECT_EQ(rec.log[k].t_ps, 700u) << "wake #" << k << ": the kernel's clock stays put";
    EXPECT_EQ(rec.log[k].delta, rec.log[0].delta) << "wake #" << k;
  }
  // The calendar hands 1000 to the kernel, which (SystemC 2.3.4) leaves what is due at
  // the end of sc_start's duration to the next sc_start, and moves its clock to the end.
  ASSERT_EQ(rec.log.size(), 3u);
  EXPECT_EQ(sc_core::sc_time_stamp().value(), 1000u);
  EXPECT_EQ(Scheduler::time(), 1000u);
  Scheduler::start(1000);
  ASSERT_EQ(rec.log.size(), 5u);
  for (size_t k = 0; k < 5; ++k) EXPECT_EQ(rec.log[k].sched_now, 700 + 100 * k);
  // Starved: the kernel's clock is where the last activation began; time() is the last
  // instant run.
  EXPECT_EQ(sc_core::sc_time_stamp().value(), 1000u);
  EXPECT_EQ(Scheduler::time(), 1100u);
}

namespace {
// A process outside the calendar, woken by its own timed sc_event: it records its wake in
// the recorder's log (tag 99) and sets an alarm for its own time.
class Outsider : public sc_core::sc_module {
 public:
  Outsider(sc_core::sc_module_name n, Recorder& rec, Alarm& then)
      : sc_module(n), rec_(rec), then_(then) {
    SC_HAS_PROCESS(Outsider);
    SC_METHOD(fire);
    sensitive << ev;
    dont_initialize();
  }
  sc_core::sc_event ev;

 private:
  void fire() {
    rec_.log.push_back(WakeRecord{sc_core::sc_time_stamp().value(), 99,
                                  uint64_t(sc_core::sc_delta_count()), Scheduler::time()});
    Scheduler::instance().set(then_, Scheduler::time());
  }
  Recorder& rec_;
  Alarm& then_;
};
}  // namespace

// The calendar runs ahead only while the kernel has nothing else before its next instant:
// another process's timed notification at 500 runs between the calendar's 400 and 600,
// at the kernel's time 500, and an alarm it sets for 500 runs right after it.
TEST(Scheduler, StartYieldsToOtherProcessesBetweenInstants) {
  Scheduler& s = Scheduler::instance();
  Recorder rec;
  Alarm a{&rec, 1}, b{&rec, 2}, c{&rec, 3}, d{&rec, 4};
  Outsider out("outsider", rec, d);
  s.set(a, 100);
  s.set(b, 400);
  s.set(c, 600);
  out.ev.notify(sc_core::sc_time::from_value(500));
  Scheduler::start(1'000'000);
  ASSERT_EQ(rec.log.size(), 5u);
  const Log order{{100, 1}, {400, 2}, {500, 99}, {500, 4}, {600, 3}};
  for (size_t k = 0; k < order.size(); ++k) {
    EXPECT_EQ(rec.log[k].sched_now, order[k].first) << "wake #" << k;
    EXPECT_EQ(rec.log[k].what, order[k].second) << "wake #" << k;
  }
  EXPECT_EQ(rec.log[2].t_ps, 500u);  // the outsider ran at the kernel's time 500
  EXPECT_EQ(rec.log[0].delta, rec.log[1].delta);  // 100 and 400 in one activation
  EXPECT_NE(rec.log[1].delta, rec.log[3].delta);
}
