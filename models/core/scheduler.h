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
// (docs/performance.md, 2026-12-03). A slot's entries live in a chain of 1 KiB chunks
// taken from one free list, last freed first: a wake-up's entry is written into a chunk
// that the calendar emptied moments ago (still in cache), memory is bounded by the
// entries pending, not by every slot's largest burst, and nothing is copied or allocated
// as a slot grows (per-slot vectors were 12% of NVL576 all-to-all's samples, mostly
// waiting for their slot's memory, and their regrowth faulted in fresh pages).
// Measured here: SystemC's own timed-event queue (sc_ppq with an indirect comparison)
// was about 35% of run time when each resource had its own sc_event; this calendar does
// the same job inside one SC_METHOD activation per distinct time, or, run through
// start(), for every distinct time until the kernel has something else to do.
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
  // What the wake-up calls: target->wake(what), or, for an alarm made by direct() (`what`
  // has kDirect), call(*this): a plain function that finds its object from the alarm's
  // address. The wake-up then reads no line of the object but those the function uses; a
  // virtual call reads the object's vtable pointer first, a line of its own on a port
  // (the one before its hot lines) and one more dependent miss per wake-up on a large
  // fabric.
  static constexpr uint32_t kDirect = 1u << 31;
  Alarm() = default;
  Alarm(Wakeable* t, uint32_t w) : target(t), what(w) {}
  union {
    Wakeable* target = nullptr;
    void (*call)(Alarm&);
  };
  uint32_t what = 0;
  // Where the wake-up writes in another object, as a byte offset from this alarm (0:
  // nothing named): the calendar fetches that line and the next with the target, a few
  // wake-ups ahead (Scheduler::run). For state the wake-up reaches through a pointer,
  // which would otherwise be a miss that waits for another (a port's receiver). Only
  // a prefetch: it never changes what is computed.
  int32_t also = 0;
  uint64_t when = UINT64_MAX;  // pending wake-up time, UINT64_MAX if none
  bool pending() const { return when != UINT64_MAX; }
  static Alarm direct(void (*fn)(Alarm&)) {
    Alarm a;
    a.call = fn;
    a.what = kDirect;
    return a;
  }
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
    push(t_ps, seq_++, &a, hint);
    if (!running_ && t_ps < armed_for_) arm(t_ps);  // run() re-arms when it finishes
  }
  // Withdraws `a`'s pending wake-up, if any, and every entry of it the calendar still
  // holds (superseded ones included), so that nothing of it fires later and a later set()
  // is ordered as on a fresh alarm. O(entries): for the reset between independent
  // measurements (DeviceModel::reset_dynamic_state), not for the packet path.
  void cancel(Alarm& a);
  // Current simulated time in ps, for model code: it runs inside the calendar's
  // activation (or at time 0 from an SC_METHOD started by the kernel). Inside the
  // calendar this is the instant being run, which may be later than sc_time_stamp()
  // (start(), below): model code reads the time here, never from the kernel.
  static uint64_t now() { return now_ps_; }
  // Current simulated time from anywhere: inside the calendar now(); outside it (after
  // sc_start returns, in a test between two sc_start calls) the later of the last
  // instant run and the kernel's time.
  static uint64_t time() {
    if (instance_ != nullptr && instance_->running_) return now_ps_;
    const uint64_t k = sc_core::sc_time_stamp().value();
    return k > now_ps_ ? k : now_ps_;
  }
  // Runs the simulation for duration_ps from time() (sc_start from the kernel's clock to
  // that end, SC_EXIT_ON_STARVATION). Meanwhile the calendar may run its instants before
  // the end one after another inside one kernel activation, as long as nothing else is
  // pending in the kernel before the next one (sc_time_to_pending_activity). Same
  // instants in the same order, so the same results; what it saves is the kernel's timed
  // notification and its evaluate/update/advance cycle per distinct time. A plain
  // sc_start (tests) keeps one instant per activation.
  static void start(uint64_t duration_ps);

 private:
  explicit Scheduler(sc_core::sc_module_name n);
  ~Scheduler() override;
  struct Entry {
    u128 key;  // time << 64 | insertion sequence: one comparison orders by both
    Alarm* alarm;
    const void* hint;  // prefetched ahead of the wake-up (fills the 16-byte-aligned entry)
    uint64_t t() const { return uint64_t(key >> 64); }
    bool before(const Entry& o) const { return key < o.key; }
  };
  static constexpr unsigned kSlotShift = 8;   // 256 ps per slot
  static constexpr uint64_t kSlots = 4096;    // power of two
  // A chunk of a slot's chain: 1 KiB, aligned to 1 KiB, so the chunk an entry pointer
  // falls in is the pointer with its low bits cleared. The header takes one entry's place.
  static constexpr size_t kChunkBytes = 1024;
  static constexpr size_t kChunkEntries = kChunkBytes / sizeof(Entry) - 1;  // 31
  struct alignas(kChunkBytes) Chunk {
    Chunk* next;
    char pad[sizeof(Entry) - sizeof(Chunk*)];
    Entry e[kChunkEntries];
  };
  // A slot: its first chunk and one past its last entry. `end` on a chunk boundary (or
  // null: the slot is empty) means the last chunk is full.
  struct Slot {
    Chunk* head = nullptr;
    Entry* end = nullptr;
  };
  static Chunk* chunk_of(const Entry* last) {  // the chunk holding entry `last`
    return reinterpret_cast<Chunk*>(reinterpret_cast<uintptr_t>(last) & ~(kChunkBytes - 1));
  }
  static bool at_chunk_end(const Entry* end) {
    return (reinterpret_cast<uintptr_t>(end) & (kChunkBytes - 1)) == 0;
  }
  Chunk* take_chunk();
  void wheel_append(uint64_t i, uint64_t t, uint64_t seq, Alarm* a, const void* hint);
  // Keeps the entries of slot i for which keep(e) holds, in order, compacting the chain
  // and returning emptied chunks; returns true if the slot is now empty.
  template <class Keep>
  bool filter_slot(uint64_t i, Keep keep);
  // The entry's fields travel in registers and are stored straight into the slot (an
  // Entry built on the caller's stack and copied was read back before its stores retired).
  void push(uint64_t t, uint64_t seq, Alarm* a, const void* hint);
  void push(const Entry& e) { push(e.t(), uint64_t(e.key), e.alarm, e.hint); }
  void heap_push(const Entry& e);
  Entry heap_pop();
  uint64_t next_time() const;
  void arm(uint64_t t_ps);
  void run();

  std::vector<Slot> wheel_;                // slot s holds entries of absolute slot s (mod kSlots)
  Chunk* free_ = nullptr;                  // free chunks, last freed first
  std::vector<Chunk*> blocks_;             // the chunks' storage, allocated kBlockChunks at a time
  static constexpr size_t kBlockChunks = 64;
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
  // Instants strictly before this time may run in the activation of an earlier one
  // (start()); 0 outside start(): one instant per activation.
  uint64_t horizon_ps_ = 0;
  // Runs the instant now_ps (what is due then, in set() order); returns the next time
  // anything is due, UINT64_MAX if nothing is.
  uint64_t run_instant(uint64_t now_ps);
  static uint64_t now_ps_;
  static inline Scheduler* instance_ = nullptr;  // lives as long as the kernel
  [[gnu::noinline]] static Scheduler& create();
  sc_core::sc_event ev_;
};

}  // namespace fabricsim
