// Runs collective programs (program.h) on endpoints. Timing comes only from the fabric
// and the endpoints: a kSend hands a message to the endpoint's DMA, a kRecv completes
// when the message has fully arrived (plus the reduction engine's time for a reduce), a
// kCompute occupies the rank's compute unit, a kDelay waits its duration without
// occupying anything. Ops start as soon as their dependencies are met, in program order.
// A schedule may hold several collectives at once (e.g. a training step composed by
// job.h): messages match on (source, destination, tag) only, so collectives on disjoint
// or overlapping rank groups run concurrently as long as their tags differ.
//
// The protocol model (sync fence_flag, or a schedule of protocol ll / ll128; off with sync
// data, the idealised transport): the GPU side of NCCL's kernels.
//  * The ops of one stream (Op::stream: a channel's thread block) run one at a time in
//    program order: a send occupies its stream until it completes, a receive from when
//    its turn comes until its data has been read.
//  * A send is the thread block's pass over its data at channel_bandwidth: its stores
//    stream out as the pass goes, its last transaction no earlier than the pass's end.
//    Simple: it completes when its fence has retired (the reader's ack is back, plus the
//    GPU's fence_latency) and its flag is written; LL/LL128: when its last line is on a
//    wire. LL/LL128 messages carry protocol_bytes of lines and no flag message.
//  * A receive sees its flag (Simple) or its last line (LL/LL128) its poll latency
//    (flag_latency, ll128_flag_latency) after it landed; a reduction also waits for the
//    rank's memory engine.
//  * Slots: a connection (sender, receiver, stream, channel: Op::stream, Op::channel)
//    holds at most SyncProtocol::slots messages the reader has not consumed; a send waits
//    for a free slot, and the reader frees one with a kHead message to the writer when its
//    receive completes. As in NCCL every channel has its own connection to each peer
//    (ncclChannel::peers, NCCL_STEPS slots each): a streamed schedule's stream is its
//    channel's thread block; a schedule without streams names the channel of each send
//    and receive, so its channels' steps to one peer do not share one connection's slots.
//  * NVLS (Simple, as NCCL's NVLS): a multicast store's fence retires fence_latency after
//    the writer's own replica is back; it then multicasts a flag (flag_bytes, tag with
//    kNvlsFlagBit) and completes; a member's receive sees that flag after its poll. A
//    reduction completes fence_latency + flag_latency after its result is back (the
//    handshake that tells it every member's input is in place).
//  * Proxy (NCCL's network transport): a step to a peer reached through a scale-out NIC
//    port is written into the sender's buffer by the thread block (its pass, and for
//    Simple its fence); the block's send then completes and the step waits for the
//    connection's send proxy, which posts it proxy_post_latency later (in order, one
//    connection's posts never overtake) as one whole RDMA write: store and forward per
//    step, full packets. LL/LL128: the reader polls the lines as they land. Simple: no ack,
//    fence or flag crosses the network; the connection's receive proxy sees the landed
//    step proxy_poll_latency later, flushes it (proxy_flush_latency) and writes the tail,
//    in order; the reader's poll sees it flag_latency later. A consumed slot of such a
//    connection reaches the writer proxy_post_latency later (the receive proxy posts the
//    receive, its clear-to-send crosses the network). Latencies of the writer's / reader's
//    endpoint (EndpointParams::proxy_*).
//  * completion_latency after the last op (whatever the model), the collective is seen
//    complete.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include <systemc>

#include "models/collectives/program.h"
#include "models/core/fifo.h"
#include "models/core/flat_map.h"
#include "models/core/scheduler.h"
#include "models/core/timer.h"
#include "models/collectives/rank_io.h"
#include "models/endpoint/endpoint.h"

namespace fabricsim {

class CollectiveEngine : public sc_core::sc_module, public Wakeable {
 public:
  static constexpr uint64_t kNvlsFlagBit = 1ull << 63;  // the tag of an NVLS flag

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

  // Failure bypass (docs/optical.md, "Failure bypass"): the job stops. halt() abandons the
  // running schedule (its ops start no more, its deliveries and timers are ignored from now
  // on) or, if none is running, holds the next one; resume() gives the ranks their (new)
  // endpoints and runs the schedule again from its start, on its original inputs
  // (functional mode: keep_inputs). The caller resumes only once nothing of the abandoned
  // run is in flight.
  void keep_inputs(bool on) { keep_inputs_ = on; }
  void halt();
  void resume(const std::vector<RankIo*>& ranks);
  bool halted() const { return halted_; }
  // Messages (and their bytes) of an abandoned run delivered while halted, and ignored.
  uint64_t ignored_deliveries() const { return ignored_deliveries_; }
  uint64_t ignored_delivery_bytes() const { return ignored_bytes_; }
  RankIo* rank_io(int rank) const { return ranks_.at(size_t(rank)); }
  // Simulated time (ps) at which op `op` of `rank` completed in the last schedule started;
  // UINT64_MAX if it has not (yet).
  uint64_t op_done_ps(int rank, uint32_t op) const { return st_.at(rank).state.at(op).done_ps; }

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
  // The matching tables on the message path: no allocation per message (flat_map.h).
  template <typename V>
  using MatchTable = FlatMap<MatchKey, V, MatchHash>;

  // One sender's connection to a reader (on one stream and channel): slots in use, sends
  // waiting.
  struct Conn {
    uint32_t inflight = 0;
    uint64_t posted_ps = 0;  // its send proxy's last post (via the NIC)
    Fifo<uint32_t> waiting;  // send ops, in the order they asked for a slot
  };
  // A stream's thread block: its sends and receives in program order, one at a time. Its
  // ops are chained through OpState::stream_next, so that the next one is found in the
  // line of the op just issued, not in a list of its own.
  struct Stream {
    bool busy = false;
    uint32_t next = UINT32_MAX;  // the next op to run; UINT32_MAX: none left
  };
  // An op's run-time state, in one record of one cache line: an event on an op touches one
  // line, not one line in each of ten per-op arrays (a 72-GPU ring has ~1M ops), nor one
  // here and one in the schedule. So the schedule's fields that the op's events read are
  // copied in (prepare()); the rest (offset, duration, deps) are read from the schedule
  // where they are needed once. On GB200 NVL72 (1 GiB ring, aggregated) each op event
  // otherwise missed twice: docs/performance.md, "The op's fields beside its state".
  struct alignas(64) OpState {
    uint64_t done_ps = UINT64_MAX;  // completion time, UINT64_MAX until then
    uint64_t sm_free_ps = 0;        // a send completes no earlier (channel rate)
    uint64_t tag = 0;               // coll::Op::tag
    uint64_t count = 0;             // coll::Op::count (elements)
    uint32_t waiting_deps = 0;      // deps not yet complete
    uint32_t dep_begin = 0, dep_end = 0;  // its dependents: dependents[dep_begin, dep_end)
    // Protocol model (defaults when it is off):
    uint32_t conn = UINT32_MAX;     // its Conn (sends)
    uint32_t stream = UINT32_MAX;   // its Stream (streamed sends and receives)
    uint32_t stream_next = UINT32_MAX;  // the next op of that stream, in program order
    int32_t peer = -1;              // coll::Op::peer
    coll::OpKind kind = coll::OpKind::kSend;       // coll::Op::kind
    coll::RecvMode mode = coll::RecvMode::kCopy;   // coll::Op::mode
    // Flags (zero in OpState{}):
    uint8_t deps_met : 1;           // a streamed op may run when its turn comes
    uint8_t frees_slot : 1;         // a receive of a point-to-point send
    uint8_t via_proxy : 1;          // a send or receive over the NIC (the proxy)
  };
  static_assert(sizeof(OpState) == 64, "OpState: one cache line");
  struct RankState {
    std::vector<OpState> state;        // per op
    std::vector<uint32_t> dependents;  // CSR (OpState::dep_begin, dep_end)
    uint32_t remaining = 0;
    uint64_t compute_busy_ps = 0;
    MatchTable<uint32_t> waiting_recv;  // receive started, message not yet in -> op
    MatchTable<uint32_t> arrived;       // message in before its receive started -> count
    std::unique_ptr<TimerQueue> reduce_timer, compute_timer;
    std::vector<Conn> conns;
    std::vector<Stream> streams;
    MatchTable<uint32_t> fencing;       // (this, reader, tag) -> Simple send awaiting its ack
    MatchTable<uint32_t> slot_of;       // (this, reader, tag) -> Conn of a message in a slot
    MatchTable<uint32_t> rx_proxy_of;   // (writer, this, tag) -> receive proxy, via the NIC
    std::vector<uint64_t> rx_tail_ps; // per receive proxy: its last tail write
  };
  // Timed actions, earliest first (ties in the order they were asked for): one Alarm for
  // all. kDelay ops, and the protocol model's latencies.
  enum class Act : uint8_t {
    kOpDone,   // op `a` of `rank` completes
    kPolled,   // rank sees the flag of message (src `a`, `tag`)
    kFenced,   // send op `a`'s fence retired: write its flag
    kNvlsFenced,  // multicast store op `a`'s fence retired: multicast its flag
    kProxyPost,   // send op `a`'s proxy posts its step to the NIC
    kProxyHead,   // receive op `a`'s proxy posts the receive of the slot it consumed
    kFinish,   // the collective is seen complete
  };
  struct Delayed {
    uint64_t at_ps, seq;
    int rank;
    Act act;
    uint32_t a;
    uint64_t tag;
    bool operator>(const Delayed& o) const {
      return at_ps != o.at_ps ? at_ps > o.at_ps : seq > o.seq;
    }
  };
  void wake(uint32_t) override;
  void at(uint64_t t_ps, int rank, Act act, uint32_t a = 0, uint64_t tag = 0);
  const void* hint(const Delayed& d) const;
  void start_op(int rank, uint32_t op);
  void post_recv(int rank, uint32_t op);
  void finish();
  // The protocol model (engine_protocol.cpp).
  bool model() const { return model_; }
  void prepare_protocol(int rank);
  void mark_slot_receives();
  void stream_ready(int rank, uint32_t op);    // a streamed op's deps are met
  void try_issue(int rank, uint32_t stream);   // the stream's next op, if it is free
  void acquire(int rank, uint32_t op);         // a slot for an issued send, or wait
  void transmit(int rank, uint32_t op);        // a send that has its slot: to the DMA
  void send_done(int rank, uint32_t op);       // complete at its channel-rate floor
  void processed(int rank, uint32_t op);       // a streamed receive's data is in: read it
  void on_protocol_delivery(int rank, const RankIo::Delivery& d, uint32_t src);
  void on_nvls_delivery(int rank, const RankIo::Delivery& d, uint32_t src);
  void nvls_fenced(int rank, uint32_t op);
  void fenced(int rank, uint32_t op);
  void polled(int rank, uint32_t src, uint64_t tag);
  void release_slot(int rank, uint32_t reader, uint64_t tag);
  void proxy_post(int rank, uint32_t op);
  void send_head(int rank, uint32_t op);
  // An op completed: a streamed send frees its stream, a receive the writer's slot.
  void protocol_op_done(int rank, uint32_t op);
  void op_done(int rank, uint32_t op);
  void recv_arrived(int rank, uint32_t op);
  void on_delivery(int rank, const RankIo::Delivery& d);
  void data_complete(int rank, uint32_t src_rank, uint64_t tag);
  void launch();
  void attach(int rank);  // the delivery and sent callbacks of rank's endpoint
  void prepare();         // per-rank state of sched_; sets ranks_left_
  void begin();           // prepare and launch sched_ (start, resume)

  std::vector<RankIo*> ranks_;
  std::vector<int> rank_of_endpoint_;
  uint32_t elem_bytes_;
  coll::Schedule sched_;
  std::vector<RankState> st_;
  FlatMap<uint64_t, std::pair<int, uint32_t>, IdentityHash> send_of_msg_;  // msg id -> (rank, op)
  MatchMap<std::vector<double>> in_flight_data_;  // functional mode: message contents
  std::vector<std::vector<double>> data_;
  std::function<void()> on_done_;
  coll::SyncProtocol sync_;
  std::unique_ptr<TimerQueue> launch_timer_;
  bool model_ = false;            // the protocol model runs this schedule
  std::vector<Delayed> delayed_;  // min-heap on (at_ps, seq)
  uint64_t delay_seq_ = 0;
  Alarm delay_alarm_;
  uint32_t ranks_left_ = 0;
  bool running_ = false;
  uint64_t ops_completed_ = 0;
  Observer* observer_ = nullptr;
  // Failure bypass: halted, the attempt's number (timers of an earlier one are ignored),
  // the inputs to run again from.
  bool halted_ = false, keep_inputs_ = false;
  uint32_t epoch_ = 0;
  std::vector<std::vector<double>> inputs_;
  uint64_t ignored_deliveries_ = 0, ignored_bytes_ = 0;
};

}  // namespace fabricsim
