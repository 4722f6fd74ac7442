// Runs collective programs (program.h) on endpoints. Timing comes only from the fabric
// and the endpoints: a kSend hands a message to the endpoint's DMA, a kRecv completes
// when the message has fully arrived (plus the reduction engine's time for a reduce), a
// kCompute occupies the rank's compute unit, a kDelay waits its duration without
// occupying anything. Ops start as soon as their dependencies are met, in program order.
// A schedule may hold several collectives at once (e.g. a training step composed by
// job.h): messages match on (source, destination, tag) only, so collectives on disjoint
// or overlapping rank groups run concurrently as long as their tags differ.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include <systemc>

#include "models/collectives/program.h"
#include "models/core/scheduler.h"
#include "models/core/timer.h"
#include "models/collectives/rank_io.h"
#include "models/endpoint/endpoint.h"

namespace fabricsim {

class CollectiveEngine : public sc_core::sc_module, public Wakeable {
 public:
  // Optional observer of whole schedules (fabrics/sim/observe.h: per-row statistics and
  // traces): told when a schedule starts and when its last op has completed, while the
  // engine still holds its per-op times (op_done_ps). Costs nothing per op.
  class Observer {
   public:
    virtual ~Observer() = default;
    virtual void started(const coll::Schedule& s, uint64_t now_ps) = 0;
    virtual void finished(const coll::Schedule& s, uint64_t now_ps) = 0;
  };
  void set_observer(Observer* o) { observer_ = o; }

  // ranks[r] is the endpoint that runs rank r's program (rank_io.h: an Endpoint, or a rank
  // of the flow level).
  CollectiveEngine(sc_core::sc_module_name n, std::vector<RankIo*> ranks, uint32_t elem_bytes);
  CollectiveEngine(sc_core::sc_module_name n, const std::vector<Endpoint*>& ranks,
                   uint32_t elem_bytes)
      : CollectiveEngine(n, std::vector<RankIo*>(ranks.begin(), ranks.end()), elem_bytes) {}

  // Start `s` now; `on_done` fires once every op of every rank has completed.
  void start(coll::Schedule s, std::function<void()> on_done);
  bool busy() const { return running_; }
  void set_sync(const coll::SyncProtocol& p) { sync_ = p; }

  // Functional mode: every rank's buffer holds real numbers that travel with the
  // messages (a copy taken when the send starts); receives copy or sum them.
  void set_buffers(std::vector<std::vector<double>> buffers) { data_ = std::move(buffers); }
  const std::vector<std::vector<double>>& buffers() const { return data_; }
  bool functional() const { return !data_.empty(); }

  uint64_t ops_completed() const { return ops_completed_; }
  // Simulated time (ps) at which op `op` of `rank` completed in the last schedule started;
  // UINT64_MAX if it has not (yet).
  uint64_t op_done_ps(int rank, uint32_t op) const { return st_.at(rank).done_ps.at(op); }

 private:
  // Exact match key: a send (src -> dst, tag) pairs with one receive.
  struct MatchKey {
    uint32_t src, dst;
    uint64_t tag;
    bool operator==(const MatchKey& o) const { return src == o.src && dst == o.dst && tag == o.tag; }
  };
  struct MatchHash {
    size_t operator()(const MatchKey& k) const {
      uint64_t h = k.tag * 0x9E3779B97F4A7C15ull ^ (uint64_t(k.src) << 32 | k.dst);
      h ^= h >> 31;
      return size_t(h * 0xBF58476D1CE4E5B9ull);
    }
  };
  template <typename V>
  using MatchMap = std::unordered_map<MatchKey, V, MatchHash>;

  struct RankState {
    std::vector<uint32_t> waiting_deps;   // per op: deps not yet complete
    std::vector<uint32_t> dep_begin;      // CSR of dependents: op -> [begin, begin+1)
    std::vector<uint32_t> dependents;
    uint32_t remaining = 0;
    uint64_t compute_busy_ps = 0;
    MatchMap<uint32_t> waiting_recv;  // receive started, message not yet in -> op
    MatchMap<uint32_t> arrived;       // message in before its receive started -> count
    std::unique_ptr<TimerQueue> reduce_timer, compute_timer;
    std::vector<uint64_t> done_ps;    // per op: completion time, UINT64_MAX until then
  };
  // kDelay ops in flight, earliest first (ties in start order): one Alarm for all.
  struct Delayed {
    uint64_t at_ps, seq;
    int rank;
    uint32_t op;
    bool operator>(const Delayed& o) const {
      return at_ps != o.at_ps ? at_ps > o.at_ps : seq > o.seq;
    }
  };
  void wake(uint32_t) override;
  void start_op(int rank, uint32_t op);
  void op_done(int rank, uint32_t op);
  void recv_arrived(int rank, uint32_t op);
  void on_delivery(int rank, const RankIo::Delivery& d);
  void data_complete(int rank, uint32_t src_rank, uint64_t tag);
  void launch();

  std::vector<RankIo*> ranks_;
  std::vector<int> rank_of_endpoint_;
  uint32_t elem_bytes_;
  coll::Schedule sched_;
  std::vector<RankState> st_;
  std::unordered_map<uint64_t, std::pair<int, uint32_t>> send_of_msg_;  // msg id -> (rank, op)
  MatchMap<std::vector<double>> in_flight_data_;  // functional mode: message contents
  std::vector<std::vector<double>> data_;
  std::function<void()> on_done_;
  coll::SyncProtocol sync_;
  std::unique_ptr<TimerQueue> launch_timer_;
  std::vector<Delayed> delayed_;  // min-heap on (at_ps, seq)
  uint64_t delay_seq_ = 0;
  Alarm delay_alarm_;
  uint32_t ranks_left_ = 0;
  bool running_ = false;
  uint64_t ops_completed_ = 0;
  Observer* observer_ = nullptr;
};

}  // namespace fabricsim
