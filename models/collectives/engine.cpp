#include "models/collectives/engine.h"

#include <algorithm>
#include <functional>

#include "models/core/errors.h"
#include "models/core/scheduler.h"

namespace fabricsim {

CollectiveEngine::CollectiveEngine(sc_core::sc_module_name n, std::vector<RankIo*> ranks,
                                   uint32_t elem_bytes)
    : sc_module(n), ranks_(std::move(ranks)), elem_bytes_(elem_bytes), st_(ranks_.size()) {
  delay_alarm_ = Alarm{this, 0};
  // Built here, during elaboration: SystemC refuses new modules once the simulation runs,
  // and a sweep starts its first collective (and its launch delay) from a process.
  launch_timer_ = std::make_unique<TimerQueue>("launch", [this](uint64_t epoch) {
    if (epoch == epoch_) launch();
  });
  uint32_t max_id = 0;
  for (RankIo* e : ranks_) max_id = std::max(max_id, e->id());
  rank_of_endpoint_.assign(max_id + 1, -1);
  for (size_t r = 0; r < ranks_.size(); ++r) {
    const int rank = int(r);
    rank_of_endpoint_[ranks_[r]->id()] = rank;
    attach(rank);
    // Payload: the op, and in the upper 32 bits the attempt it belongs to.
    st_[r].reduce_timer = std::make_unique<TimerQueue>(
        ("reduce_" + std::to_string(r)).c_str(), [this, rank](uint64_t op) {
          if (uint32_t(op >> 32) == epoch_) op_done(rank, uint32_t(op));
        });
    st_[r].compute_timer = std::make_unique<TimerQueue>(
        ("compute_" + std::to_string(r)).c_str(), [this, rank](uint64_t op) {
          if (uint32_t(op >> 32) == epoch_) op_done(rank, uint32_t(op));
        });
  }
}

void CollectiveEngine::attach(int rank) {
  ranks_[size_t(rank)]->on_delivery([this, rank](const RankIo::Delivery& d) {
    if (halted_) {  // of an abandoned run: nobody waits for it
      ++ignored_deliveries_;
      ignored_bytes_ += d.bytes;
      return;
    }
    on_delivery(rank, d);
  });
  ranks_[size_t(rank)]->on_sent([this](uint64_t msg_id, PacketKind kind) {
    if (halted_) return;  // of an abandoned run
    // Protocol acks and flags, and NVLS requests, complete no op when sent.
    if (kind != PacketKind::kData && kind != PacketKind::kNvlsMcast) return;
    auto it = send_of_msg_.find(msg_id);
    FABRICSIM_ASSERT(it != send_of_msg_.end(), "engine: unknown message sent");
    auto [rk, op] = it->second;
    send_of_msg_.erase(it);
    if (op == UINT32_MAX) return;  // a proxy's write or a multicast flag
    // Under the protocol model a Simple send completes when its fence retires (its ack),
    // an LL/LL128 send at its channel-rate floor, a multicast store when its fence
    // retires (its own replica back) and a multicast flag (op kNone) completes nothing.
    if (!model_) {
      op_done(rk, op);
    } else if (kind == PacketKind::kData && sched_.protocol != coll::Protocol::kSimple) {
      send_done(rk, op);
    }
  });
}

void CollectiveEngine::start(coll::Schedule s, std::function<void()> on_done) {
  FABRICSIM_ASSERT(!running_, "engine: a collective is already running");
  FABRICSIM_ASSERT(size_t(s.ranks) == ranks_.size(), "engine: schedule rank count mismatch");
  sched_ = std::move(s);
  on_done_ = std::move(on_done);
  running_ = true;
  if (observer_) observer_->started(sched_, Scheduler::time());
  if (keep_inputs_ && functional()) inputs_ = data_;
  if (halted_) return;  // held until resume()
  begin();
}

void CollectiveEngine::prepare() {
  ranks_left_ = 0;
  // NCCL's protocol model (engine_protocol.cpp) runs at every fidelity: the flow level
  // delivers its messages too.
  model_ = sync_.fence_flag || sched_.protocol != coll::Protocol::kSimple;
  for (RankIo* e : ranks_) e->set_interleave(model_);
  for (size_t r = 0; r < ranks_.size(); ++r) {
    RankState& st = st_[r];
    const auto& ops = sched_.programs[r].ops;
    const uint32_t n = uint32_t(ops.size());
    st.state.assign(n, OpState{});
    std::vector<uint32_t> begin(n + 1, 0);  // CSR of dependents
    for (uint32_t i = 0; i < n; ++i) {
      OpState& os = st.state[i];
      os.waiting_deps = uint32_t(ops[i].deps.size());
      os.tag = ops[i].tag;
      os.count = ops[i].count;
      os.peer = ops[i].peer;
      os.kind = ops[i].kind;
      os.mode = ops[i].mode;
      for (uint32_t d : ops[i].deps) ++begin[d + 1];
    }
    for (uint32_t i = 0; i < n; ++i) begin[i + 1] += begin[i];
    st.dependents.assign(begin[n], 0);
    std::vector<uint32_t> fill(begin.begin(), begin.end() - 1);
    for (uint32_t i = 0; i < n; ++i)
      for (uint32_t d : ops[i].deps) st.dependents[fill[d]++] = i;
    for (uint32_t i = 0; i < n; ++i) {
      st.state[i].dep_begin = begin[i];
      st.state[i].dep_end = begin[i + 1];
    }
    st.remaining = n;
    st.waiting_recv.clear();
    st.arrived.clear();
    prepare_protocol(int(r));
    if (n) ++ranks_left_;
  }
  mark_slot_receives();
}

void CollectiveEngine::begin() {
  prepare();
  if (ranks_left_ == 0) {
    running_ = false;
    if (observer_) observer_->finished(sched_, Scheduler::time());
    if (on_done_) on_done_();
    return;
  }
  if (sync_.launch_latency_ps == 0) {
    launch();
    return;
  }
  launch_timer_->at(Scheduler::time() + sync_.launch_latency_ps, epoch_);
}

void CollectiveEngine::halt() {
  FABRICSIM_ASSERT(!halted_, "engine: halted twice");
  FABRICSIM_ASSERT(!model_, "engine: a failure bypass under the protocol model is not modelled");
  halted_ = true;
  ++epoch_;
  send_of_msg_.clear();
  in_flight_data_.clear();
  delayed_.clear();
  for (RankState& st : st_) {
    st.waiting_recv.clear();
    st.arrived.clear();
  }
}

void CollectiveEngine::resume(const std::vector<RankIo*>& ranks) {
  FABRICSIM_ASSERT(halted_ && ranks.size() == ranks_.size(), "engine: resume without halt");
  uint32_t max_id = 0;
  for (RankIo* e : ranks) max_id = std::max(max_id, e->id());
  rank_of_endpoint_.assign(max_id + 1, -1);
  for (size_t r = 0; r < ranks.size(); ++r) {
    const bool moved = ranks[r] != ranks_[r];
    ranks_[r] = ranks[r];
    rank_of_endpoint_[ranks[r]->id()] = int(r);
    if (moved) attach(int(r));
  }
  halted_ = false;
  if (!running_) return;  // the next schedule starts as usual
  if (functional() && !inputs_.empty()) data_ = inputs_;
  begin();
}

void CollectiveEngine::launch() {
  for (size_t r = 0; r < ranks_.size(); ++r) {
    const auto& ops = sched_.programs[r].ops;
    for (uint32_t i = 0; i < ops.size(); ++i)
      if (ops[i].deps.empty()) start_op(int(r), i);
  }
}

void CollectiveEngine::start_op(int rank, uint32_t op_index) {
  // The schedule's op is read only for the fields OpState does not copy.
  const coll::Op& op = sched_.programs[rank].ops[op_index];
  RankState& st = st_[rank];
  const OpState& os = st.state[op_index];
  switch (os.kind) {
    case coll::OpKind::kSend: {
      if (functional()) {
        const auto& buf = data_[rank];
        in_flight_data_[MatchKey{uint32_t(rank), uint32_t(os.peer), os.tag}] =
            std::vector<double>(buf.begin() + op.offset, buf.begin() + op.offset + os.count);
      }
      if (model_) {
        if (os.stream != UINT32_MAX)
          stream_ready(rank, op_index);
        else
          acquire(rank, op_index);
        break;
      }
      const uint64_t id =
          ranks_[rank]->send(ranks_[os.peer]->id(), os.count * elem_bytes_, os.tag);
      send_of_msg_[id] = {rank, op_index};
      break;
    }
    case coll::OpKind::kRecv: {
      if (model_ && os.stream != UINT32_MAX) {  // its thread block's turn
        stream_ready(rank, op_index);
        break;
      }
      post_recv(rank, op_index);
      break;
    }

    case coll::OpKind::kNvlsReduce: {
      // Completes when the switches' reduced data is back: a delivery of kind
      // kNvlsResult from this rank's own endpoint, matched like a receive from itself.
      const MatchKey k{uint32_t(rank), uint32_t(rank), op.tag};
      FABRICSIM_ASSERT(!st.arrived.count(k) && !st.waiting_recv.count(k),
                       "engine: two NVLS reductions share a tag");
      st.waiting_recv[k] = op_index;
      ranks_[rank]->send_group(PacketKind::kNvlsReq, op.count * elem_bytes_, op.tag);
      break;
    }
    case coll::OpKind::kNvlsStore: {
      if (functional()) {
        const auto& buf = data_[rank];
        const int first = coll::nvls_group_first(sched_, rank);
        for (int q = first; q < first + coll::nvls_group_size(sched_); ++q)
          in_flight_data_[MatchKey{uint32_t(rank), uint32_t(q), op.tag}] =
              std::vector<double>(buf.begin() + op.offset, buf.begin() + op.offset + op.count);
      }
      const uint64_t id =
          ranks_[rank]->send_group(PacketKind::kNvlsMcast, op.count * elem_bytes_, op.tag);
      send_of_msg_[id] = {rank, op_index};
      if (model_) st.fencing[MatchKey{uint32_t(rank), uint32_t(rank), op.tag}] = op_index;
      break;
    }
    case coll::OpKind::kCompute: {
      const uint64_t now = Scheduler::time();
      st.compute_busy_ps = std::max(now, st.compute_busy_ps) + op.duration_ps;
      st.compute_timer->at(st.compute_busy_ps, uint64_t(epoch_) << 32 | op_index);
      break;
    }
    case coll::OpKind::kDelay: {
      if (op.duration_ps == 0) {
        op_done(rank, op_index);
        break;
      }
      at(Scheduler::time() + op.duration_ps, rank, Act::kOpDone, op_index);
      break;
    }
  }
}

void CollectiveEngine::at(uint64_t t_ps, int rank, Act act, uint32_t a, uint64_t tag) {
  delayed_.push_back(Delayed{t_ps, delay_seq_++, rank, act, a, tag});
  std::push_heap(delayed_.begin(), delayed_.end(), std::greater<Delayed>());
  Scheduler::instance().set(delay_alarm_, delayed_.front().at_ps, hint(delayed_.front()));
}

// What the earliest timed action reads first: its op's state (a fence, a completion, a
// proxy's post) or nothing named. The calendar fetches it a few wake-ups ahead.
const void* CollectiveEngine::hint(const Delayed& d) const {
  switch (d.act) {
    case Act::kOpDone:
    case Act::kFenced:
    case Act::kNvlsFenced:
    case Act::kProxyPost:
    case Act::kProxyHead:
      return &st_[size_t(d.rank)].state[d.a];
    default:
      return nullptr;
  }
}

// A receive waits for its message (or takes it, if it is already complete).
void CollectiveEngine::post_recv(int rank, uint32_t op_index) {
  RankState& st = st_[size_t(rank)];
  const OpState& os = st.state[op_index];
  const MatchKey k{uint32_t(os.peer), uint32_t(rank), os.tag};
  auto it = st.arrived.find(k);
  if (it != st.arrived.end()) {
    if (--it->second == 0) st.arrived.erase(it);
    recv_arrived(rank, op_index);
  } else {
    FABRICSIM_ASSERT(!st.waiting_recv.count(k), "engine: two receives for one message");
    st.waiting_recv[k] = op_index;
  }
}

void CollectiveEngine::wake(uint32_t) {
  ++g_kernel_events;
  const uint64_t now = Scheduler::time();
  while (!delayed_.empty() && delayed_.front().at_ps <= now) {
    std::pop_heap(delayed_.begin(), delayed_.end(), std::greater<Delayed>());
    const Delayed d = delayed_.back();
    delayed_.pop_back();
    switch (d.act) {
      case Act::kOpDone: op_done(d.rank, d.a); break;
      case Act::kPolled: data_complete(d.rank, d.a, d.tag); break;
      case Act::kFenced: fenced(d.rank, d.a); break;
      case Act::kNvlsFenced: nvls_fenced(d.rank, d.a); break;
      case Act::kProxyPost: proxy_post(d.rank, d.a); break;
      case Act::kProxyHead: send_head(d.rank, d.a); break;
      case Act::kFinish: finish(); break;
    }
  }
  if (!delayed_.empty())
    Scheduler::instance().set(delay_alarm_, delayed_.front().at_ps, hint(delayed_.front()));
}

void CollectiveEngine::on_delivery(int rank, const RankIo::Delivery& d) {
  const int src = rank_of_endpoint_.at(d.src);
  FABRICSIM_ASSERT(src >= 0, "engine: delivery from an endpoint outside the collective");
  // NVLS results and replicas are the switch's answer: without the protocol model they
  // complete at once; with it they take the NVLS steps' fences and flags.
  if (d.kind == PacketKind::kNvlsResult || d.kind == PacketKind::kNvlsData) {
    if (model_)
      on_nvls_delivery(rank, d, uint32_t(src));
    else
      data_complete(rank, uint32_t(src), d.tag);
    return;
  }
  if (model_) {
    on_protocol_delivery(rank, d, uint32_t(src));
    return;
  }
  if (!sync_.fence_flag) {
    FABRICSIM_ASSERT(d.kind == PacketKind::kData, "engine: unexpected protocol message");
    data_complete(rank, uint32_t(src), d.tag);
    return;
  }
  switch (d.kind) {
    case PacketKind::kData:  // writes landed: acknowledge them to the writer
      ranks_[rank]->send(d.src, sync_.ack_bytes, d.tag, PacketKind::kAck);
      break;
    case PacketKind::kAck:   // the writer's fence completes: publish the flag
      ranks_[rank]->send(d.src, sync_.flag_bytes, d.tag, PacketKind::kFlag);
      break;
    case PacketKind::kFlag:  // the reader sees the flag: the data is complete
      data_complete(rank, uint32_t(src), d.tag);
      break;
    default:
      FABRICSIM_ASSERT(false, "engine: unexpected protocol message");
  }
}

void CollectiveEngine::data_complete(int rank, uint32_t src, uint64_t tag) {
  RankState& st = st_[rank];
  const MatchKey k{src, uint32_t(rank), tag};
  auto it = st.waiting_recv.find(k);
  if (it == st.waiting_recv.end()) {
    ++st.arrived[k];
    return;
  }
  const uint32_t op = it->second;
  st.waiting_recv.erase(it);
  recv_arrived(rank, op);
}

void CollectiveEngine::recv_arrived(int rank, uint32_t op_index) {
  const OpState& os = st_[size_t(rank)].state[op_index];
  if (model_ && os.kind == coll::OpKind::kRecv && os.stream != UINT32_MAX) {
    processed(rank, op_index);  // its thread block reads (and reduces) the data
    return;
  }
  if (os.kind == coll::OpKind::kRecv && os.mode == coll::RecvMode::kReduceSum) {
    const uint64_t done = ranks_[rank]->reduce(os.count * elem_bytes_);
    st_[rank].reduce_timer->at(done, uint64_t(epoch_) << 32 | op_index);
  } else {
    op_done(rank, op_index);
  }
}

void CollectiveEngine::op_done(int rank, uint32_t op_index) {
  RankState& st = st_[rank];
  OpState& os = st.state[op_index];
  const coll::Op& op = sched_.programs[rank].ops[op_index];  // read in functional runs only
  if (os.kind == coll::OpKind::kNvlsReduce && functional()) {
    // The switches summed every rank's copy of the range (read when the reads arrived;
    // no rank writes that range before this reduction completes).
    std::vector<double> sum(op.count, 0.0);
    const int first = coll::nvls_group_first(sched_, rank);
    for (int q = first; q < first + coll::nvls_group_size(sched_); ++q)
      for (size_t i = 0; i < op.count; ++i) sum[i] += data_[size_t(q)][op.offset + i];
    std::copy(sum.begin(), sum.end(), data_[rank].begin() + op.offset);
  }
  if (os.kind == coll::OpKind::kRecv && functional()) {
    auto it = in_flight_data_.find(MatchKey{uint32_t(op.peer), uint32_t(rank), op.tag});
    FABRICSIM_ASSERT(it != in_flight_data_.end(), "engine: functional data missing");
    double* dst = data_[rank].data() + op.offset;
    const std::vector<double>& src = it->second;
    FABRICSIM_ASSERT(src.size() == op.count, "engine: message size differs from receive");
    if (op.mode == coll::RecvMode::kReduceSum)
      for (size_t i = 0; i < src.size(); ++i) dst[i] += src[i];
    else
      std::copy(src.begin(), src.end(), dst);
    in_flight_data_.erase(it);
  }
  ++ops_completed_;
  os.done_ps = Scheduler::time();
  if (model_) protocol_op_done(rank, op_index);
  for (uint32_t k = os.dep_begin; k < os.dep_end; ++k) {
    const uint32_t dep = st.dependents[k];
    if (--st.state[dep].waiting_deps == 0) start_op(rank, dep);
  }
  if (--st.remaining == 0 && --ranks_left_ == 0) {
    if (sync_.completion_latency_ps > 0)
      at(Scheduler::time() + sync_.completion_latency_ps, rank, Act::kFinish);
    else
      finish();
  }
}

void CollectiveEngine::finish() {
  // Receive proxies still to post the receives of the last consumed slots: every send has
  // completed, nobody waits for those slots; they would only reach the next collective.
  const auto head = [](const Delayed& d) { return d.act == Act::kProxyHead; };
  if (std::any_of(delayed_.begin(), delayed_.end(), head)) {
    delayed_.erase(std::remove_if(delayed_.begin(), delayed_.end(), head), delayed_.end());
    std::make_heap(delayed_.begin(), delayed_.end(), std::greater<Delayed>());
  }
  running_ = false;
  if (observer_) observer_->finished(sched_, Scheduler::time());
  auto done = std::move(on_done_);
  on_done_ = nullptr;
  if (done) done();
}

}  // namespace fabricsim
