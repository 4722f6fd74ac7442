// The Ultra Ethernet transport of a NIC (models/nic/transport.h): PDS reliable unordered
// delivery with NSCC (or receiver credits) and per-packet entropy spraying. Plain C++.
//
// One connection per remote endpoint (the packet delivery context), created on first use.
// Sender: packets get consecutive PSNs when first sent; a copy of each is kept until it is
// acknowledged. A packet is sent again when (i) a NACK says a switch trimmed it (fast),
// (ii) the acks show `reorder_threshold` packets sent after it arrived while it did not
// (a SACK gap), or (iii) its retransmission timeout expires. The window (NSCC's cwnd, a
// fixed 1.5 x BDP without congestion control, or receiver credits with rccc) bounds the
// payload in flight. Every packet gets an entropy from the connection's policy
// (spraying.h: ecmp, oblivious, reps).
// Receiver: places packets in any order (PsnWindow), delivers each PSN once (duplicates
// are discarded and counted), acknowledges with the cumulative PSN and a 64-bit SACK
// bitmap at least every ack_bytes, and at once on an ECN mark, a gap, a duplicate, the
// first packet and a message's last packet; a trimmed packet is answered by a NACK.
// Receiver credits (cc: rccc): the receiver grants credit, paced at its line rate, in turn
// to every sender that has announced a backlog (data packets carry the sender's backlog);
// a sender starts with one BDP of credit and sends only what it holds credit for.
// Retransmissions need credit like new packets, so they count in the backlog: the sender's
// (new and to-resend bytes, on every copy) and, for a trimmed packet, the receiver's own
// (its header arrived: the packet's whole payload used credit and will come again). A
// packet lost without a trace (dropped, found by a SACK gap or its timeout) gives the
// sender its credit back: the receiver never counted it as used. A sender out of credit
// with data queued and nothing in flight (whose arrival would announce its backlog) sends
// a credit request (kCreditReq, htsim's RTS) with its backlog and the credit it holds, and
// again after `rto` if no credit came.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/core/fifo.h"
#include "models/core/rng.h"
#include "models/nic/psn_window.h"
#include "models/nic/transport.h"
#include "models/uec/nscc.h"
#include "models/uec/spraying.h"

namespace fabricsim {

// Declared in models/uec/uec_nic_kind.cpp (uec_params_block(); defaults there).
struct UecParams {
  std::string cc;             // "nscc" | "rccc" | "none"
  std::string spraying;       // "reps" | "oblivious" | "ecmp"
  uint32_t entropies = 0;     // entropy values a connection sprays over
  uint32_t reps_buffer = 0;   // REPS ring of recycled entropies
  uint64_t reps_freeze_ps = 0;
  bool reps_recycle_acked = false;  // reps_recycle: acked (every packet an ack covers) | echo
  uint32_t reorder_threshold = 0;  // packets sent later that arrived before a lost one
  bool trim_ok = false;       // its packets may be trimmed (kTrimOk); NSCC's target follows
  uint8_t receiver_penalty = 0;       // pend carried by acks when the receiver is backlogged
  uint64_t penalty_backlog_bytes = 0; // host-side backlog above which it is
  uint64_t credit_chunk_bytes = 0;    // rccc: credit per grant
  bool path_base_rtt = false;         // NSCC base RTT per connection from its path
  NsccParams nscc;            // mtu and line rate set from the NIC
};

class UecTransport final : public Transport {
 public:
  UecTransport(const UecParams& p, NicServices& nic);

  void enqueue(uint32_t dst, Packet* p) override;
  Packet* next(uint64_t* retry_at) override;
  void sent(Packet* p) override;
  void receive(Packet* p) override;
  void on_timer() override;
  void add_stats(nlohmann::json& j) const override;
  void add_to_ledger(PacketLedger& l) const override;
  uint64_t in_flight() const override;
  uint64_t idle_at() const override;
  void reset() override;

  // Inspection (tests): the connection to `dst`, if any.
  struct Counters {
    uint64_t sent_new = 0, rtx_trim = 0, rtx_gap = 0, rtx_timeout = 0;
    uint64_t acks_sent = 0, nacks_sent = 0, acks_received = 0, nacks_received = 0;
    uint64_t ecn_echoes = 0, duplicates = 0, delivered = 0, trimmed_received = 0;
    uint64_t credits_sent = 0, credit_bytes_granted = 0, penalties_sent = 0;
    uint64_t credit_requests_sent = 0, credit_requests_received = 0;
    // When the first retransmission of each cause (trim NACK, SACK gap, timeout) was sent
    // (MAX: none): how soon a loss was recovered, and by what (docs/scaleout.md, "Failure").
    uint64_t first_rtx_ps[3] = {UINT64_MAX, UINT64_MAX, UINT64_MAX};
  };
  const Counters& counters() const { return n_; }
  uint64_t cwnd(uint32_t dst) const;
  uint64_t inflight_bytes(uint32_t dst) const;
  const EntropyPolicy* entropy(uint32_t dst) const;
  const Nscc* nscc(uint32_t dst) const;

 private:
  enum class Cause : uint8_t { kNone, kTrim, kGap, kTimeout };
  struct TxEntry {
    PacketWithTransport copy;  // identity, payload, PSN; retransmits counts its copies
    uint64_t order = 0;  // transmission order of its latest copy in the connection
    bool acked = false;
    bool lost = false;   // waiting in rtx (not counted in flight)
    Cause cause = Cause::kNone;
  };
  struct Conn {
    uint32_t dst = 0;
    Fifo<Packet*> newq;       // cut, not yet sent
    uint64_t queued_bytes = 0;  // their payload
    uint32_t next_psn = 0;    // PSN of the next new packet
    uint32_t base_psn = 0;    // PSN of win.front()
    Fifo<TxEntry> win;        // PSNs base_psn .. next_psn - 1
    Fifo<uint32_t> rtx;       // PSNs to send again (stale ones are skipped)
    uint64_t inflight = 0;    // payload sent, neither acked nor declared lost
    uint64_t order = 0;       // transmissions so far
    uint64_t max_acked_order = 0;
    uint64_t credit = 0;      // rccc: bytes it may still send
    bool requested = false;   // rccc: a credit request is out, no credit came since
    uint32_t request_seq = 0; // rccc: requests sent (names the latest one's timer)
    uint64_t rtx_bytes = 0;   // payload of the lost packets waiting in rtx (backlog too)
    std::unique_ptr<Nscc> cc;
    EntropyPolicy ev;
    bool listed = false;
    uint64_t cwnd_min = UINT64_MAX, cwnd_max = 0, cwnd_sum = 0, cwnd_samples = 0;
    Conn(uint32_t d, EntropyPolicy e) : dst(d), ev(std::move(e)) {}
  };
  struct RxConn {
    PsnWindow w;
    uint64_t unacked = 0;  // bytes received since the last ack
    bool any = false;
    uint64_t backlog = 0;  // rccc: what the sender says it still has to send
    uint64_t granted = 0;  // rccc: credit granted not yet used by arrivals
    uint64_t resend = 0;   // rccc: payload of trimmed packets not yet seen again
    bool in_credit_list = false;
    uint32_t local = 0;    // our endpoint the sender writes to
  };
  struct Rto {
    uint64_t at_ps;
    uint32_t dst, psn;
    uint64_t order;
  };
  struct RequestTimer {  // rccc: a credit request not answered by then is sent again
    uint64_t at_ps;
    uint32_t dst, seq;
  };

  Conn& conn(uint32_t dst);
  RxConn& rx(uint32_t src);
  TxEntry* entry(Conn& c, uint32_t psn);
  uint64_t window(const Conn& c) const;
  static uint64_t backlog(const Conn& c) { return c.queued_bytes + c.rtx_bytes; }
  static uint64_t demand(const RxConn& r) { return std::max(r.backlog, r.resend); }
  bool may_send(const Conn& c, uint32_t bytes) const;
  void list(Conn& c);
  Packet* produce(Conn& c);
  void declare_lost(Conn& c, TxEntry& e, Cause why);
  void acked(Conn& c, uint32_t psn, uint64_t& newly);
  uint64_t ack_state(Conn& c, const Packet& a);
  void on_data(Packet* p);
  void on_ack(Packet* a);
  void on_nack(Packet* a);
  void on_credit(Packet* a);
  void on_credit_request(Packet* q);
  void request_credit(Conn& c, uint32_t src);
  void send_ack(Packet* data, RxConn& r, bool nack);
  void grant_credit();

  UecParams p_;
  NicServices& nic_;
  SprayMode mode_;
  uint64_t bdp_ = 0;
  std::vector<std::unique_ptr<Conn>> conns_;  // [remote endpoint]
  std::vector<std::unique_ptr<RxConn>> rxs_;  // [remote endpoint]
  Fifo<uint32_t> ready_;                      // connections that may have work
  Fifo<Rto> rto_;
  Fifo<uint32_t> credit_rr_;                  // rccc: senders waiting for credit
  Fifo<RequestTimer> request_timers_;         // rccc: in send order (one fixed delay)
  uint64_t next_grant_ps_ = 0;                // rccc: the credit pacer's next slot
  bool grant_pending_ = false;
  Counters n_;
  uint32_t echo_psn_ = UINT32_MAX;  // on_ack: the PSN whose entropy the ack echoes
};

}  // namespace fabricsim
