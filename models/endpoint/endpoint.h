// An accelerator's fabric interface: a DMA engine that segments messages into packets of
// each port's link protocol payload size (optionally aggregated into transactions of several
// back-to-back packets), stripes them over every port that reaches the destination,
// reassembles arriving messages, and a reduction engine whose speed comes from memory
// bandwidth.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <deque>
#include <unordered_map>
#include <vector>

#include <systemc>

#include "models/collectives/rank_io.h"
#include "models/core/device_model.h"
#include "models/endpoint/endpoint_params.h"
#include "models/core/fifo.h"
#include "models/core/flat_map.h"
#include "models/link/port.h"
#include "models/core/rng.h"
#include "models/core/timer.h"
#include "models/switch/arbiter.h"

namespace fabricsim {

class Endpoint : public sc_core::sc_module, public PortOwner, public DeviceModel, public RankIo {
 public:
  using Delivery = RankIo::Delivery;
  using DeliveryFn = RankIo::DeliveryFn;
  using SentFn = RankIo::SentFn;
  // A read completed: the whole response has arrived. `rtt_ps` = arrival - read() call.
  using ReadDoneFn = std::function<void(uint32_t target, uint64_t tag, uint64_t bytes,
                                        uint64_t rtt_ps)>;

  Endpoint(sc_core::sc_module_name n, std::string display_name, uint32_t id,
           const EndpointParams& p);

  uint32_t id() const override { return id_; }
  const EndpointParams& params() const override { return params_; }
  const std::string& display_name() const override { return display_name_; }
  Port& port(int i) override { return *ports_.at(i); }
  // routes[dst endpoint id] = ports of this endpoint on a shortest path to it.
  void set_routes(const std::vector<std::vector<int>>& routes) override;
  // Keeps its peers; at the end of elaboration its ports whose peer offers in-network
  // collectives become its group ports (set_group_ports).
  void connected(const std::vector<Peer>& peers) override;
  Endpoint* rank_interface() override { return this; }
  uint64_t payload_sourced() const override { return bytes_sent_; }
  uint64_t payload_sunk() const override { return bytes_received_; }
  bool reaches(uint32_t dst) const { return dst < reach_.size() && reach_[dst].any(); }
  // Its traffic to `dst` leaves through its NIC ports (scale-out), not its fabric ports.
  bool via_nic(uint32_t dst) const override;

  // Queue a message; returns its id. `on_sent` fires when its last transaction has started
  // on a wire. Data messages are served oldest first; control messages (kAck, kFlag: a
  // few bytes written by a collective protocol) go ahead of queued data, as a GPU's
  // flag store is not queued behind other channels' bulk stores.
  // `not_before` (ps, 0: none): its last packet may not leave before then (the data is
  // produced at a finite rate: the thread block writing it finishes at that time).
  // `packet_cap` (bytes, 0: none): the stores that write it are this small and travel
  // unmerged, so its packets carry at most this much payload (never aggregated).
  uint64_t send(uint32_t dst, uint64_t bytes, uint64_t tag, PacketKind kind = PacketKind::kData,
                uint8_t vc = 0, uint64_t not_before = 0, uint32_t packet_cap = 0) override;
  // Concurrent senders: data messages share each port round robin, one transaction of
  // each in turn (on), instead of oldest first (off, the default). The collective engine
  // turns it on under its protocol model: a GPU's channels are thread blocks that store
  // at the same time, so their packets interleave on the links.
  void set_interleave(bool on) override { interleave_ = on; }
  // In-switch reduction and multicast (NVLS). `ports` are the ports into switches that
  // offer in-network collectives (Switch::offers_collectives: the NVLS engine); group
  // messages are striped over them. send_group(kNvlsReq, B) asks the switches to reduce
  // B bytes over the group (header-only requests; the
  // reduced data arrives as kNvlsResult deliveries from this endpoint itself);
  // send_group(kNvlsMcast, B) writes B bytes that the switches replicate to every member
  // (arriving as kNvlsData deliveries from this endpoint). Reads from a switch
  // (kNvlsRead) are answered on the port they came in on, by the memory system rather
  // than the DMA queues; the port takes responses and DMA transactions in turn.
  void set_group_ports(const std::vector<int>& ports);
  uint64_t send_group(PacketKind kind, uint64_t bytes, uint64_t tag) override;
  void on_delivery(DeliveryFn fn) override { on_delivery_ = std::move(fn); }
  void on_sent(SentFn fn) override { on_sent_ = std::move(fn); }
  // Read `bytes` of `target`'s memory (memory semantics, UALink-style). A read request
  // (a control message without payload) travels to the target; when it has arrived the
  // target waits its read_turnaround (memory access) and its DMA sends the data back as a
  // kReadResp message, cut and striped like any data; the read completes when the whole
  // response has arrived here (on_read_done). Returns the request's message id.
  uint64_t read(uint32_t target, uint64_t bytes, uint64_t tag);
  void on_read_done(ReadDoneFn fn) { on_read_done_ = std::move(fn); }
  uint64_t reads_completed() const { return reads_done_; }
  // Reserve the reduction engine for `bytes` of reduced output; returns the time it is done.
  // It and the NVLS read answers (memory_read) share the local memory, one serial server
  // at memory_bandwidth.
  uint64_t reduce(uint64_t bytes) override;
  uint64_t memory_read(uint64_t bytes);
  uint64_t memory_ps(uint64_t bytes) const;  // time the local memory takes to stream `bytes`

  nlohmann::json stats_json(uint64_t now_ps) const override;
  uint64_t bytes_sent() const { return bytes_sent_; }
  uint64_t bytes_received() const { return bytes_received_; }
  uint64_t messages_in_flight() const override { return rx_msgs_.size() + active_; }
  // Between independent measurements: ports and reduction engine idle; then the ports'
  // credits and remainders, the entropy stream and the response turns as when built.
  uint64_t idle_at() const override;
  void reset_dynamic_state() override;

  Packet* tx_peek(int port) override;
  // The next control message's transaction for `port` (the DMA serves them first), or a
  // released held last packet (cut_released_tail) with its round-robin turns in *skip, to
  // go between the packets of the transaction on the wire (Port::kick_between).
  Packet* tx_peek_between(int port, uint32_t* skip) override;
  void tx_pop(int port, Packet* p) override;
  void rx_arrive(int port, Packet* p) override;
  bool rx_reads_message() const override { return true; }  // msg_id, inject_ps

  // Faults (docs/architecture.md, "Faults"). A transaction a failed link cut and its
  // replay kept comes back: it goes out again on any port that reaches its destination,
  // as part of the message it belongs to (not counted as sent twice).
  void tx_recover(int port, Packet* p) override;
  // End-to-end retransmission: `p`, which this endpoint sourced and a fault lost, goes out
  // again (counted as sent again: its lost copy is counted lost).
  void retransmit(Packet* p);
  // Failure bypass (docs/optical.md): the job stops. Every queued message's bytes not yet
  // cut into transactions are abandoned (they never enter the fabric; returns how many);
  // what is cut still goes out. Messages not yet sent whole, and partly received ones.
  uint64_t abandon_queued();
  uint64_t sending() const { return active_; }
  // Checks: port_uncut_ (what each port's round robin shares) against a scan of the data
  // queue. Tests call it between events; true if they agree.
  bool uncut_counts_agree() const;
  // Partly received messages of an abandoned run (their senders stopped): forgotten once
  // nothing is in flight; returns their bytes received.
  uint64_t discard_partial();

 private:
  void end_of_elaboration() override;

  struct Msg {
    uint64_t id;
    uint32_t dst;
    uint8_t vc;
    PacketKind kind;
    uint64_t bytes;
    uint64_t tag;
    uint64_t next_offset = 0;  // bytes already cut into transactions
    uint32_t read_bytes = 0;   // kReadReq: bytes asked for (the request carries no payload)
    bool cut_once = false;     // a transaction was cut (a read request has no bytes to count)
    bool tail_held = false;    // its last packet waited for not_before (in held_tails_)
    uint64_t not_before = 0;   // its last packet leaves no earlier (ps)
    uint32_t packet_cap = 0;   // payload per packet at most this (0: the port's)
    uint64_t unsent = 0;       // transactions cut but not yet on a wire
    bool done = false;         // every byte has started on a wire
    // An aggregated NVLS reduce request is cut by the address interleave: its packet i
    // goes over group port (group_start + i) mod k (group_quota). [group port index] ->
    // bytes that port has cut as whole transactions (empty until its first).
    uint32_t group_start = 0;
    std::vector<uint64_t> group_cut;
    // Fair completion (aggregate_fair_completion): the message's virtual finish in the
    // processor sharing of its port class (fair_), and whether it has been reached.
    bool fair = false;
    bool fair_done = false;
    bool fair_held = false;  // its tail waits for fair_done (counted in Fair::held)
    uint32_t fair_key = 0;
    uint64_t vfinish = 0;
  };
  // Processor sharing of one class of ports (the ports of a message's reach, keyed by the
  // first): virtual time v advances by the bytes served (fair_pending_) over the messages
  // not yet virtually finished, in 1/65536 bytes; heap: (virtual finish, message id),
  // earliest first.
  struct Fair {
    uint64_t v = 0;
    std::vector<std::pair<uint64_t, uint64_t>> heap;
    uint32_t held = 0;  // messages whose tail waits for their virtual finish
    PortSet ports{0};   // the class's ports (the reach of its first message)
  };
  uint64_t fair_held_ = 0;  // the sum of Fair::held
  std::vector<Fair> fair_;  // [key port]
  // [port]: the transaction of class `key` this port has cut and is serialising, from t0
  // to t1 (ps). Its bytes count as served as the wire carries them, pro rata, whenever the
  // class's virtual time is read (fair_advance: a message joins, a cut would end one, a
  // packet is cut between), and in full once the port looks for work again (tx_peek: the
  // wire is free). Counted at the cut, a message queued alone on idle ports was served all
  // but a transaction the instant they cut it, before the messages queued ns later joined.
  struct FairPending {
    uint32_t key = 0;
    uint64_t bytes = 0, credited = 0;
    uint64_t t0 = 0, t1 = 0;
  };
  std::vector<FairPending> fair_pending_;
  void fair_join(Msg& m);
  void fair_serve(uint32_t key, uint64_t bytes);
  void fair_advance(uint32_t key);  // credits the class's transactions on the wire up to now
  void fair_credit(int port);       // credits the port's transaction in full
  uint64_t fair_pop(Fair& f);  // the earliest virtual finish's message; v moves to it
  // Marks message `id` finished; if its tail was held for it, releases the tail and
  // returns the message, else nullptr.
  Msg* fair_finish(uint64_t id);
  bool fair_fast_forward(int port);

  std::string display_name_;
  uint32_t id_;
  std::vector<Peer> peers_;
  EndpointParams params_;
  std::vector<std::unique_ptr<Port>> ports_;
  static constexpr uint32_t kGroupDst = 0xFFFFFFFFu;  // Msg::dst of NVLS group messages
  std::vector<PortSet> reach_;      // [dst] -> ports that reach it
  PortSet nvls_reach_{0};           // ports into NVLS switches
  int group_kick_next_ = 0;         // kick_group's first port for the next group message
  uint32_t nvls_count_ = 0;
  std::vector<int> group_index_;    // [port] -> its index among the group ports, -1
  std::vector<uint8_t> resp_turn_;
  std::vector<Fifo<Packet*>> resp_q_;  // [port]: read responses waiting for the port
  std::vector<Packet*> resp_part_;  // [port]: an answer's first packet, cut and not sent yet
  uint64_t nvls_answer_parts_ = 0;  // answers' packets sent on their own (answer_part)
  Packet* answer_part(Packet* a);
  // A port's answers go a packet per turn while the DMA has data for it (tx_peek): the port
  // aggregates, under round robin, with aggregate_round_robin_packets.
  bool answers_in_packets(int port) const {
    return params_.aggregate_round_robin_packets != PacketTurns::kNone && interleave_ &&
           txn_payload_[size_t(port)] > packet_payload_[size_t(port)];
  }
  std::vector<uint32_t> reach_count_;  // [dst] -> number of such ports
  // Per port, from its link: a GPU's NVLink ports and its NIC port cut different packets.
  std::vector<uint32_t> packet_payload_;  // payload bytes per packet
  std::vector<uint32_t> txn_payload_;     // payload per transaction (whole packets)
  struct Queue {
    std::deque<Msg> msgs;           // oldest first (deque: element addresses are stable)
    size_t first_uncut = 0;         // index of the oldest message not fully cut
    uint64_t retired = 0;           // messages popped from the front so far
    // [port]: every message before it is fully cut or is one that port cannot carry (a
    // port's reach changes only when a fault changes the routes, which resets it), so a
    // port's search starts there. Without it a NIC port rescans every queued NVLink
    // message on each look: quadratic in the queue.
    std::vector<size_t> port_start;
  };
  Packet* cut(Queue& q, int port);
  // A packet of one for `ports` to go between a transaction's packets (Port::kick_between):
  // every idle port is kicked (the first to wake takes it), or, with `one`, the first idle
  // one; if none is idle, the one with the earliest boundary.
  void offer_between(const PortSet& ports, bool one = false);
  void kick_group(const PortSet& s);
  Packet* cut_from(Queue& q, size_t k, int port, bool turns = false);
  // Under round robin, the last packet of an aggregated message that waited for its
  // thread block's pass to end goes before the other messages' turns once it may leave:
  // per packet it waits at most one packet of each, here their turns are whole
  // transactions (docs/architecture.md, "Aggregation under round robin").
  Packet* cut_released_tail(Queue& q, int port);
  // Round-robin turns on `port` of other messages with bytes to cut, after the message
  // served last and before q.msgs[k] (per packet: the packets that leave before its next).
  uint32_t turns_before(const Queue& q, size_t k, int port) const;
  // Index in q.msgs of the message with id `id` not yet fully cut, or q.msgs.size().
  static size_t uncut_index(const Queue& q, uint64_t id);
  std::vector<uint64_t> held_tails_;  // ids of data messages whose last packet is held
  const PortSet& reach_of(const Msg& m) const {
    return m.dst == kGroupDst ? nvls_reach_ : reach_[m.dst];
  }
  // [port]: data messages that still have bytes to cut and that the port reaches (it
  // takes turns among them under round robin). Kept on enqueue, on a message's last cut
  // and on abandon_queued; recounted when the routes or the group ports change.
  std::vector<uint32_t> port_uncut_;
  void count_uncut(const Msg& m, int delta);
  void recount_uncut();
  static void retire(Queue& q);
  static uint64_t group_quota(uint64_t packets, uint64_t ways, uint64_t start, uint64_t g);
  uint64_t group_req_packets_ = 0;  // packets of the aggregated reduce requests so far
  Queue control_, data_;            // the DMA serves control_ first
  // Faults: transactions to send again, oldest first, each with the message it was cut
  // from (nullptr once sent) and whether it counts as sent again (retransmission).
  struct Resend {
    Packet* p;
    Msg* m;
    bool count;
  };
  std::deque<Resend> resend_;
  bool stage_resend(int port);  // moves the oldest resend `port` can carry into staged_
  bool rerouted_ = false;       // routes were recomputed after a fault: a destination
                                // may be unreachable for a while
  bool interleave_ = false;         // data messages round robin per port (set_interleave)
  // [port]: the data message it cut from last, as its position counted from the first
  // message ever queued (Queue::retired + its index), so that the turn after it is found
  // without a search; kNoneServed: none yet (the next turn is the oldest's).
  static constexpr uint64_t kNoneServed = UINT64_MAX;
  std::vector<uint64_t> rr_last_;
  uint64_t active_ = 0;
  std::vector<Packet*> staged_;     // [port]: cut, waiting for the port
  std::vector<Msg*> staged_msg_;    // [port]: the message it belongs to (nullptr: a resend)
  std::vector<uint8_t> staged_count_;  // [port]: a resend counted as sent again
  // msg id -> payload bytes received: open addressing, so that a packet's look-up is one
  // line and a message's entry allocates nothing (an all-to-all keeps hundreds per GPU).
  FlatMap<uint64_t, uint64_t, IdentityHash> rx_msgs_;
  uint64_t next_msg_ = 0, next_seq_ = 0;
  Rng rng_;                         // entropy values (ECMP/spraying selectors)
  LevelStat backlog_;               // payload bytes queued in the DMA, not yet on a wire
  uint64_t reduce_busy_ps_ = 0, reduce_bytes_ = 0;
  uint64_t bytes_sent_ = 0, bytes_received_ = 0, msgs_delivered_ = 0;
  uint64_t nvls_reads_served_ = 0, nvls_read_bytes_ = 0;
  uint64_t latency_sum_ps_ = 0, latency_max_ps_ = 0, rx_txns_ = 0;
  DeliveryFn on_delivery_;
  SentFn on_sent_;
  ReadDoneFn on_read_done_;
  // Reads: requests in flight from here (tag -> issue time), and responses this endpoint
  // owes (turnaround timer; payload = index into pending_resp_).
  struct PendingResp {
    uint32_t dst;
    uint64_t bytes, tag;
  };
  void serve_read(uint64_t slot);
  std::unordered_map<uint64_t, uint64_t> reads_issued_;  // (target << 40 | tag) -> issue ps
  Fifo<PendingResp> pending_resp_;
  std::unique_ptr<TimerQueue> turnaround_;
  uint64_t reads_done_ = 0, reads_served_ = 0;
};

}  // namespace fabricsim
