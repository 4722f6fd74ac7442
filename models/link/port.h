// A bidirectional fabric port: the transmit half of one link direction and the receive
// half of the other. Ports of two devices are joined by binding each one's `tx` socket to
// the other's `rx` socket (see bind_link()).
//
// Protocol (the one mechanism for the whole project, docs/architecture.md):
//  * Data: the sender calls nb_transport_fw(pkt, BEGIN_REQ, delay) when the transaction
//    starts to serialise; `delay` is the link's propagation latency. The packet carries
//    head_ps/tail_ps, the times its first/last packet finish serialising at the sender;
//    the receiver adds `delay` to get arrival times. Returns TLM_ACCEPTED.
//  * Credits: the receiver owns an rx buffer of `rx_buffer_bytes` per VC, counted in wire
//    bytes. When a transaction leaves that buffer the receiver calls
//    nb_transport_bw(pkt, CREDIT_RETURN, delay) on its rx socket with delay = time until
//    the buffer space is free + propagation; the sender reads pkt.vc and pkt.link_bytes
//    during the call and does not keep the reference. A sender starts a transaction only
//    when it holds credits for all of its wire bytes. Between two plain Ports the receiver
//    keeps the returns instead (returns_, below): the same times, order and wake-ups.
// Serialisation is a busy-until time; in-flight transactions (linked through the packets,
// "Arrivals" below) and credits sit in FIFOs (arrival order equals send order on a link).
// Arrivals have one pending event; credit returns are absorbed when the transmitter next
// looks, and wake it only while it waits.
//
// Link-level retry (only when LinkParams::ber > 0; docs/models.md, "Link-level retry"):
// the port's LinkLayer draws the bit errors and says when each transaction's good copies
// arrive (go-back-N per packet, models/link/packet_link_layer.h; per FEC codeword on
// framing: ualink, models/ualink/stream_link_layer.h). Acks are timing on this port: a
// transaction's wire bytes stay in the replay buffer until its tail + 2 x latency +
// ack_delay, and a transaction starts only when the replay buffer holds all its wire bytes.
//
// Framing: the link type's Framing (LinkParams::framing) makes the port's LinkLayer, which
// gives each transaction's wire bytes and timing; the port holds no framing-specific code.
//
// Priority pause (PFC, 802.1Qbb; used by Ethernet switches and NICs): pause(prio, until)
// records the link partner's pause frame; the owner's tx_peek honours it: it offers no
// transaction whose traffic class (Packet::tc) is paused (urgent control packets,
// kUrgent, are never paused) and wakes itself at paused_until() (the port kicks it on
// every pause frame, so a resume takes effect at once). The transmit path itself costs
// nothing for links without PFC.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>

#include "models/core/errors.h"
#include "models/core/fifo.h"
#include "models/core/packet.h"
#include "models/core/protocol.h"
#include "models/core/scheduler.h"
#include "models/core/stats.h"
#include "models/link/link_layer.h"
#include "models/link/link_params.h"

namespace fabricsim {

class Port;

// Where transactions go that a link failure cut and that no link-level replay keeps
// (LossRecovery::kEndToEnd and kNone): the system's fault manager (fabrics/sim/faults.h)
// counts them lost and has the source send them again where the protocol does.
class LossHandler {
 public:
  virtual ~LossHandler() = default;
  // `p` (now owned by the handler) was lost at port `at` (on its link, or in its failed
  // device) for `cause`; `recovery` says what, if anything, sends it again.
  virtual void lost(const Port& at, LossRecovery recovery, Packet* p, LossCause cause) = 0;
};

class PortOwner {
 public:
  virtual ~PortOwner() = default;
  // Next transaction port `port` could send, or nullptr. The port calls tx_pop() when it
  // takes it. A transaction whose head_ps is in the future waits until then.
  virtual Packet* tx_peek(int port) = 0;
  virtual void tx_pop(int port, Packet* p) = 0;
  // A transaction of one packet that port `port` may send now between two packets of the
  // transaction of several on its wire (Port::kick_between), or nullptr. Per packet such
  // a packet waits for the packet on the wire and those queued before it, not for a whole
  // aggregated transaction. The port calls tx_pop() when it takes it; one it declines
  // stays first in line for tx_peek(). `*skip` (0 unless set): packets that per packet
  // would leave before it from the first boundary after it was ready (an endpoint's
  // round-robin turns of other messages; the transaction's packets stand for them).
  // Default: none.
  virtual Packet* tx_peek_between(int port, uint32_t* skip) {
    (void)port;
    (void)skip;
    return nullptr;
  }
  // A transaction arrived on `port` (at its head or tail time, per rx_at_head).
  virtual void rx_arrive(int port, Packet* p) = 0;
  // Does rx_arrive read the packet's message fields (its second cache line: msg_id,
  // inject_ps; an endpoint's delivery)? Then the port fetches that line too, ahead of the
  // arrival. Asked once, at end of elaboration. Default: no (a switch reads the first).
  virtual bool rx_reads_message() const { return false; }
  // Faults: a transaction this owner gave port `port`, which its link failure cut and its
  // link-level replay kept, comes back because the link is still down when the failure is
  // detected: the owner sends it again on another route (or holds it until it has one).
  // Owners of ports that never fail need not implement it.
  virtual void tx_recover(int port, Packet* p) {
    (void)p;
    throw InternalError("port " + std::to_string(port) + ": this device cannot take back a "
                        "transaction cut by a link failure");
  }
  // Faults: the link on `port` went down (`down`) or came back, after the port itself
  // reacted (Port::link_down/link_up). An owner whose queued traffic a down port cannot
  // keep (a lossy switch drops it) reacts here. Default: nothing (the traffic waits).
  virtual void link_changed(int port, bool down) {
    (void)port;
    (void)down;
  }
  // An owner that keeps port `port`'s egress level (Port::keep_level_at) learns the
  // observer to tell of its changes (nullptr: none), as Port::set_probe sets it.
  virtual void level_probe(int port, LevelProbe* probe) {
    (void)port;
    (void)probe;
  }
};

// Optional observer of a port's transmitter and egress queue (fabrics/sim/observe.h). A port
// without one pays one predictable branch per transaction.
class PortProbe : public LevelProbe {
 public:
  // The transmitter is serialising over [from_ps, to_ps).
  virtual void busy(uint64_t from_ps, uint64_t to_ps) = 0;
};

// A port's SystemC side: its module in the hierarchy ("gpu0.port_3") and its two TLM
// sockets, bound to the Port. Kept apart from the Port, which holds what the packet path
// reads, so that ports sit densely in memory (Port, "Layout").
class PortModule : public sc_core::sc_module {
 public:
  PortModule(sc_core::sc_module_name n, Port& port);
  tlm::tlm_initiator_socket<32, fabric_protocol_types> tx;
  tlm::tlm_target_socket<32, fabric_protocol_types> rx;
  // Resolves the port's hop calls (Port::end_of_elaboration).
  void end_of_elaboration() override;

 private:
  Port& port_;
};

class Port : public Wakeable,
             public tlm::tlm_fw_transport_if<fabric_protocol_types>,
             public tlm::tlm_bw_transport_if<fabric_protocol_types> {
 private:
  struct Cold;
  std::unique_ptr<Cold> cold_;  // first: tx and rx below refer into it

 public:
  using Phase = tlm::tlm_phase;
  // The sockets (in the port's PortModule, which has the port's SystemC name).
  tlm::tlm_initiator_socket<32, fabric_protocol_types>& tx;
  tlm::tlm_target_socket<32, fabric_protocol_types>& rx;

  // `display_name` is the user-facing name ("gpu0.port[3]"); `rx_at_head`: deliver
  // arrivals when the first packet is in (cut-through devices) instead of the last.
  // `rx_latency_ps` is added to every arrival (a switch's ingress pipeline).
  Port(sc_core::sc_module_name n, std::string display_name, PortOwner* owner, int index,
       bool rx_at_head, uint64_t rx_latency_ps = 0);
  ~Port() override;
  Port(const Port&) = delete;
  Port& operator=(const Port&) = delete;
  // Ports are allocated one after another from blocks of their own (a bump allocator;
  // memory of a deleted port is not reused), so that a large fabric's ports fill few
  // pages: docs/performance.md, "Dense ports". Builds with AddressSanitizer use the
  // global heap instead (kSideBySide false), which checks every use of a deleted port.
  static void* operator new(std::size_t bytes, std::align_val_t al);
  static void operator delete(void* p, std::align_val_t al) noexcept;
#if defined(__SANITIZE_ADDRESS__)
  static constexpr bool kSideBySide = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  static constexpr bool kSideBySide = false;
#else
  static constexpr bool kSideBySide = true;
#endif
#else
  static constexpr bool kSideBySide = true;
#endif

  // Elaboration: set the link this port transmits on and receives from, and make its
  // LinkLayer. `seed` feeds the port's bit-error stream (used only when link.ber > 0).
  // `replay`: keep the replay buffer and its acks even with ber 0 (a link with bit-error
  // bursts planned, set_ber()).
  void attach(const LinkParams& link, const LinkParams& peer_link, uint64_t seed = 1,
              bool replay = false);
  bool attached() const { return attached_; }
  const LinkParams& link() const;
  const std::string& display_name() const;
  // Does this port frame and time its transactions itself (the plain link layer, below)?
  bool plain_link_layer() const { return plain_; }
  // The display name of the port at the other end (bind_link).
  const std::string& peer_name() const;

  // Elaboration: arrivals of kind `k` are delivered when their first packet is in even
  // though rx_at_head is false (an endpoint answers an NVLS read as its first request
  // arrives: the read's tail still bounds the answer's, in the answer's tail_ps).
  void deliver_at_head(PacketKind k) { head_kinds_ |= 1u << unsigned(k); }

  // The owner has new work for this port.
  void kick() {
    const uint64_t t = now();
    if (busy_until_ <= t) Scheduler::instance().set(tx_alarm_, t);
  }
  // The owner has a transaction of one packet for this port (tx_peek_between): an
  // endpoint's control message, or one first in a switch's egress queue. While a
  // transaction of several packets is on the wire, it goes at that transaction's next
  // boundary between two packets, and the transaction's rest after it (the transmitter is
  // busy its wire time longer, less what the transaction left idle), as per packet;
  // otherwise as kick(). `fifo`: the owner's queue is first in, first out (a switch's
  // egress): per packet the packet would follow those of the transaction that were
  // queued before it, so it goes after the packets that were ready (evenly in the
  // transaction's head_ps..tail_ps as offered) by the time it was (its tail_ps).
  // `ready_ps`: it may not leave before then (its tail_ps). Not between the packets
  // of a transaction with its own source and destination (queued after them); not on
  // ports with faults planned, with a link layer of their own, or whose receiver is not a
  // plain Port. docs/architecture.md, "Control packets between a transaction's packets".
  void kick_between(bool fifo, uint64_t ready_ps);
  // What kick_between(false, 0) would do now, without doing it, for an owner that offers
  // one control packet to several ports (Endpoint::send): true if the port is idle (it
  // would kick); else false, with *boundary the boundary it would wake at, UINT64_MAX if
  // it would not (no boundary left: the wire's own wake-up) or if a wake-up at a boundary
  // is pending already (an earlier control packet's).
  bool offer_between(uint64_t* boundary) const {
    const uint64_t t = now();
    if (busy_until_ <= t) return true;
    uint32_t j = 0;
    *boundary = overtake_at_ != UINT64_MAX && overtake_at_ >= t
                    ? UINT64_MAX
                    : overtake_boundary(t, 0, &j);
    return false;
  }
  // Packets sent between the packets of a transaction (kick_between).
  uint64_t packets_between() const { return overtakes_; }
  // Payload of the packets of the transaction on the wire that have not begun to leave
  // by `t` (its packets leave evenly over its time on the wire, as kick_between's
  // boundaries): per packet they would still be queued at the owner. 0 unless a
  // transaction of several packets is on the wire. For an owner that weighs its outputs
  // by what they have queued (a switch's adaptive routing).
  uint64_t unstarted_payload(uint64_t t) const;
  // Has any port sent a transaction of several packets (aggregation)? Until then nothing
  // can go between packets, and an owner need not ask (a per-packet run never does).
  static bool multi_packet_sent() { return multi_packet_sent_; }
  // The owner will have work for this port at `t` (>= now): look then.
  void kick_at(uint64_t t) { Scheduler::instance().set(tx_alarm_, std::max(t, busy_until_)); }
  // The owner will have a packet of one for this port at `t` (> now) that may go between
  // the packets of the transaction then on the wire: kick_between(false, 0) then (the
  // earliest such time pending is kept).
  void kick_between_at(uint64_t t);
  // Prefetches (no effect on results) for an owner about to serve many ports in a row,
  // so that their cold lines load together rather than one after another: what
  // release_rx reads (the receiver's credit-return timing and its returns FIFO), and
  // what kick reads (the transmitter's line 0).
  void prefetch_release() const {
    __builtin_prefetch(&arr_head_);  // returns_here_, up_waiting_
    __builtin_prefetch(&returns_, 1);
  }
  void prefetch_kick() const { __builtin_prefetch(&busy_until_, 1); }
  // An owner that frees a frame's receive buffer as soon as the frame is in, on links whose
  // buffer covers the credit loop (Ethernet: checked by the kinds that do this), declares
  // it before binding: the transmitter into this port then keeps no credit accounting
  // (bind_link gives it unlimited credits) and the owner never calls release_rx. The
  // timing is the same (the credits would never bind); the credit returns' events are saved.
  void set_credit_free_rx() { credit_free_rx_ = true; }
  bool credit_free_rx() const { return credit_free_rx_; }
  // The owner freed `bytes` of rx buffer on `vc` at now + `after_ps`: return the credits.
  // Credits travel in order: a release that would overtake an earlier one (an owner that
  // frees buffers out of arrival order, e.g. the NVLS engine) is held back behind it.
  void release_rx(Packet* p, uint64_t after_ps = 0);

  // Priority flow control: the peer's pause frame for priority `prio` (0..7) arrived now;
  // no transaction of that priority may start before `until_ps` (now: resume); the owner
  // enforces it in tx_peek. A later frame replaces the earlier one's time, as 802.1Qbb's
  // quanta do.
  void pause(uint8_t prio, uint64_t until_ps);
  // Is priority `prio` paused now?
  bool paused(uint8_t prio) const { return pause_mask_ && pause_until_[prio & 7] > now(); }
  uint64_t paused_until(uint8_t prio) const { return pause_until_[prio & 7]; }
  // Pause frames received and time paused, per priority (the union of pause intervals).
  uint64_t pause_frames_rx() const { return pause_frames_rx_; }
  uint64_t paused_ps(uint8_t prio) const;

  uint64_t busy_until_ps() const { return busy_until_; }
  // Since when the transmitter has been waiting for credits (UINT64_MAX: it is not): for
  // the deadlock report.
  uint64_t credit_wait_since_ps() const { return stall_since_; }
  // Independent measurements (DeviceModel::idle_at): the time its transmitter is free and
  // every credit and ack it is owed is back; reset() then restores full credits, an empty
  // replay buffer and the link layer's carried remainders (nothing may be in flight).
  uint64_t idle_at() const;
  void reset();
  uint64_t rx_latency_ps() const { return rx_latency_ps_; }
  // The egress level (bytes queued for this transmitter) over time. A switch keeps it
  // beside its egress queue, in the line the queue's changes write anyway
  // (keep_level_at); a port whose owner keeps none has its own, always zero.
  const LevelStat& queue_stat() const { return *level_; }
  LevelStat& queue_stat() { return *level_; }
  // Elaboration: the owner keeps this port's egress level at `l` (it outlives the port's
  // use) and tells the observer of its changes (PortOwner::level_probe).
  void keep_level_at(LevelStat* l) { level_ = l; }
  // Closes the egress level at `now_ps` (the same level): an observed level tells its
  // observer of the time it held, as a change would.
  void close_level(uint64_t now_ps) { set_observed(*level_, probe_, now_ps, level_->level()); }
  // Observe this port's transmitter and queue (nullptr: stop). The probe outlives the run.
  void set_probe(PortProbe* p) {
    probe_ = p;
    probed_ = p != nullptr;
    owner_->level_probe(index_, p);
  }
  nlohmann::json stats_json(uint64_t now_ps) const;

  // This port's own counters; the link-level retry ones are its LinkLayer's.
  struct PortCounters {
    uint64_t tx_payload_bytes = 0, tx_wire_bytes = 0, tx_packets = 0, tx_transactions = 0;
    uint64_t rx_payload_bytes = 0, rx_packets = 0, rx_transactions = 0;
    uint64_t busy_ps = 0;          // time the transmitter was serialising
    uint64_t credit_stall_ps = 0;  // time work waited with too few credits
    uint64_t replay_stall_ps = 0;  // time work waited for replay-buffer space (ber > 0)
  };
  struct Counters : PortCounters, RetryCounters {};
  Counters counters() const;

  static uint64_t now() { return Scheduler::now(); }

  // ---- Faults (docs/architecture.md, "Faults"): the API any device kind's ports share. A
  // link fails as a whole (both directions): call link_down() on both of its ports at the
  // same instant (System::link_down does). Cold code: a port whose link never fails pays
  // one predictable test per transmission.
  //   link_down()  this transmitter stops now. A transaction whose last bit it had not
  //                sent is cut: removed from the peer's arrivals, its credits back here,
  //                then kept for replay (LossRecovery::kLinkReplay) or handed to the
  //                loss handler. Transactions fully serialised before the cut are on the
  //                wire and are delivered.
  //   link_up()    it may send again: kept transactions first, then its owner's.
  //   recover_held()  the failure was detected with the link still down: the kept
  //                transactions go back to the owner (PortOwner::tx_recover).
  //   drop_arrivals()  the device behind this port failed: every transaction still on
  //                its way in is lost (its credits go back upstream), and so is every one
  //                it kept for replay (drop_held).
  //   lose(p, cause)  the owner gives up `p` (queued for this port when it failed, or
  //                with no route after a fault): it goes to the loss handler with this
  //                port's link's recovery.
  void set_loss_handler(LossHandler* h) {
    loss_ = h;
    fault_aware_ = true;
  }
  void link_down();
  void link_up();
  void recover_held();
  void drop_arrivals();
  void drop_held();
  void lose(Packet* p, LossCause cause);
  //   cut_circuit(far, mirror_ps)  this transmitter's light goes through an optical
  //                circuit switch to the receiver `far`, and the circuit is switched away
  //                now without draining (docs/optical.md, "Immediate switch"): every
  //                transaction whose light had not all passed the mirrors (more than
  //                `pass_ps` before its tail reaches `far`... i.e. its tail at the mirrors
  //                is after now) is cut as link_down cuts: removed from far's arrivals,
  //                its credits back here, kept for replay or handed to the loss handler.
  //                Returns how many were cut. Call after link_down().
  uint64_t cut_circuit(Port& far, uint64_t pass_ps);
  void set_ber(double ber) {
    // A burst needs the link layer's error stream: from now on every transaction goes
    // through it (its serialiser has no remainder: the rate is whole ps per byte).
    plain_ = false;
    layer_->set_ber(ber);
  }
  bool link_is_down() const { return down_; }
  size_t held() const;
  // How long `p` would take to serialise here (ps), or 0 where the link layer decides
  // per transaction (replay, bit errors): fair completion's estimate of its service.
  uint64_t serialise_ps(const Packet& p) const { return plain_ ? plain_prepare(p) * ps_per_byte_ : 0; }
  struct FaultCounters {
    uint64_t cut_transactions = 0, cut_payload_bytes = 0;  // cut on this transmitter
    uint64_t replayed = 0;          // kept transactions sent again on this link
    uint64_t recovered = 0;         // kept transactions handed back to the owner
    uint64_t dropped_arrivals = 0;  // lost arriving at a failed device
    uint64_t down_ps = 0;           // time the link was down (closed intervals)
    uint64_t down_since = UINT64_MAX;
  };
  const FaultCounters& fault_counters() const;
  // End-of-run accounting: "" if every credit of the peer's receive buffer is back here or
  // on its way (credit-free receivers: nothing to check) and the replay buffer is empty
  // but for what acks on their way will free; otherwise what is missing.
  std::string credits_check() const;
  // Credit returns sent to this transmitter that it has not absorbed yet (due or on their
  // way): at most those in flight and 64 more (release_rx).
  size_t credit_returns_held() const { return credit_q_->size(); }

  // tlm interfaces
  tlm::tlm_sync_enum nb_transport_fw(Packet& p, Phase& ph, sc_core::sc_time& d) override;
  tlm::tlm_sync_enum nb_transport_bw(Packet& p, Phase& ph, sc_core::sc_time& d) override;
  void b_transport(Packet&, sc_core::sc_time&) override;
  bool get_direct_mem_ptr(Packet&, tlm::tlm_dmi&) override { return false; }
  unsigned int transport_dbg(Packet&) override { return 0; }
  void invalidate_direct_mem_ptr(sc_dt::uint64, sc_dt::uint64) override {}

  void wake(uint32_t what) override;

  // Resolves the hop's calls (below); its PortModule calls it once, at SystemC's end of
  // elaboration (after every binding).
  void end_of_elaboration();

 private:
  friend void bind_link(Port& a, Port& b, const LinkParams& link, uint64_t seed, bool replay);
  enum : uint32_t { kTx, kRx, kCredit };
  void tx_method();
  // One transmission attempt from the owner's queue, or (kHeld) from the transactions a
  // link failure cut and the replay kept.
  template <bool kHeld>
  void tx_step(uint64_t t);
  void tx_faulted(uint64_t t);
  // Removes the transactions the peer had not finished sending at `t` (its link fails);
  // returns them, last sent last.
  std::vector<Packet*> cut_arrivals(uint64_t t);
  void rx_method();
  // A transaction arrives `delay_ps` after it was sent (nb_transport_fw: the TLM delay
  // plus rx_latency_ps_).
  // `later_ps`: p went between the packets of the transaction sent before it (kick_between),
  // which therefore ends that much later than it said when sent; a receiver that takes
  // that transaction at its tail moves it (arrive_before). A receiver that took it at its
  // head already (a switch) keeps the earlier tail: by p's wire time at most.
  void arrive(Packet& p, uint64_t delay_ps, uint64_t later_ps = 0);
  void arrive_before(Packet& p, uint64_t at, uint64_t later_ps);  // due before the last
  void credit_method();
  static void wake_tx(Alarm& a);  // tx_alarm_'s wake-up: tx_method()
  static void wake_rx(Alarm& a);  // rx_alarm_'s wake-up: rx_method()
  // The port whose tx_alarm_ (what == kTx) or rx_alarm_ (kRx) `a` is.
  static Port& alarm_owner(Alarm& a, uint32_t what);
  // kick_between: the next boundary at or after `t` between two packets of the transaction
  // on the wire where a packet may go, after its first `after` packets
  // (UINT64_MAX: none), and that boundary's index among the packets left after
  // host_start_ (in *j).
  uint64_t overtake_boundary(uint64_t t, uint32_t after, uint32_t* j, uint32_t skip = 0) const;
  // How many packets of the transaction on the wire were ready to leave by `t`.
  uint32_t ready_before(uint64_t t) const;
  // The wake-up at a boundary kick_between chose: sends the owner's packet there.
  void overtake(uint64_t t);
  void wake_between(uint64_t t);  // sets the wake-up for a pending kick_between_at
  // The plain link layer (plain_): FramedLinkLayer's prepare() and its send() without bit
  // errors, with this port's constants.
  uint64_t plain_prepare(const Packet& p) const {
    if (p.npackets <= 1) return pf_.wire(p.payload_bytes);
    return uint64_t(p.npackets - 1) * pf_.wire(p.packet_payload) +
           pf_.wire(p.last_packet_payload());
  }
  TxTiming plain_send(const Packet& p, uint64_t t, uint64_t wire) const {
    const uint64_t ser = wire * ps_per_byte_;
    if (p.npackets <= 1) {
      const uint64_t end = std::max(t + ser, p.tail_ps + ser);
      return TxTiming{end, end, end};
    }
    TxTiming tm;
    tm.tail_ps = std::max(t + ser, p.tail_ps + pf_.wire(p.last_packet_payload()) * ps_per_byte_);
    tm.free_ps = tm.tail_ps;
    tm.head_ps = t + pf_.wire(p.packet_payload) * ps_per_byte_;
    return tm;
  }
  void absorb_credits(uint64_t t);
  // The credits held for `vc` (bytes the peer's buffer can still take on it).
  uint64_t& credit(uint32_t vc) { return vc ? credits_[vc] : credit0_; }
  uint64_t credit(uint32_t vc) const { return vc ? credits_[vc] : credit0_; }
  void fill_credits(uint64_t bytes) {
    for (uint32_t vc = 0; vc < vcs_; ++vc) credit(vc) = bytes;
  }
  // Every change of stall_since_ goes through here (up_waiting_ mirrors it).
  void set_stall(uint64_t since) {
    stall_since_ = since;
    if (credit_host_) credit_host_->up_waiting_ = since != UINT64_MAX;
  }
  [[gnu::cold, gnu::noinline]] void tell_probe(uint64_t from_ps, uint64_t to_ps);
  RetryCounters retry_counters() const {
    return layer_ ? layer_->retry_counters() : RetryCounters{};  // none before attach()
  }
  struct CreditReturn {
    uint64_t at_ps;
    uint32_t vc;
    uint32_t bytes;
  };
  // Cold paths (faults): the arrivals in order, and cutting the list after its first `n`.
  std::vector<Packet*> arrival_list() const;
  void keep_arrivals(size_t n);
  // The due time of an arrival (head or tail, per rx_at_head and deliver_at_head), as
  // pushed. On one link a transaction's head comes after the previous one's tail, so
  // mixing the two keeps the arrivals in order.
  // The due time `to` as a delta from `from` (<= to) for Packet::next_due_delta.
  static uint32_t due_delta(uint64_t from, uint64_t to) {
    return to >= from && to - from < kFarDue ? uint32_t(to - from) : kFarDue;
  }
  uint64_t due_of(const Packet* p) const {
    return rx_at_head_ || (head_kinds_ >> unsigned(p->kind) & 1u) ? p->head_ps : p->tail_ps;
  }
  struct Ack {  // the replay buffer frees `bytes` at `at_ps`
    uint64_t at_ps;
    uint64_t bytes;
  };

  // Layout: what a hop reads and writes on this port sits in 64-byte lines of its own,
  // grouped by the step that touches them, from a 64-byte boundary (alignas on the first
  // member; C++17 aligned new), the rest after them. A large fabric has tens of thousands
  // of ports, far more than the caches hold, so every line a hop touches on a port is a
  // likely miss (docs/performance.md). The line of each group is checked at compile time
  // (port.cpp). What no hop reads (the SystemC module and its sockets, names, link
  // parameters, fault and PFC records) is in Cold, a heap object of its own, and ports are
  // allocated one after another (operator new): a Port is 1 KiB, four to a 4 KiB page,
  // where with the module inside it was 2.4 KiB, each port's hot lines in a page of their
  // own (docs/performance.md, "Dense ports").
  static constexpr uint32_t kMaxVcs = 16;  // the vcs parameter's range
  // One direction's transmit counters (PortCounters' tx_ fields and busy_ps).
  struct TxCounters {
    uint64_t payload_bytes = 0, wire_bytes = 0, packets = 0, transactions = 0;
    uint64_t busy_ps = 0;  // time the transmitter was serialising
    void count(const Packet& p, uint64_t wire, uint64_t busy) {  // one transaction sent
      payload_bytes += p.payload_bytes;
      wire_bytes += wire;
      packets += p.npackets;
      ++transactions;
      busy_ps += busy;
    }
  };
  // Line 0, the transmitter's step: whose packet, when free, where credits come back,
  // where the packet goes, how long it takes, its wake-up.
  alignas(64) PortOwner* owner_;
  uint64_t busy_until_ = 0;
  Fifo<CreditReturn>* credit_q_ = &credit_fifo_;  // this transmitter's returns
  // The hop's calls. `tx` and `rx` call whatever they are bound to; when that is a plain
  // Port (its exact type: no subclass overrides its receive), the call goes to it without
  // the socket's interface pointer and the vtable (cold loads on a large fabric).
  // Resolved from the sockets' own bindings at end of elaboration (end_of_elaboration),
  // so a device that binds sockets to something else (an OCS's LightPort) is called
  // through the socket as before. nullptr: through the socket.
  Port* fw_port_ = nullptr;  // what tx->nb_transport_fw calls
  uint64_t ps_per_byte_ = 0;  // 8e12 / link_.rate_bps, exact (plain_ only)
  Alarm tx_alarm_;
  // Line 1, the rest of the transmitter's step.
  int index_;
  uint32_t vcs_ = 0;  // link_.vcs
  // Faults (cold): fault_state_ is the one flag the transmit path tests.
  bool fault_state_ = false;  // down_ or held_ not empty
  // The plain link layer (plain_): a link without link-level retry whose framing is
  // PlainFraming's rule (Framing::plain) and whose rate is a whole number of ps per byte.
  // The port then frames and times its transactions itself, with the framing's constants
  // here, as the generic per-packet link layer (FramedLinkLayer) would, byte for byte:
  // no call into layer_, a separate heap object whose vtable is a cold load per hop on a
  // large fabric (docs/performance.md, 2026-12-02 afternoon). Other links call layer_.
  bool plain_ = false;
  bool retry_ = false;           // replay buffer and acks (false when ber == 0)
  bool credit_free_rx_ = false;  // see set_credit_free_rx()
  uint8_t pause_mask_ = 0;  // PFC: priorities that were ever paused (pause_until_ may be past)
  bool probed_ = false;     // probe_ != nullptr
  PlainFraming pf_;
  uint64_t stall_since_ = UINT64_MAX;
  // VC 0's credits (credit(0)): every link has it, most have only it, and the step that
  // spends them reads them here, in the line the calendar fetches with the transmitter's
  // alarm, not in lines 6-7 (a cold line per hop on a large fabric; docs/performance.md).
  uint64_t credit0_ = 0;
  // fw_port_ only: this link's latency plus the receiver's rx_latency_ps_, the delay
  // arrive() adds (the receiver's constant, read here and not in its line 5).
  uint64_t fw_delay_ps_ = 0;
  // Line 2: the counters of the direction that arrives here, both written by the hop that
  // crosses it, so that a hop writes one counter line, not one at each end (the
  // transmitter's own was a cold line per hop on a large fabric: ~40% of tx_step's time on
  // NVL576; docs/performance.md). in_tx_ are the transmit counters of the port that sends
  // here through fw_port_ (a transmitter without fw_port_ keeps its own, own_tx_);
  // counters() reads them from there. The hop then writes this line and the next (the
  // arrivals) of the receiver, and the transmitter's alarm names them
  // (tx_alarm_.also, end_of_elaboration), so that the calendar fetches them a few
  // wake-ups ahead with the alarm: without that, they were the transmitter's step's
  // longest waits (a pointer away from the lines the calendar fetched).
  TxCounters in_tx_;
  uint64_t rx_payload_bytes_ = 0, rx_packets_ = 0, rx_transactions_ = 0;
  // Line 3, the arrivals: the transactions on their way in, linked through the packets
  // (Packet::queue_next: a packet on a link is in no switch queue), in send order. The
  // port holds the first one's due time; each packet carries the next one's, as a delta
  // from its own (Packet::next_due_delta), in the line the delivery reads anyway. So a
  // look at an arrival not yet due loads no packet, and the next due time is never a
  // dependent load of another packet (with only the packets' own times it was: DGX H100
  // 9-25% slower; with a ring of (due, packet) slots, the send writes and the arrival
  // reads a slot that is cold on a large fabric; docs/performance.md, 2026-12-02).
  alignas(64) Packet* arr_head_ = nullptr;
  Packet* arr_tail_ = nullptr;
  uint64_t arr_head_due_ = 0;  // due time of arr_head_
  uint64_t arr_tail_due_ = 0;  // due time of arr_tail_
  Alarm rx_alarm_;
  uint32_t head_kinds_ = 0;      // [PacketKind] bits: delivered at the head (deliver_at_head)
  bool rx_at_head_;
  bool rx_message_ = false;      // owner_->rx_reads_message()
  bool returns_here_ = false;    // this receiver keeps the credit returns (returns_)
  bool up_waiting_ = false;      // bw_port_ waits for credits (returns_here_ only)
  // Line 4. Credit returns are kept by the receiver that sends them when both ends of
  // the link are plain Ports (returns_here_): a return then writes only the receiving
  // port's own block, which the release reads anyway, not the transmitter's (a cold port
  // block per hop on a large fabric: ~70% of nb_transport_bw's time on NVL576). The
  // transmitter reads them through credit_q_ when its credits run short (tx_step).
  // up_waiting_ mirrors the
  // transmitter's stall_since_ != UINT64_MAX (set_stall), for the wake-up a return gives
  // a waiting one. Other bindings (an OCS's LightPort in between) return credits through
  // the socket into the transmitter's own credit_fifo_, as before.
  // The arrival's hand-over reads owner_ and index_ (lines 0 and 1), and a release the
  // credit return's timing: their copies, and the timing, sit here in the line after the
  // arrival's alarm, which the calendar fetches with it (an endpoint releases as it takes
  // the arrival).
  Fifo<CreditReturn> returns_;   // credits this receiver returned to bw_port_, in order
  PortOwner* const rx_owner_;    // = owner_
  uint64_t last_release_at_ = 0;  // latest credit-return time sent upstream
  uint64_t peer_latency_ps_ = 0;  // peer_link_.latency_ps (credit returns travel it)
  const int rx_index_;           // = index_
  // Line 5: the transmitter's stall times (written when a stall ends), the receiver's
  // constants.
  uint64_t credit_stall_ps_ = 0;  // time work waited with too few credits
  uint64_t replay_stall_ps_ = 0;  // time work waited for replay-buffer space (ber > 0)
  uint64_t rx_latency_ps_;
  Port* credit_host_ = nullptr;        // the receiver whose returns_ credit_q_ is, or nullptr
  Port* bw_port_ = nullptr;            // what rx->nb_transport_bw calls
  Port* peer_ = nullptr;
  uint64_t peer_rx_buffer_bytes_ = 0;  // peer_link_.rx_buffer_bytes (full credits)
  // Lines 6-7: credits of VCs 1 to vcs_ - 1 (credit(vc); VC 0's are credit0_, line 1).
  alignas(64) uint64_t credits_[kMaxVcs] = {};
  // Line 8 on: the link layer of a port that is not plain_, the transmitter's own returns
  // (through a socket).
  std::unique_ptr<LinkLayer> layer_;  // made by link_.framing for this port
  Fifo<CreditReturn> credit_fifo_;
  // The at_ps of the credit return pushed last: the in-order check of nb_transport_bw reads
  // it here, beside the FIFO's header, instead of the FIFO's last entry (a cold heap line
  // per credit return on a large fabric: ~60% of that call's time on NVL576).
  uint64_t credit_last_at_ = 0;
  uint64_t replay_stall_since_ = UINT64_MAX;
  Alarm credit_alarm_;

  // --- the rest (the coldest are in Cold) ---
  TxCounters own_tx_;  // this transmitter's counters when it has no fw_port_ (in_tx_)
  // The egress level: the owner's (keep_level_at), else the Cold one (unchanged: zero).
  LevelStat* level_;
  PortProbe* probe_ = nullptr;  // tested through probed_ (line 1)
  sc_core::sc_time latency_;    // link_.latency_ps as an sc_time, for the TLM delay
  bool attached_ = false;
  // Replay buffer and acks (retry_ is false when ber == 0).
  uint64_t ack_wait_ps_ = 0;     // transaction tail -> replay buffer freed: 2 x latency + ack_delay
  uint64_t replay_used_ = 0;     // wire bytes in the replay buffer
  Fifo<Ack> acks_;
  bool fault_aware_ = false;   // its system plans faults: report their counters
  bool down_ = false;
  LossHandler* loss_ = nullptr;
  // PFC: per priority, paused until (ps) (the time paused is in Cold).
  uint64_t pause_until_[8] = {};
  uint64_t pause_frames_rx_ = 0;
  // Packets between a transaction's packets (kick_between). The transaction of
  // several packets sent last: its packets left after host_start_ take host_start_ to
  // host_end_ on the wire, evenly (host_end_ == busy_until_ while it is the one on the
  // wire); host_k_ of its host_n_ packets went before host_start_; host_ready_* are its
  // head_ps and tail_ps as the owner offered it (when its first and last packet were
  // ready to leave). Written only for transactions of several packets.
  // (unstarted_payload reads the first six, for every candidate output of a switch's
  // adaptive routing: kept together, in one line.)
  uint64_t host_start_ = 0, host_end_ = UINT64_MAX;
  uint32_t host_n_ = 0, host_k_ = 0;
  uint32_t host_pp_ = 0, host_last_pp_ = 0;  // its packets' payload, its last packet's
  uint64_t host_slack_ = 0;  // its time on the wire beyond its packets' wire time, unused
  uint64_t host_ready_head_ = 0, host_ready_tail_ = 0;
  uint32_t host_src_ = 0, host_dst_ = 0;
  uint64_t host_msg_ = 0;
  uint64_t between_at_ = UINT64_MAX;   // kick_between_at's pending time
  uint64_t overtake_at_ = UINT64_MAX;  // the boundary kick_between set the wake-up for
  bool overtake_fifo_ = false;         // kick_between's `fifo`
  uint64_t overtakes_ = 0;
  static inline bool multi_packet_sent_ = false;
};

// What a port keeps that no hop reads: its SystemC module and sockets, names, the link
// parameters, and the counters and lists of the cold paths (faults, PFC). Apart from the
// Port, a heap object of its own (made in the constructor, before the Port's other
// members), so that the Port is mostly what the packet path reads.
struct Port::Cold {
  Cold(sc_core::sc_module_name n, Port& port, std::string display)
      : module(n, port), display_name_(std::move(display)) {}
  PortModule module;
  std::string display_name_;
  std::string peer_name_;  // the display name of the port at the other end
  LinkParams link_;        // what this port transmits on
  LinkParams peer_link_;   // what it receives from (same type; kept for checks)
  LevelStat own_level_;    // the egress level when the owner keeps none (always zero)
  Fifo<Packet*> held_;     // transactions a link failure cut, kept for replay
  FaultCounters f_;
  uint64_t paused_ps_[8] = {};  // PFC: time paused per priority, up to the pause's end
};

// Join two ports with a link: a.tx -> b.rx and b.tx -> a.rx. `replay` as Port::attach.
void bind_link(Port& a, Port& b, const LinkParams& link, uint64_t seed = 1, bool replay = false);

}  // namespace fabricsim
