#include "models/collectives/sweep.h"

namespace fabricsim {

CollectiveSweep::CollectiveSweep(sc_core::sc_module_name n, CollectiveEngine& engine, int ranks,
                                 std::vector<uint64_t> sizes, uint32_t elem_bytes,
                                 Factory factory, bool functional)
    : sc_module(n),
      engine_(engine),
      ranks_(ranks),
      sizes_(std::move(sizes)),
      elem_bytes_(elem_bytes),
      factory_(std::move(factory)),
      functional_(functional) {
  SC_HAS_PROCESS(CollectiveSweep);
  SC_METHOD(kickoff);  // runs once at time 0
}

void CollectiveSweep::kickoff() { start_next(); }

void CollectiveSweep::start_next() {
  if (next_ == sizes_.size()) return;
  SweepRow row;
  row.bytes = sizes_[next_++];
  row.count = row.bytes / elem_bytes_;
  coll::Schedule s = factory_(row.count);
  row.algorithm = s.algorithm;
  row.start_ps = sc_core::sc_time_stamp().value();
  if (functional_) {
    std::vector<std::vector<double>> bufs(ranks_, std::vector<double>(row.count));
    for (int r = 0; r < ranks_; ++r)
      for (uint64_t i = 0; i < row.count; ++i) bufs[r][i] = input_value(r, i);
    engine_.set_buffers(std::move(bufs));
  }
  rows_.push_back(row);
  engine_.start(std::move(s), [this]() {
    SweepRow& r = rows_.back();
    r.end_ps = sc_core::sc_time_stamp().value();
    if (functional_) {
      r.checked = true;
      for (uint64_t i = 0; i < r.count; ++i) {
        double expect = 0;
        for (int k = 0; k < ranks_; ++k) expect += input_value(k, i);
        for (int k = 0; k < ranks_; ++k)
          if (engine_.buffers()[k][i] != expect) ++r.wrong;
      }
    }
    start_next();
  });
}

}  // namespace fabricsim
