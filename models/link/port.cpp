#include "models/link/port.h"

#include <algorithm>
#include <cstddef>
#include <new>
#include <typeinfo>
#include <vector>

#include "models/core/errors.h"

namespace fabricsim {

using sc_core::sc_time;

Port::Port(sc_core::sc_module_name n, std::string display_name, PortOwner* owner, int index,
           bool rx_at_head, uint64_t rx_latency_ps)
    : cold_(std::make_unique<Cold>(n, *this, std::move(display_name))),
      tx(cold_->module.tx),
      rx(cold_->module.rx),
      owner_(owner),
      index_(index),
      rx_at_head_(rx_at_head),
      rx_owner_(owner),
      rx_index_(index),
      rx_latency_ps_(rx_latency_ps),
      level_(&cold_->own_level_) {
  // The hot lines of port.h, "Layout" (offsets from a 64-byte boundary: the class is
  // aligned to 64 by its first hot member).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
  constexpr size_t base = offsetof(Port, owner_);
  static_assert(base % 64 == 0 && alignof(Port) == 64);
  static_assert(offsetof(Port, tx_alarm_) + sizeof(Alarm) - base == 64);  // line 0
  static_assert(offsetof(Port, fw_delay_ps_) + 8 - base == 128);  // line 1
  static_assert(offsetof(Port, in_tx_) - base == 128 &&
                offsetof(Port, rx_transactions_) + 8 - base == 192);  // line 2
  static_assert(sizeof(Fifo<CreditReturn>) == 32);
  static_assert(offsetof(Port, arr_head_) - base == 192 &&
                offsetof(Port, up_waiting_) + 1 - base == 256);  // line 3
  static_assert(offsetof(Port, returns_) - base == 256 &&
                offsetof(Port, rx_index_) + sizeof(int) - base <= 320);  // line 4
  static_assert(offsetof(Port, credit_stall_ps_) - base >= 320 &&
                offsetof(Port, peer_rx_buffer_bytes_) + 8 - base <= 384);  // line 5
  static_assert(offsetof(Port, credits_) - base == 384);
  static_assert(sizeof(Port) <= 1024,
                "a Port is at most 1 KiB (port.h, Layout): put what no hop reads in Cold");
#pragma GCC diagnostic pop
  // And at run time, that the object is where its alignment says (an allocator that
  // ignored it would put every line across two).
  FABRICSIM_ASSERT(reinterpret_cast<uintptr_t>(&owner_) % 64 == 0,
                   cold_->display_name_ + ": port object not aligned to 64 bytes");
  tx.bind(*this);
  rx.bind(*this);
  Scheduler::instance();  // exists before the simulation starts
  // The transmitter's and receiver's wake-ups call their methods directly (Alarm::direct:
  // no read of the port's vtable pointer, in the line before the hot ones).
  tx_alarm_ = Alarm::direct(&Port::wake_tx);
  rx_alarm_ = Alarm::direct(&Port::wake_rx);
  credit_alarm_ = Alarm{this, kCredit};
}

Port::~Port() = default;

PortModule::PortModule(sc_core::sc_module_name n, Port& port)
    : sc_module(n), tx("tx"), rx("rx"), port_(port) {}

void PortModule::end_of_elaboration() { port_.end_of_elaboration(); }

const LinkParams& Port::link() const { return cold_->link_; }
const std::string& Port::display_name() const { return cold_->display_name_; }
const std::string& Port::peer_name() const { return cold_->peer_name_; }
size_t Port::held() const { return cold_->held_.size(); }
const Port::FaultCounters& Port::fault_counters() const { return cold_->f_; }

namespace {
// The ports' blocks (Port::operator new): ports are made during elaboration and live
// until the system goes; the blocks stay for the process's life (never freed, so that
// no port outlives its memory whatever the order of static destruction). 256 KiB: 256
// ports of ~1 KiB, so that a small system takes little and a large one few blocks.
struct PortArena {
  static constexpr size_t kBlock = 256 * 1024;
  std::vector<void*> blocks;  // only so that a leak checker sees the blocks reachable
  char* next = nullptr;
  char* end = nullptr;
  void* take(size_t bytes, size_t align) {
    char* at = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(next) + align - 1) &
                                       ~uintptr_t(align - 1));
    if (next == nullptr || at + bytes > end) {
      const size_t size = std::max(kBlock, bytes + align);
      void* b = ::operator new(size, std::align_val_t(4096));
      blocks.push_back(b);
      next = static_cast<char*>(b);
      end = next + size;
      at = next;
    }
    next = at + bytes;
    return at;
  }
};
}  // namespace

void* Port::operator new(std::size_t bytes, std::align_val_t al) {
  if (!kSideBySide) return ::operator new(bytes, al);
  static PortArena& arena = *new PortArena;  // reachable to the end: not a leak
  return arena.take(bytes, size_t(al));
}

void Port::operator delete(void* p, std::align_val_t al) noexcept {
  if (!kSideBySide) ::operator delete(p, al);
  // Otherwise the block keeps it (ports are not made and deleted on the packet path).
}

Port& Port::alarm_owner(Alarm& a, uint32_t what) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
  const size_t at = what == kTx ? offsetof(Port, tx_alarm_) : offsetof(Port, rx_alarm_);
#pragma GCC diagnostic pop
  return *reinterpret_cast<Port*>(reinterpret_cast<char*>(&a) - at);
}

void Port::wake_tx(Alarm& a) {
  ++g_kernel_events;
  alarm_owner(a, kTx).tx_method();
}

void Port::wake_rx(Alarm& a) {
  ++g_kernel_events;
  alarm_owner(a, kRx).rx_method();
}

void Port::wake(uint32_t what) {
  // Only the credit alarm comes here: the transmitter's and receiver's are direct
  // (wake_tx, wake_rx).
  FABRICSIM_ASSERT(what == kCredit, cold_->display_name_ + ": unexpected wake-up");
  ++g_kernel_events;
  credit_method();
}

namespace {
// The Port behind a bound interface when the call would reach Port's own member (the
// object's exact type is Port); nullptr otherwise (unbound, another class, or a subclass
// that may override the call).
template <typename If>
Port* plain_port(If* i) {
  if (!i) return nullptr;
  Port* q = dynamic_cast<Port*>(i);
  return q && typeid(*q) == typeid(Port) ? q : nullptr;
}
}  // namespace

void Port::end_of_elaboration() {
  fw_port_ = plain_port(tx.get_base_port().get_interface());
  bw_port_ = plain_port(rx.get_base_port().get_interface());
  // Both ends plain Ports: the receiver keeps the credit returns (returns_). Each end
  // decides from both sockets' bindings, so the two agree whichever runs first.
  if (fw_port_ && plain_port(fw_port_->rx.get_base_port().get_interface()) == this) {
    credit_host_ = fw_port_;
    credit_q_ = &fw_port_->returns_;
  }
  returns_here_ = bw_port_ && plain_port(bw_port_->tx.get_base_port().get_interface()) == this;
  if (fw_port_) {
    fw_delay_ps_ = latency_.value() + fw_port_->rx_latency_ps_;
    // The receiver's counters and arrivals (lines 2-3), which every transmission writes,
    // as an offset from the alarm (port.h, "Line 2"); none if it does not fit.
    const int64_t off = int64_t(reinterpret_cast<uintptr_t>(&fw_port_->in_tx_)) -
                        int64_t(reinterpret_cast<uintptr_t>(&tx_alarm_));
    if (off != 0 && off >= INT32_MIN && off <= INT32_MAX) tx_alarm_.also = int32_t(off);
  }
  rx_message_ = owner_->rx_reads_message();
}

void Port::attach(const LinkParams& link, const LinkParams& peer_link, uint64_t seed,
                  bool replay) {
  FABRICSIM_ASSERT(!attached_, cold_->display_name_ + " attached twice");
  FABRICSIM_ASSERT(link.rate_bps > 0 && link.vcs > 0 && link.framing,
                   cold_->display_name_ + ": bad link parameters");
  attached_ = true;
  cold_->link_ = link;
  cold_->peer_link_ = peer_link;
  latency_ = sc_time::from_value(link.latency_ps);
  // The peer's receive buffer is what this transmitter may fill.
  FABRICSIM_ASSERT(link.vcs <= kMaxVcs, cold_->display_name_ + ": more VCs than a port holds");
  vcs_ = link.vcs;
  peer_latency_ps_ = peer_link.latency_ps;
  peer_rx_buffer_bytes_ = peer_link.rx_buffer_bytes;
  fill_credits(peer_link.rx_buffer_bytes);
  retry_ = link.ber > 0 || replay;
  if (retry_) {
    FABRICSIM_ASSERT(link.ber < 1 && link.replay_buffer_bytes > 0,
                     cold_->display_name_ + ": bad link-level retry parameters");
    ack_wait_ps_ = 2 * link.latency_ps + link.ack_delay_ps;
  }
  layer_ = link.framing->make_link_layer(link, seed, cold_->display_name_);
  constexpr uint64_t kBitPsPerByte = 8 * 1000000000000ull;  // 8 bits x 1e12 ps per second
  plain_ = !retry_ && link.rate_bps <= kBitPsPerByte && kBitPsPerByte % link.rate_bps == 0 &&
           link.framing->plain(&pf_);
  ps_per_byte_ = plain_ ? kBitPsPerByte / link.rate_bps : 0;
}

void Port::tell_probe(uint64_t from_ps, uint64_t to_ps) { probe_->busy(from_ps, to_ps); }

void Port::tx_method() {
  const uint64_t t = now();
  if (fault_state_) {  // a failed link, or transactions it cut waiting for replay
    tx_faulted(t);
    return;
  }
  tx_step<false>(t);
}

template <bool kHeld>
void Port::tx_step(uint64_t t) {
  Scheduler& sched = Scheduler::instance();
  if (busy_until_ > t) {
    if (__builtin_expect(overtake_at_ == t, 0) && !kHeld) {  // kick_between's boundary
      overtake(t);
      return;
    }
    if (__builtin_expect(between_at_ == t, 0) && !kHeld) {  // kick_between_at's time
      between_at_ = UINT64_MAX;
      sched.set(tx_alarm_, busy_until_);
      kick_between(false, 0);
      return;
    }
    sched.set(tx_alarm_, busy_until_);
    if (__builtin_expect(multi_packet_sent_, 0)) wake_between(t);
    return;
  }
  Packet* p = kHeld ? cold_->held_.front() : owner_->tx_peek(index_);
  if (!p) return;  // idle until the owner kicks
  // Sending it pushes onto the receiver's arrival FIFO and counters (nb_transport_fw):
  // start fetching them while the credits and framing are worked out. (The calendar has
  // usually fetched them already, named in the alarm; this covers a wake-up it had no
  // lookahead for, the first ones of an activation.)
  if (fw_port_) {
    __builtin_prefetch(&fw_port_->arr_head_, 1);
    __builtin_prefetch(&fw_port_->in_tx_, 1);
  }
  if (p->head_ps > t) {
    sched.set(tx_alarm_, p->head_ps);
    return;
  }
  FABRICSIM_ASSERT(p->vc < vcs_, cold_->display_name_ + ": packet on a VC the link lacks");
  const uint64_t wire = __builtin_expect(plain_, 1) ? plain_prepare(*p) : layer_->prepare(*p);
  // Credit returns are absorbed only when the credits held do not cover the transaction:
  // absorbing can only add credits, so the decision is the one an absorb before every
  // step would give, and a step that has enough credits does not read the returns' FIFO
  // (the receiver's line: cold on a large fabric). Every 64 returns, what is due is
  // absorbed at once (release_rx, nb_transport_bw), which bounds the FIFO.
  uint64_t& credits = credit(p->vc);
  if (credits < wire) absorb_credits(t);
  if (credits < wire) {
    if (stall_since_ == UINT64_MAX) set_stall(t);
    if (replay_stall_since_ != UINT64_MAX) {  // now waiting for credits: count each wait once
      replay_stall_ps_ += t - replay_stall_since_;
      replay_stall_since_ = UINT64_MAX;
    }
    // Wake when the next credit return lands (or, if none is in flight, when one is sent).
    if (!credit_q_->empty()) sched.set(credit_alarm_, credit_q_->front().at_ps);
    return;
  }
  if (stall_since_ != UINT64_MAX) {
    credit_stall_ps_ += t - stall_since_;
    set_stall(UINT64_MAX);
  }
  if (retry_) {
    // Acks are absorbed lazily like credits; a full replay buffer waits for the next one.
    while (!acks_.empty() && acks_.front().at_ps <= t) replay_used_ -= acks_.pop().bytes;
    FABRICSIM_ASSERT(wire <= cold_->link_.replay_buffer_bytes,
                     cold_->display_name_ + ": transaction larger than the replay buffer");
    if (replay_used_ + wire > cold_->link_.replay_buffer_bytes) {
      if (replay_stall_since_ == UINT64_MAX) replay_stall_since_ = t;
      sched.set(tx_alarm_, acks_.front().at_ps);
      return;
    }
    if (replay_stall_since_ != UINT64_MAX) {
      replay_stall_ps_ += t - replay_stall_since_;
      replay_stall_since_ = UINT64_MAX;
    }
  }
  // The packet queued after it (the owner's queue links its packets through queue_next,
  // as a switch's egress does; nullptr or a stale link otherwise, harmless to prefetch):
  // the next step reads it first.
  const Packet* next = nullptr;
  if (kHeld) {
    cold_->held_.pop();
    ++cold_->f_.replayed;
  } else {
    next = p->queue_next;
    owner_->tx_pop(index_, p);
  }
  credits -= wire;

  const TxTiming tm = __builtin_expect(plain_, 1) ? plain_send(*p, t, wire) : layer_->send(*p, t, wire);
  if (__builtin_expect(p->npackets > 1, 0)) {  // a control packet may go between its packets
    host_start_ = t;
    host_end_ = tm.free_ps;
    // Time on the wire beyond the packets' own (a transaction that cuts through waits
    // for its packets to arrive): per packet, the wire idles between them and a packet
    // sent between them uses that first.
    host_slack_ = tm.free_ps - t - wire * ps_per_byte_;
    host_ready_head_ = p->head_ps;
    host_ready_tail_ = p->tail_ps;
    host_n_ = p->npackets;
    host_k_ = 0;
    host_src_ = p->src;
    host_dst_ = p->dst;
    host_msg_ = p->msg_id;
    host_pp_ = p->packet_payload;
    host_last_pp_ = p->last_packet_payload();
    multi_packet_sent_ = true;
  }
  p->head_ps = tm.head_ps;
  p->tail_ps = tm.tail_ps;
  if (retry_) {
    replay_used_ += wire;
    acks_.push(Ack{tm.tail_ps + ack_wait_ps_, wire});
  }
  p->link_bytes = uint32_t(wire);

  TxCounters& tc = __builtin_expect(fw_port_ != nullptr, 1) ? fw_port_->in_tx_ : own_tx_;
  tc.count(*p, wire, tm.free_ps - t);
  busy_until_ = tm.free_ps;
  if (__builtin_expect(probed_, 0)) tell_probe(t, tm.free_ps);

  if (__builtin_expect(fw_port_ != nullptr, 1)) {
    fw_port_->arrive(*p, fw_delay_ps_);  // = tx->nb_transport_fw (end_of_elaboration)
  } else {
    Phase ph = tlm::BEGIN_REQ;
    sc_time d = latency_;
    tx->nb_transport_fw(*p, ph, d);
  }
  // The next step starts with the next packet, last touched when it was queued (out of
  // the caches on a large fabric by then): hint it, for the calendar to fetch a few
  // wake-ups ahead (docs/performance.md).
  sched.set(tx_alarm_, tm.free_ps, next);
  if (__builtin_expect(multi_packet_sent_, 0)) wake_between(t);
}

tlm::tlm_sync_enum Port::nb_transport_fw(Packet& p, Phase& ph, sc_time& d) {
  FABRICSIM_ASSERT(ph == tlm::BEGIN_REQ, cold_->display_name_ + ": unexpected phase on rx");
  arrive(p, d.value() + rx_latency_ps_);
  return tlm::TLM_ACCEPTED;
}

void Port::arrive(Packet& p, uint64_t delay, uint64_t later_ps) {
  p.head_ps += delay;
  p.tail_ps += delay;
  const uint64_t at = due_of(&p);
  p.queue_next = nullptr;
  rx_payload_bytes_ += p.payload_bytes;
  rx_packets_ += p.npackets;
  ++rx_transactions_;
  if (__builtin_expect(arr_head_ && at < arr_tail_due_, 0)) {
    arrive_before(p, at, later_ps);  // it went between a transaction's packets
    return;
  }
  if (arr_head_) {
    // The previous arrival carries this one's due time (read when that one is delivered).
    Packet* last = arr_tail_;
    last->next_due_delta = due_delta(arr_tail_due_, at);
    last->queue_next = &p;
    arr_tail_ = &p;
    arr_tail_due_ = at;
    return;
  }
  arr_head_ = arr_tail_ = &p;
  arr_head_due_ = arr_tail_due_ = at;
  if (rx_message_) __builtin_prefetch(reinterpret_cast<const char*>(&p) + 64);  // as rx_method
  Scheduler::instance().set(rx_alarm_, at, &p);
}

void Port::arrive_before(Packet& p, uint64_t at, uint64_t later_ps) {
  // The arrivals in due order: p goes before the first one due after it. A packet that
  // went between the packets of a transaction (kick_between) is due before that
  // transaction's tail, at a receiver that takes arrivals at their tails; the transaction,
  // sent last, ends `later_ps` (p's wire time) later.
  Packet* prev = nullptr;
  uint64_t prev_due = 0;
  Packet* cur = arr_head_;
  uint64_t cur_due = arr_head_due_;
  while (cur_due <= at) {  // the tail is due after `at`: the walk ends before it
    prev = cur;
    prev_due = cur_due;
    const uint32_t d = cur->next_due_delta;
    cur = cur->queue_next;
    cur_due = d != kFarDue ? cur_due + d : due_of(cur);
  }
  if (cur == arr_tail_ && cur_due == cur->tail_ps) {
    cur->tail_ps += later_ps;
    cur_due += later_ps;
    arr_tail_due_ = cur_due;
  }
  p.queue_next = cur;
  p.next_due_delta = due_delta(at, cur_due);
  if (prev) {
    prev->queue_next = &p;
    prev->next_due_delta = due_delta(prev_due, at);
    return;
  }
  arr_head_ = &p;
  arr_head_due_ = at;
  if (rx_message_) __builtin_prefetch(reinterpret_cast<const char*>(&p) + 64);
  Scheduler::instance().set(rx_alarm_, at, &p);  // earlier than the old head's
}

void Port::kick_between(bool fifo, uint64_t ready_ps) {
  if (busy_until_ <= now()) {
    kick();
    return;
  }
  const uint64_t t = std::max(now(), ready_ps);
  uint32_t j = 0;
  const uint64_t b = overtake_boundary(t, fifo ? ready_before(t) : 0, &j);
  overtake_fifo_ = fifo;
  if (b == UINT64_MAX) return;  // it waits for the wire's wake-up at busy_until_
  if (overtake_at_ < now() || b < overtake_at_) {
    overtake_at_ = b;
    Scheduler::instance().set(tx_alarm_, b);
  }
}

void Port::kick_between_at(uint64_t t) {
  if (t <= now()) {
    kick_between(false, 0);
    return;
  }
  if (between_at_ > now() && between_at_ <= t) return;  // an earlier one is pending
  between_at_ = t;
  Scheduler::instance().set(tx_alarm_, t);
}

void Port::wake_between(uint64_t t) {
  // The transmitter's wake-up is one alarm, set to the earliest time asked: a pending
  // kick_between_at inside the wire's busy time is asked again after every later one.
  if (between_at_ > t && between_at_ < busy_until_ && between_at_ != UINT64_MAX)
    Scheduler::instance().set(tx_alarm_, between_at_);
}

uint32_t Port::ready_before(uint64_t t) const {
  // Per packet, the packets queued before a packet leave before it: those of the
  // transaction on the wire that were ready by `t`, evenly from its first to its last.
  if (t >= host_ready_tail_) return host_n_;
  if (t < host_ready_head_) return 0;
  return uint32_t(1 + (t - host_ready_head_) * (host_n_ - 1) /
                          (host_ready_tail_ - host_ready_head_));
}

uint64_t Port::overtake_boundary(uint64_t t, uint32_t after, uint32_t* j, uint32_t skip) const {
  if (host_end_ != busy_until_ || host_end_ <= t || !plain_ || fault_aware_ || fault_state_ ||
      !fw_port_ || host_n_ <= host_k_)
    return UINT64_MAX;
  const uint64_t left = host_n_ - host_k_;  // packets after host_start_
  const uint64_t span = host_end_ - host_start_;
  // The first boundary at or after t: host_start_ + span x i / left, i < left. Not the
  // transaction's own start (i = 0 before any packet went between its packets), and not
  // before its packet `after` (packets 0..after-1 go first); then `skip` packets later.
  uint64_t i = t > host_start_ ? ((t - host_start_) * left + span - 1) / span : 0;
  if (i == 0 && host_k_ == 0) i = 1;
  if (after > host_k_ + i) i = after - host_k_;
  i += skip;
  if (i >= left) return UINT64_MAX;
  *j = uint32_t(i);
  return host_start_ + span * i / left;
}

uint64_t Port::unstarted_payload(uint64_t t) const {
  if (busy_until_ <= t) return 0;  // idle: no read of the transaction's line
  if (host_end_ != busy_until_ || host_n_ <= host_k_ || host_start_ >= host_end_) return 0;
  // Packet i of the `left` after host_start_ begins at host_start_ + span x i / left
  // (overtake_boundary's boundaries): those begun by t are the i with span x i / left
  // <= t - host_start_.
  const uint64_t left = host_n_ - host_k_;
  const uint64_t span = host_end_ - host_start_;
  const uint64_t begun =
      t < host_start_ ? 0 : std::min(left, ((t - host_start_ + 1) * left + span - 1) / span);
  const uint64_t unstarted = left - begun;
  return unstarted == 0 ? 0 : (unstarted - 1) * host_pp_ + host_last_pp_;
}

void Port::overtake(uint64_t t) {
  Scheduler& sched = Scheduler::instance();
  overtake_at_ = UINT64_MAX;
  uint32_t skip = 0;
  Packet* p = owner_->tx_peek_between(index_, &skip);
  // Not between the packets of a transaction from its own source to its own destination:
  // a control packet was queued after them (a flag written after its data); nor between
  // those of its own message.
  if (p && p->npackets == 1 && p->vc < vcs_ &&
      (is_protocol_control(p->kind) ? !(p->src == host_src_ && p->dst == host_dst_)
                                    : p->msg_id != host_msg_)) {
    // First in, first out: after the packets that were ready when it was (its tail_ps).
    uint32_t j = 0;
    const uint64_t b = overtake_boundary(std::max(t, p->tail_ps),
                                         overtake_fifo_ ? ready_before(p->tail_ps) : 0, &j, skip);
    if (b != t) {  // a later boundary, or none left: the wire's wake-up at busy_until_
      if (b != UINT64_MAX) overtake_at_ = b;
      sched.set(tx_alarm_, std::min(b, busy_until_));
      return;
    }
    const uint64_t wire = plain_prepare(*p);
    uint64_t& credits = credit(p->vc);
    if (credits < wire) absorb_credits(t);
    if (credits >= wire) {
      owner_->tx_pop(index_, p);
      credits -= wire;
      const uint64_t ser = wire * ps_per_byte_;
      p->head_ps = p->tail_ps = t + ser;
      p->link_bytes = uint32_t(wire);
      // The transaction's rest leaves after it: the wire is busy `ser` longer, less what
      // the transaction left idle and counted as busy (told to a probe at the end, so that
      // its busy intervals do not overlap).
      const uint64_t idle = std::min(host_slack_, ser);
      host_slack_ -= idle;
      const uint64_t later = ser - idle;
      fw_port_->in_tx_.count(*p, wire, later);
      if (probed_ && later) tell_probe(busy_until_, busy_until_ + later);
      busy_until_ += later;
      host_end_ = busy_until_;
      host_k_ += j;
      host_start_ = t + ser;
      ++overtakes_;
      fw_port_->arrive(*p, fw_delay_ps_, later);
      // The next one may follow it at once, as per packet.
      overtake_at_ = t + ser;
      sched.set(tx_alarm_, overtake_at_);
      wake_between(t);
      return;
    }
  }
  sched.set(tx_alarm_, busy_until_);
  wake_between(t);
}

void Port::rx_method() {
  const uint64_t t = now();
  while (Packet* p = arr_head_) {
    if (arr_head_due_ > t) {
      // The next arrival's packet was last touched when it was sent, and an endpoint
      // reads its second line too (the message): start fetching them now, ahead of the
      // calendar's own prefetch of the hinted first line a few wake-ups before it is due,
      // so that what is read then comes from a nearer cache (docs/performance.md).
      __builtin_prefetch(p);
      if (rx_message_) __builtin_prefetch(reinterpret_cast<const char*>(p) + 64);
      Scheduler::instance().set(rx_alarm_, arr_head_due_, p);
      return;
    }
    // Unlink it before its owner takes it (a switch links it into a queue of its own). The
    // next arrival's due time is in this packet's line, read here anyway.
    Packet* next = p->queue_next;
    arr_head_ = next;
    if (next) {
      const uint32_t d = p->next_due_delta;
      arr_head_due_ = __builtin_expect(d != kFarDue, 1) ? arr_head_due_ + d : due_of(next);
      p->queue_next = nullptr;
    }
    // Its credits go back to the sender soon (a switch: when it crosses the crossbar):
    // start fetching the sender's credit state, cold on a large fabric, now (kept here
    // when returns_here_: nothing of the sender's to fetch).
    if (!returns_here_) {
      __builtin_prefetch(&peer_->stall_since_);
      __builtin_prefetch(&peer_->credit_fifo_);
    }
    rx_owner_->rx_arrive(rx_index_, p);
  }
}

void Port::release_rx(Packet* p, uint64_t after_ps) {
  Phase ph = CREDIT_RETURN;
  uint64_t at = now() + after_ps + peer_latency_ps_;
  if (at < last_release_at_) at = last_release_at_;
  last_release_at_ = at;
  if (__builtin_expect(returns_here_, 1)) {
    // = bw_port_->nb_transport_bw, with the FIFO kept here (returns_): in order by
    // construction (last_release_at_), and the same wake-up of a waiting transmitter.
    const bool was_empty = returns_.empty();
    returns_.push(CreditReturn{at, p->vc, p->link_bytes});
    if (was_empty && up_waiting_) Scheduler::instance().set(bw_port_->credit_alarm_, at);
    // The transmitter absorbs returns when it next transmits. One that has finished (a
    // GPU whose sends are done) would keep, to the end of the run, the return of every
    // packet still in this receiver's buffer when it stopped: up to the buffer in packets
    // per port (~112 MiB of FIFOs on NVL576 per packet). Every 64 returns, those already
    // due are absorbed now, as its next step would (credits only count at a step, which
    // first absorbs every due return): the FIFO then holds the returns in flight and at
    // most 64 more.
    if (__builtin_expect((returns_.size() & 63) == 0, 0) && returns_.front().at_ps <= now())
      bw_port_->absorb_credits(now());
    return;
  }
  sc_time d = sc_time::from_value(at - now());
  if (__builtin_expect(bw_port_ != nullptr, 1))
    bw_port_->Port::nb_transport_bw(*p, ph, d);  // = rx->nb_transport_bw (end_of_elaboration)
  else
    rx->nb_transport_bw(*p, ph, d);
}

tlm::tlm_sync_enum Port::nb_transport_bw(Packet& p, Phase& ph, sc_time& d) {
  FABRICSIM_ASSERT(ph == CREDIT_RETURN, cold_->display_name_ + ": unexpected phase on tx");
  const uint64_t at = now() + d.value();
  const bool was_empty = credit_fifo_.empty();
  FABRICSIM_ASSERT(was_empty || credit_last_at_ <= at,
                   cold_->display_name_ + ": credits returned out of order");
  credit_last_at_ = at;
  credit_fifo_.push(CreditReturn{at, p.vc, p.link_bytes});
  // As release_rx: what is due is absorbed every 64 returns, not left to pile up.
  if (__builtin_expect((credit_fifo_.size() & 63) == 0, 0) && credit_q_ == &credit_fifo_)
    absorb_credits(now());
  // Credits are absorbed lazily by the transmitter; an event is needed only while it waits.
  if (was_empty && stall_since_ != UINT64_MAX) Scheduler::instance().set(credit_alarm_, at);
  return tlm::TLM_ACCEPTED;
}

void Port::absorb_credits(uint64_t t) {
  Fifo<CreditReturn>& q = *credit_q_;
  while (!q.empty() && q.front().at_ps <= t) {
    const CreditReturn c = q.pop();
    uint64_t& credits = credit(c.vc);
    credits += c.bytes;
    FABRICSIM_ASSERT(credits <= peer_rx_buffer_bytes_,
                     cold_->display_name_ + ": more credits returned than the buffer holds");
  }
}

// A credit-free receiver's transmitter (set_credit_free_rx) starts with this many credits.
constexpr uint64_t kUnlimited = UINT64_MAX / 4;

uint64_t Port::idle_at() const {
  uint64_t t = std::max(busy_until_, last_release_at_);
  if (!credit_q_->empty()) t = std::max(t, credit_q_->at(credit_q_->size() - 1).at_ps);
  if (!acks_.empty()) t = std::max(t, acks_.at(acks_.size() - 1).at_ps);
  return t;
}

void Port::reset() {
  FABRICSIM_ASSERT(!arr_head_, cold_->display_name_ + ": reset with arrivals pending");
  absorb_credits(UINT64_MAX);
  for (uint32_t vc = 0; vc < vcs_; ++vc)
    FABRICSIM_ASSERT(credit(vc) == peer_rx_buffer_bytes_ ||
                         credit(vc) > kUnlimited / 2,  // credit-free rx
                     cold_->display_name_ + ": reset with credits out");
  while (!acks_.empty()) replay_used_ -= acks_.pop().bytes;
  set_stall(UINT64_MAX);
  replay_stall_since_ = UINT64_MAX;
  std::fill(std::begin(pause_until_), std::end(pause_until_), uint64_t(0));  // no pause carried
  host_end_ = overtake_at_ = UINT64_MAX;
  if (layer_) layer_->reset();
}

void Port::pause(uint8_t prio, uint64_t until_ps) {
  const uint64_t t = now();
  prio &= 7;
  ++pause_frames_rx_;
  uint64_t& u = pause_until_[prio];
  // Paused time is the union of pause intervals: drop the part of the old pause that the
  // new frame replaces, count the new one to its end.
  if (u > t) cold_->paused_ps_[prio] -= u - t;
  cold_->paused_ps_[prio] += until_ps > t ? until_ps - t : 0;
  u = until_ps;
  if (until_ps > t) pause_mask_ |= uint8_t(1u << prio);
  // Resume (or a shorter pause): the owner may offer that class again now. The owner sets
  // its own wake-up at a pause's end (paused_until).
  kick();
}

uint64_t Port::paused_ps(uint8_t prio) const {
  // Counted to the pause's end when it started; subtract what is still ahead.
  const uint64_t u = pause_until_[prio & 7], t = now();
  return cold_->paused_ps_[prio & 7] - (u > t ? u - t : 0);
}

void Port::credit_method() {
  if (stall_since_ != UINT64_MAX) kick();
}

void Port::b_transport(Packet&, sc_time&) {
  throw InternalError(cold_->display_name_ + ": fabric ports are non-blocking only");
}

Port::Counters Port::counters() const {
  const TxCounters& t = fw_port_ ? fw_port_->in_tx_ : own_tx_;
  Counters c;
  c.tx_payload_bytes = t.payload_bytes;
  c.tx_wire_bytes = t.wire_bytes;
  c.tx_packets = t.packets;
  c.tx_transactions = t.transactions;
  c.rx_payload_bytes = rx_payload_bytes_;
  c.rx_packets = rx_packets_;
  c.rx_transactions = rx_transactions_;
  c.busy_ps = t.busy_ps;
  c.credit_stall_ps = credit_stall_ps_;
  c.replay_stall_ps = replay_stall_ps_;
  static_cast<RetryCounters&>(c) = retry_counters();
  return c;
}

nlohmann::json Port::stats_json(uint64_t now_ps) const {
  const Counters c = counters();
  const RetryCounters& r = c;
  nlohmann::json j;
  j["peer"] = cold_->peer_name_;
  j["link_type"] = cold_->link_.type_name;
  j["tx_payload_bytes"] = c.tx_payload_bytes;
  j["tx_wire_bytes"] = c.tx_wire_bytes;
  j["tx_packets"] = c.tx_packets;
  j["tx_transactions"] = c.tx_transactions;
  j["rx_payload_bytes"] = c.rx_payload_bytes;
  j["rx_packets"] = c.rx_packets;
  j["busy_ps"] = c.busy_ps;
  j["utilisation"] = now_ps ? double(c.busy_ps) / double(now_ps) : 0.0;
  j["credit_stall_ps"] = c.credit_stall_ps;
  // Link-level retry on this port's transmit direction (docs/models.md).
  j["crc_errors"] = r.crc_errors;
  j["replays"] = r.replays;
  j["replay_wire_bytes"] = r.replay_wire_bytes;
  j["retry_ps"] = r.retry_ps;
  j["replay_stall_ps"] = c.replay_stall_ps;
  // Egress queue of a switch port; an endpoint's backlog is per endpoint (its DMA queue).
  j["queue_depth_max_bytes"] = level_->max();
  j["queue_depth_avg_bytes"] = level_->average(now_ps);
  // Packets this transmitter sent between the packets of a transaction (aggregated runs;
  // kick_between).
  if (overtakes_) j["packets_between"] = overtakes_;
  if (pause_frames_rx_) {  // PFC on this port's transmitter (links without PFC: no keys)
    j["pause_frames_rx"] = pause_frames_rx_;
    nlohmann::json per = nlohmann::json::object();
    for (uint8_t q = 0; q < 8; ++q)
      if (cold_->paused_ps_[q]) per[std::to_string(q)] = paused_ps(q);
    j["paused_ps"] = per;
  }
  if (fault_aware_) {  // only in runs with faults planned: other runs' results stay as they were
    const FaultCounters& f = cold_->f_;
    j["cut_transactions"] = f.cut_transactions;
    j["cut_payload_bytes"] = f.cut_payload_bytes;
    j["replayed_after_up"] = f.replayed;
    j["recovered_to_device"] = f.recovered;
    j["dropped_arrivals"] = f.dropped_arrivals;
    j["down_ps"] = f.down_ps + (f.down_since != UINT64_MAX ? now_ps - f.down_since : 0);
  }
  return j;
}

// The transmission of held transactions (faults; port_faults.cpp) is the same step.
template void Port::tx_step<true>(uint64_t t);

void bind_link(Port& a, Port& b, const LinkParams& link, uint64_t seed, bool replay) {
  a.attach(link, link, seed, replay);
  b.attach(link, link, seed, replay);
  a.peer_ = &b;
  b.peer_ = &a;
  // Into a credit-free receiver the transmitter never waits for credits (none come back).
  if (b.credit_free_rx_) a.fill_credits(kUnlimited);
  if (a.credit_free_rx_) b.fill_credits(kUnlimited);
  a.tx.bind(b.rx);
  b.tx.bind(a.rx);
  a.cold_->peer_name_ = b.display_name();
  b.cold_->peer_name_ = a.display_name();
}

}  // namespace fabricsim
