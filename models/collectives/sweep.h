// Runs one collective per message size, back to back, and records each one's time: the
// nccl-tests size sweep. In functional mode every rank's buffer holds integer-valued
// doubles and the result is checked element by element (sums of integers below 2^53 are
// exact in double).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "models/collectives/engine.h"
#include "models/collectives/algorithms.h"
#include "models/collectives/program.h"
#include "models/core/timer.h"

namespace fabricsim {

struct SweepRow {
  uint64_t bytes = 0;
  uint64_t count = 0;
  std::string algorithm;
  uint64_t start_ps = 0, end_ps = 0;
  bool checked = false;  // functional check ran
  uint64_t wrong = 0;    // elements that differ from the exact sum (functional mode)
};

// Every row is an independent measurement: after a row completes the sweep waits until
// the fabric is idle (no packet in flight, every credit and ack back: Fabric), resets the
// fabric's dynamic state, and only then starts the next row, so a row gives the same
// result alone and anywhere in any sweep (docs/collectives.md, "Independent rows").
class CollectiveSweep : public sc_core::sc_module {
 public:
  using Factory = std::function<coll::Schedule(uint64_t count)>;
  // What the sweep asks of the fabric between rows (empty functions: rows back to back).
  struct Fabric {
    std::function<bool()> in_flight;    // packets still on their way
    std::function<uint64_t()> idle_at;  // once none is: when every device is idle
    std::function<void()> reset;        // at or after that time: reset the dynamic state
  };
  // `functional`: the collective to check results against (nullptr: timing only).
  CollectiveSweep(sc_core::sc_module_name n, CollectiveEngine& engine, int ranks,
                  std::vector<uint64_t> sizes, uint32_t elem_bytes, Factory factory,
                  const coll::AlgoInfo* functional, int root = 0, Fabric fabric = {});
  const std::vector<SweepRow>& rows() const { return rows_; }
  bool finished() const { return next_ == sizes_.size() && !engine_.busy(); }
  // Called once, when the last size's collective has completed.
  void set_on_finished(std::function<void()> f) { on_finished_ = std::move(f); }

 private:
  void start_next();
  void kickoff();
  void settle();  // after a row: wait for the idle fabric, reset it, start the next row
  // Elements of every rank's buffer that differ from the collective's exact result.
  uint64_t count_wrong(uint64_t count) const;
  static double input_value(int rank, uint64_t i) {
    return double((uint64_t(rank) * 7919u + i * 31u) % 100003u);
  }

  CollectiveEngine& engine_;
  int ranks_;
  std::vector<uint64_t> sizes_;
  uint32_t elem_bytes_;
  Factory factory_;
  const coll::AlgoInfo* functional_;
  int root_;
  Fabric fabric_;
  std::unique_ptr<TimerQueue> wait_;
  size_t next_ = 0;
  std::vector<SweepRow> rows_;
  std::function<void()> on_finished_;
};

}  // namespace fabricsim
