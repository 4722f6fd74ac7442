#include "models/collectives/sweep.h"

#include "models/core/scheduler.h"

namespace fabricsim {

CollectiveSweep::CollectiveSweep(sc_core::sc_module_name n, CollectiveEngine& engine, int ranks,
                                 std::vector<uint64_t> sizes, uint32_t elem_bytes,
                                 Factory factory, const coll::AlgoInfo* functional, int root,
                                 Fabric fabric)
    : sc_module(n),
      engine_(engine),
      ranks_(ranks),
      sizes_(std::move(sizes)),
      elem_bytes_(elem_bytes),
      factory_(std::move(factory)),
      functional_(functional),
      root_(root),
      fabric_(std::move(fabric)) {
  SC_HAS_PROCESS(CollectiveSweep);
  SC_METHOD(kickoff);  // runs once at time 0
  wait_ = std::make_unique<TimerQueue>("settle", [this](uint64_t) { settle(); });
}

void CollectiveSweep::kickoff() { start_next(); }

// Packets still in flight (protocol messages of the last steps, e.g. slot releases): look
// again a little later. Then wait until every device is idle, reset, and go on.
void CollectiveSweep::settle() {
  constexpr uint64_t kPollPs = 100000;  // 100 ns
  const uint64_t now = Scheduler::time();
  if (!fabric_.in_flight) {
    start_next();
    return;
  }
  if (fabric_.in_flight()) {
    wait_->at(now + kPollPs, 0);
    return;
  }
  const uint64_t idle = fabric_.idle_at();
  if (idle > now) {
    wait_->at(idle, 0);
    return;
  }
  fabric_.reset();
  start_next();
}

void CollectiveSweep::start_next() {
  if (next_ == sizes_.size()) return;
  SweepRow row;
  row.bytes = sizes_[next_++];
  row.count = row.bytes / elem_bytes_;
  coll::Schedule s = factory_(row.count);
  row.algorithm = s.algorithm;
  row.start_ps = Scheduler::time();
  if (functional_) {
    std::vector<std::vector<double>> bufs(ranks_, std::vector<double>(s.count));
    for (int r = 0; r < ranks_; ++r)
      for (uint64_t i = 0; i < s.count; ++i) bufs[r][i] = input_value(r, i);
    engine_.set_buffers(std::move(bufs));
  }
  rows_.push_back(row);
  engine_.start(std::move(s), [this]() {
    SweepRow& r = rows_.back();
    r.end_ps = Scheduler::time();
    if (functional_) {
      r.checked = true;
      r.wrong = count_wrong(r.count);
    }
    if (next_ < sizes_.size())
      settle();
    else if (on_finished_)
      on_finished_();
  });
}

// The exact result of each collective, element by element, in the buffer layout of
// algorithms.h; only elements the collective defines are checked.
uint64_t CollectiveSweep::count_wrong(uint64_t c) const {
  using coll::Collective;
  const auto& buf = engine_.buffers();
  const int n = ranks_;
  uint64_t wrong = 0;
  auto sum = [&](uint64_t i) {
    double s = 0;
    for (int k = 0; k < n; ++k) s += input_value(k, i);
    return s;
  };
  auto check = [&](int rank, uint64_t i, double expect) {
    if (buf[rank][i] != expect) ++wrong;
  };
  const std::vector<uint64_t> sizes = coll::split_even(c, n);
  std::vector<uint64_t> start(n, 0);
  for (int b = 1; b < n; ++b) start[b] = start[b - 1] + sizes[b - 1];
  switch (functional_->collective) {
    case Collective::kAllReduce:
      for (uint64_t i = 0; i < c; ++i) {
        const double s = sum(i);
        for (int r = 0; r < n; ++r) check(r, i, s);
      }
      break;
    case Collective::kReduceScatter:
      for (int r = 0; r < n; ++r)
        for (uint64_t i = start[r]; i < start[r] + sizes[r]; ++i) check(r, i, sum(i));
      break;
    case Collective::kAllGather:
      for (int b = 0; b < n; ++b)
        for (uint64_t i = start[b]; i < start[b] + sizes[b]; ++i)
          for (int r = 0; r < n; ++r) check(r, i, input_value(b, i));
      break;
    case Collective::kBroadcast:
      for (uint64_t i = 0; i < c; ++i)
        for (int r = 0; r < n; ++r) check(r, i, input_value(root_, i));
      break;
    case Collective::kReduce:
      for (uint64_t i = 0; i < c; ++i) check(root_, i, sum(i));
      break;
    case Collective::kAllToAll: {
      // Slot j of rank r, at c + j*B, holds input block r of rank j (slot r is unwritten).
      const uint64_t slot = (c + n - 1) / n;
      for (int r = 0; r < n; ++r)
        for (int j = 0; j < n; ++j) {
          if (j == r) continue;
          for (uint64_t t = 0; t < sizes[r]; ++t)
            check(r, c + uint64_t(j) * slot + t, input_value(j, start[r] + t));
        }
      break;
    }
    case Collective::kSendRecv:
      if (n > 1)
        for (int r = 0; r < n; ++r)
          for (uint64_t i = 0; i < c; ++i) check(r, c + i, input_value((r - 1 + n) % n, i));
      break;
  }
  return wrong;
}

}  // namespace fabricsim
