// The engine's protocol model (engine.h): streams, slots, fences, polls and the
// protocols' wire formats. Only schedules that run under the model come here.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "models/collectives/engine.h"
#include "models/core/errors.h"
#include "models/core/scheduler.h"
#include "models/core/types.h"

namespace fabricsim {

namespace {
constexpr uint32_t kNone = UINT32_MAX;
uint64_t now_ps() { return Scheduler::time(); }
}  // namespace

// Dense ids for the rank's connections (peer, stream, channel) and streams, per send op.
void CollectiveEngine::prepare_protocol(int rank) {
  RankState& st = st_[size_t(rank)];
  st.conns.clear();
  st.streams.clear();
  st.fencing.clear();
  st.slot_of.clear();
  st.rx_proxy_of.clear();
  st.rx_tail_ps.clear();
  if (!model_) return;
  const auto& ops = sched_.programs[size_t(rank)].ops;
  // A connection: (peer, stream, channel) (engine.h, "Slots").
  using ConnKey = std::tuple<int, int32_t, int32_t>;
  std::map<ConnKey, uint32_t> conns;
  std::map<ConnKey, uint32_t> rx_proxies;
  std::map<int32_t, uint32_t> streams;
  std::vector<uint32_t> last;  // per stream: its last op so far
  const uint32_t me = ranks_[size_t(rank)]->id();
  for (uint32_t i = 0; i < ops.size(); ++i) {
    const coll::Op& op = ops[i];
    if (op.kind == coll::OpKind::kSend) {
      st.state[i].conn =
          conns.try_emplace({op.peer, op.stream, op.channel}, uint32_t(conns.size()))
              .first->second;
      st.state[i].via_proxy = ranks_[size_t(rank)]->via_nic(ranks_[size_t(op.peer)]->id());
    }
    if (op.kind == coll::OpKind::kRecv && op.peer != rank &&
        ranks_[size_t(op.peer)]->via_nic(me)) {
      // The connection's receive proxy (engine.h, "Proxy").
      st.state[i].via_proxy = 1;
      st.rx_proxy_of[MatchKey{uint32_t(op.peer), uint32_t(rank), op.tag}] =
          rx_proxies.try_emplace({op.peer, op.stream, op.channel}, uint32_t(rx_proxies.size()))
              .first->second;
    }
    if (op.stream < 0 || (op.kind != coll::OpKind::kSend && op.kind != coll::OpKind::kRecv))
      continue;
    const uint32_t s = streams.try_emplace(op.stream, uint32_t(streams.size())).first->second;
    st.state[i].stream = s;
    if (st.streams.size() <= s) {
      st.streams.resize(s + 1);
      last.resize(s + 1, kNone);
    }
    if (last[s] == kNone)
      st.streams[s].next = i;
    else
      st.state[last[s]].stream_next = i;
    last[s] = i;
  }
  st.conns.resize(conns.size());
  st.rx_tail_ps.assign(rx_proxies.size(), 0);
}

void CollectiveEngine::stream_ready(int rank, uint32_t op) {
  RankState& st = st_[size_t(rank)];
  st.state[op].deps_met = 1;
  try_issue(rank, st.state[op].stream);
}

// A stream runs its ops strictly in program order: the thread block executes its steps
// one after the other, waiting for a step's input if it is not there yet.
void CollectiveEngine::try_issue(int rank, uint32_t stream) {
  RankState& st = st_[size_t(rank)];
  Stream& x = st.streams[stream];
  if (x.busy || x.next == kNone || !st.state[x.next].deps_met) return;
  x.busy = true;
  const uint32_t op = x.next;
  x.next = st.state[op].stream_next;
  if (st.state[op].kind == coll::OpKind::kSend)
    acquire(rank, op);
  else
    post_recv(rank, op);
}

void CollectiveEngine::processed(int rank, uint32_t op_index) {
  const OpState& op = st_[size_t(rank)].state[op_index];
  const uint64_t bytes = op.count * elem_bytes_;
  // The pass over the data is the next send's (transmit()); a reduction also takes the
  // rank's memory.
  uint64_t done = now_ps();
  if (op.mode == coll::RecvMode::kReduceSum)
    done = std::max(done, ranks_[size_t(rank)]->reduce(bytes));
  if (done > now_ps())
    at(done, rank, Act::kOpDone, op_index);
  else
    op_done(rank, op_index);
}

void CollectiveEngine::acquire(int rank, uint32_t op) {
  RankState& st = st_[size_t(rank)];
  Conn& c = st.conns[st.state[op].conn];
  if (sync_.slots > 0) {
    if (c.inflight >= sync_.slots) {
      c.waiting.push(op);
      return;
    }
    ++c.inflight;
  }
  transmit(rank, op);
}

void CollectiveEngine::transmit(int rank, uint32_t op_index) {
  RankState& st = st_[size_t(rank)];
  const OpState& op = st.state[op_index];
  const uint64_t data = op.count * elem_bytes_;
  // The thread block's pass over the data (read, reduce, store) runs at the channel's
  // rate: the stores stream out as it goes, the last of them no earlier than its end.
  const EndpointParams& gpu = ranks_[size_t(rank)]->params();
  const uint64_t ch_bps = gpu.channel_bps[int(sched_.protocol)];
  const uint64_t wire = coll::protocol_bytes(sched_.protocol, data);
  st.state[op_index].sm_free_ps = now_ps() + (ch_bps ? transfer_ps(wire, ch_bps) : 0);
  const MatchKey k{uint32_t(rank), uint32_t(op.peer), op.tag};
  if (st.state[op_index].via_proxy) {
    // Through the proxy (engine.h): the block writes the step into its buffer (Simple: and
    // fences it) and writes the tail; the send proxy posts the whole step after that, in
    // the connection's order.
    if (sched_.protocol == coll::Protocol::kSimple) st.state[op_index].sm_free_ps += gpu.fence_latency_ps;
    Conn& c = st.conns[st.state[op_index].conn];
    c.posted_ps = std::max(st.state[op_index].sm_free_ps + gpu.proxy_post_latency_ps, c.posted_ps);
    at(c.posted_ps, rank, Act::kProxyPost, op_index);
    if (sync_.slots > 0) st.slot_of[k] = st.state[op_index].conn;
    send_done(rank, op_index);
    return;
  }
  const uint32_t peer = ranks_[size_t(op.peer)]->id();
  const uint32_t cap =
      sched_.protocol == coll::Protocol::kLL ? ranks_[size_t(rank)]->params().ll_store_bytes : 0;
  const uint64_t id = ranks_[size_t(rank)]->send(peer, wire, op.tag, PacketKind::kData, 0,
                                                 st.state[op_index].sm_free_ps, cap);
  send_of_msg_[id] = {rank, op_index};
  if (sync_.slots > 0) st.slot_of[k] = st.state[op_index].conn;
  if (sched_.protocol != coll::Protocol::kSimple) return;
  st.fencing[k] = op_index;
}

// The send proxy posts a step: one RDMA write of the whole step, full packets; the op has
// completed already (its block moved on), so the write completes nothing when it leaves.
void CollectiveEngine::proxy_post(int rank, uint32_t op_index) {
  const OpState& op = st_[size_t(rank)].state[op_index];
  const uint64_t wire = coll::protocol_bytes(sched_.protocol, op.count * elem_bytes_);
  const uint64_t id = ranks_[size_t(rank)]->send(ranks_[size_t(op.peer)]->id(), wire, op.tag);
  send_of_msg_[id] = {rank, kNone};
}

// A consumed slot: the reader tells the writer (NCCL's head; over the NIC the receive
// proxy's clear-to-send).
void CollectiveEngine::send_head(int rank, uint32_t op_index) {
  const OpState& op = st_[size_t(rank)].state[op_index];
  ranks_[size_t(rank)]->send(ranks_[size_t(op.peer)]->id(), sync_.flag_bytes, op.tag,
                             PacketKind::kHead);
}

void CollectiveEngine::send_done(int rank, uint32_t op) {
  const uint64_t t = st_[size_t(rank)].state[op].sm_free_ps;
  if (t > now_ps())
    at(t, rank, Act::kOpDone, op);
  else
    op_done(rank, op);
}

void CollectiveEngine::on_protocol_delivery(int rank, const RankIo::Delivery& d, uint32_t src) {
  RankState& st = st_[size_t(rank)];
  const EndpointParams& gpu = ranks_[size_t(rank)]->params();
  switch (d.kind) {
    case PacketKind::kData:
      if (sched_.protocol == coll::Protocol::kSimple) {
        auto rx = st.rx_proxy_of.find(MatchKey{src, uint32_t(rank), d.tag});
        if (rx != st.rx_proxy_of.end()) {
          // Through the receive proxy: completion poll and flush, then the tail, in the
          // connection's order; the block polls the tail.
          uint64_t& tail = st.rx_tail_ps[rx->second];
          tail = std::max(now_ps() + gpu.proxy_poll_latency_ps + gpu.proxy_flush_latency_ps,
                          tail);
          at(tail + gpu.flag_latency_ps, rank, Act::kPolled, src, d.tag);
          return;
        }
        // Writes landed: acknowledge them.
        ranks_[size_t(rank)]->send(d.src, sync_.ack_bytes, d.tag, PacketKind::kAck);
        return;
      }
      break;  // LL/LL128: the lines carry their flags
    case PacketKind::kAck: {  // the writer's writes are acknowledged: its fence retires
      auto it = st.fencing.find(MatchKey{uint32_t(rank), src, d.tag});
      FABRICSIM_ASSERT(it != st.fencing.end(), "engine: ack of a write nobody fences");
      const uint32_t op = it->second;
      st.fencing.erase(it);
      if (gpu.fence_latency_ps)
        at(now_ps() + gpu.fence_latency_ps, rank, Act::kFenced, op);
      else
        fenced(rank, op);
      return;
    }
    case PacketKind::kFlag:
      break;
    case PacketKind::kHead:
      release_slot(rank, src, d.tag);
      return;
    default:
      FABRICSIM_ASSERT(false, "engine: unexpected protocol message");
  }
  // The reader polls the flag (or the lines): it sees it its poll latency after it landed.
  const uint64_t poll = sched_.protocol == coll::Protocol::kLL128 ? gpu.ll128_flag_latency_ps
                                                                  : gpu.flag_latency_ps;
  if (poll)
    at(now_ps() + poll, rank, Act::kPolled, src, d.tag);
  else
    data_complete(rank, src, d.tag);
}

// NVLS under the protocol model (engine.h). Tags of the library's schedules stay below
// 2^63 (Tags: channels x steps < 2^32 in the upper half), so the top bit marks flags.
void CollectiveEngine::on_nvls_delivery(int rank, const RankIo::Delivery& d, uint32_t src) {
  RankState& st = st_[size_t(rank)];
  const EndpointParams& gpu = ranks_[size_t(rank)]->params();
  if (d.kind == PacketKind::kNvlsResult) {
    at(now_ps() + gpu.fence_latency_ps + gpu.flag_latency_ps, rank, Act::kPolled, src, d.tag);
    return;
  }
  if (d.tag & kNvlsFlagBit) {  // a writer's flag: its replicas are in place
    const uint64_t tag = d.tag & ~kNvlsFlagBit;
    if (gpu.flag_latency_ps)
      at(now_ps() + gpu.flag_latency_ps, rank, Act::kPolled, src, tag);
    else
      data_complete(rank, src, tag);
    return;
  }
  if (src != uint32_t(rank)) return;  // a replica: its flag follows
  // The writer's own replica is back: its multicast writes are done, its fence retires.
  auto it = st.fencing.find(MatchKey{uint32_t(rank), uint32_t(rank), d.tag});
  FABRICSIM_ASSERT(it != st.fencing.end(), "engine: NVLS replica of a store nobody fences");
  const uint32_t op = it->second;
  st.fencing.erase(it);
  if (gpu.fence_latency_ps)
    at(now_ps() + gpu.fence_latency_ps, rank, Act::kNvlsFenced, op);
  else
    nvls_fenced(rank, op);
}

void CollectiveEngine::nvls_fenced(int rank, uint32_t op_index) {
  const OpState& op = st_[size_t(rank)].state[op_index];
  FABRICSIM_ASSERT((op.tag & kNvlsFlagBit) == 0, "engine: NVLS tag uses the flag bit");
  const uint64_t id = ranks_[size_t(rank)]->send_group(PacketKind::kNvlsMcast, sync_.flag_bytes,
                                                       op.tag | kNvlsFlagBit);
  send_of_msg_[id] = {rank, kNone};
  op_done(rank, op_index);
}

void CollectiveEngine::fenced(int rank, uint32_t op_index) {
  const OpState& op = st_[size_t(rank)].state[op_index];
  ranks_[size_t(rank)]->send(ranks_[size_t(op.peer)]->id(), sync_.flag_bytes, op.tag,
                             PacketKind::kFlag);
  send_done(rank, op_index);
}

void CollectiveEngine::protocol_op_done(int rank, uint32_t op_index) {
  RankState& st = st_[size_t(rank)];
  const OpState& op = st.state[op_index];
  if (op.kind == coll::OpKind::kRecv && op.frees_slot) {
    // The reader has consumed the slot: tell the writer (NCCL's head update); over the NIC
    // its receive proxy posts the receive first.
    const uint64_t post =
        st.state[op_index].via_proxy ? ranks_[size_t(rank)]->params().proxy_post_latency_ps : 0;
    if (post)
      at(now_ps() + post, rank, Act::kProxyHead, op_index);
    else
      send_head(rank, op_index);
  }
  const uint32_t stream = st.state[op_index].stream;
  if (stream != kNone) {
    st.streams[stream].busy = false;
    try_issue(rank, stream);
  }
}

// Receives of point-to-point sends free a slot when they complete; receives of multicast
// stores (NVLS replicas) take none.
void CollectiveEngine::mark_slot_receives() {
  if (!model_) return;
  std::set<std::pair<int, uint64_t>> stores;  // (writer, tag) of every kNvlsStore
  for (size_t r = 0; r < st_.size(); ++r)
    for (const coll::Op& op : sched_.programs[r].ops)
      if (op.kind == coll::OpKind::kNvlsStore) stores.emplace(int(r), op.tag);
  for (size_t r = 0; r < st_.size(); ++r) {
    const auto& ops = sched_.programs[r].ops;
    if (sync_.slots == 0) continue;
    for (size_t i = 0; i < ops.size(); ++i)
      st_[r].state[i].frees_slot = ops[i].kind == coll::OpKind::kRecv &&
                                   !stores.count({ops[i].peer, ops[i].tag});
  }
}

void CollectiveEngine::release_slot(int rank, uint32_t reader, uint64_t tag) {
  RankState& st = st_[size_t(rank)];
  auto it = st.slot_of.find(MatchKey{uint32_t(rank), reader, tag});
  FABRICSIM_ASSERT(it != st.slot_of.end(), "engine: slot release for no message");
  Conn& c = st.conns[it->second];
  st.slot_of.erase(it);
  FABRICSIM_ASSERT(c.inflight > 0, "engine: slot released twice");
  if (c.waiting.empty()) {
    --c.inflight;
    return;
  }
  transmit(rank, c.waiting.pop());  // the freed slot passes to the oldest waiting send
}

}  // namespace fabricsim
