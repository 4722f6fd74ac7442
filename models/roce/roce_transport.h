// The RoCEv2 transport of a NIC (models/nic/transport.h): reliable connected queue pairs,
// one per remote endpoint, with in-order delivery and go-back-N, rate-limited by DCQCN.
// Plain C++.
//  * Sender: packets get consecutive PSNs; a copy of each is kept until acknowledged. The
//    queue pair sends at most at DCQCN's current rate (paced per packet on its wire size).
//    A NACK (sequence error) rewinds it to the PSN the receiver expects and everything from
//    there is sent again; so does a retransmission timeout of the oldest unacknowledged.
//    One entropy (UDP source port) per queue pair: ECMP hashes it onto one path.
//  * Receiver: accepts only the expected PSN; a later one is discarded and answered by one
//    NACK per expected PSN, an earlier one (duplicate) by an ack. Acks are cumulative, at
//    least every ack_bytes and at a message's last packet or an ack request.
//  * Notification point: an ECN-marked packet makes the receiver send a CNP to the sender,
//    at most one per queue pair per cnp_interval.
// Normally over PFC (lossless: no drops, so go-back-N only runs after timeouts).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "models/core/fifo.h"
#include "models/nic/transport.h"
#include "models/roce/dcqcn.h"

namespace fabricsim {

// Declared in models/roce/roce_nic_kind.cpp (defaults there).
struct RoceParams {
  bool dcqcn = false;
  DcqcnParams rp;               // line rate set from the NIC
  uint64_t cnp_interval_ps = 0;
  uint32_t wire_overhead_bytes = 0;  // per packet, for pacing (Ethernet + L3 headers)
};

class RoceTransport final : public Transport {
 public:
  RoceTransport(const RoceParams& p, NicServices& nic);

  void enqueue(uint32_t dst, Packet* p) override;
  Packet* next(uint64_t* retry_at) override;
  void sent(Packet* p) override;
  void receive(Packet* p) override;
  void on_timer() override;
  void add_stats(nlohmann::json& j) const override;
  void add_to_ledger(PacketLedger& l) const override;
  uint64_t in_flight() const override;
  void reset() override;

  struct Counters {
    uint64_t sent_new = 0, rtx_nack = 0, rtx_timeout = 0;
    uint64_t acks_sent = 0, nacks_sent = 0, cnps_sent = 0, acks_received = 0,
             nacks_received = 0, cnps_received = 0;
    uint64_t out_of_order = 0, duplicates = 0, delivered = 0;
  };
  const Counters& counters() const { return n_; }
  const Dcqcn* dcqcn(uint32_t dst) const;

 private:
  enum class Cause : uint8_t { kNack, kTimeout };
  struct TxEntry {
    PacketWithTransport copy;
    uint64_t order = 0;  // transmission order of its latest copy
  };
  struct Qp {
    uint32_t dst = 0;
    Fifo<Packet*> newq;
    uint32_t snd_una = 0;     // oldest unacknowledged PSN (= PSN of win.front())
    uint32_t snd_nxt = 0;     // next PSN to send (below next_new: a go-back-N replay)
    uint32_t next_new = 0;    // PSN of the next new packet
    Fifo<TxEntry> win;        // PSNs snd_una .. next_new - 1
    Cause replay = Cause::kNack;
    uint64_t order = 0;
    uint64_t next_tx_ps = 0;  // pacing: the rate limiter's next slot
    uint16_t entropy = 0;
    std::unique_ptr<Dcqcn> cc;
    bool listed = false;
    uint64_t rate_min = UINT64_MAX, rate_sum = 0, rate_samples = 0;
  };
  struct RxQp {
    uint32_t epsn = 0;        // expected PSN
    bool nacked = false;      // a NACK for epsn is out
    uint64_t unacked = 0;
    uint64_t last_cnp_ps = 0;
    bool cnp_sent = false;
  };
  struct Rto {
    uint64_t at_ps;
    uint32_t dst, psn;
    uint64_t order;
  };

  Qp& qp(uint32_t dst);
  RxQp& rx(uint32_t src);
  bool has_work(const Qp& q) const { return q.snd_nxt < q.next_new || !q.newq.empty(); }
  void list(Qp& q);
  void acked_below(Qp& q, uint32_t psn);
  void rewind(Qp& q, uint32_t psn, Cause why);
  void on_data(Packet* p);
  void control(Packet* d, PacketKind kind, uint32_t psn);

  RoceParams p_;
  NicServices& nic_;
  std::vector<std::unique_ptr<Qp>> qps_;
  std::vector<std::unique_ptr<RxQp>> rxs_;
  Fifo<uint32_t> ready_;
  Fifo<Rto> rto_;
  Counters n_;
};

}  // namespace fabricsim
