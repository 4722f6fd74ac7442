// The scale-out transports' bookkeeping without SystemC: two transports (a sender NIC for
// endpoint 0, a receiver NIC for endpoint 1) joined by a test "network" that can drop or
// trim chosen packets. UEC: PSNs, SACK bitmaps, out-of-order placement, delivery exactly
// once, retransmission on a trim NACK, a SACK gap and a timeout. RoCE: go-back-N.
#include <functional>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "models/nic/transport.h"
#include "models/roce/roce_transport.h"
#include "models/uec/uec_transport.h"

namespace fabricsim {
namespace {

class FakeNic final : public NicServices {
 public:
  explicit FakeNic(std::string name) : name_(std::move(name)) {
    p_.mtu_bytes = 4096;
    p_.l3_header_bytes = 64;
    p_.rto_ps = 100000000;  // 100 us
    p_.ack_bytes = 16384;
    p_.seed = 1;
  }
  uint64_t now() const override { return *clock; }
  const NicParams& params() const override { return p_; }
  const std::string& name() const override { return name_; }
  uint64_t line_rate_bps() const override { return 400000000000ull; }
  uint32_t endpoints() const override { return 2; }
  uint64_t path_rtt_ps(uint32_t) const override { return 0; }
  void deliver(Packet* p) override {
    delivered.push_back(p->tr().psn);
    PacketPool::global().release(p);
  }
  uint64_t host_backlog(uint32_t) const override { return 0; }
  void absorb(Packet* p) override {
    ++absorbed;
    PacketPool::global().release(p);
  }
  void send_control(Packet* p) override { control.push_back(p); }
  Packet* acquire() override {
    Packet* p = PacketPool::global().acquire();
    p->clear_transport();
    return p;
  }
  Packet* recreate(const PacketWithTransport& copy) override {
    Packet* p = PacketPool::global().acquire();
    copy.copy_to(p);
    ++recreated;
    return p;
  }
  void first_sent(uint32_t) override {}
  void kick() override {}
  void wake_at(uint64_t t) override { timer = std::min(timer, t); }

  uint64_t* clock = nullptr;
  std::vector<uint32_t> delivered;
  std::vector<Packet*> control;
  uint64_t absorbed = 0, recreated = 0, timer = UINT64_MAX;

 private:
  std::string name_;
  NicParams p_;
};

// Endpoint 0's NIC sends `n` packets of one message to endpoint 1's NIC.
struct Link {
  uint64_t now = 0;
  FakeNic a{"nicA"}, b{"nicB"};
  std::unique_ptr<Transport> ta, tb;
  std::function<bool(Packet&)> drop = [](Packet&) { return false; };   // lost in the network
  std::function<bool(Packet&)> trim = [](Packet&) { return false; };   // trimmed on the way
  std::function<bool(Packet&)> mark = [](Packet&) { return false; };   // ECN-marked on the way
  struct Sent {
    uint32_t psn;
    uint16_t entropy;
    uint32_t retransmits;
    bool operator==(const Sent& o) const {
      return psn == o.psn && entropy == o.entropy && retransmits == o.retransmits;
    }
  };
  std::vector<Sent> sent;  // every packet the sender put on the wire, in order

  void enqueue(uint32_t n) {
    for (uint32_t i = 0; i < n; ++i) {
      Packet* p = PacketPool::global().acquire();
      p->clear_transport();
      p->src = 0;
      p->dst = 1;
      p->msg_id = 7;
      p->msg_bytes = uint64_t(n) * 4032;
      p->offset = uint64_t(i) * 4032;
      p->payload_bytes = p->packet_payload = 4032;
      p->npackets = 1;
      p->flags = kEct;
      ta->enqueue(1, p);
    }
  }
  // Moves everything the sender may send and all control packets until quiet; each round
  // advances the clock by 1 us.
  void pump(int rounds = 200) {
    for (int r = 0; r < rounds; ++r) {
      now += 1000000;
      uint64_t retry = UINT64_MAX;
      while (Packet* p = ta->next(&retry)) {
        p->tr().tx_ps = now;
        ta->sent(p);
        sent.push_back(Sent{p->tr().psn, p->entropy, p->tr().retransmits});
        if (mark(*p)) p->flags |= kCe;
        if (drop(*p)) {
          PacketPool::global().release(p);
          continue;
        }
        if (trim(*p)) {
          p->payload_bytes = p->packet_payload = 0;
          p->flags |= kTrimmed;
        }
        tb->receive(p);
      }
      for (Packet* c : b.control) ta->receive(c);
      b.control.clear();
      if (a.timer <= now) {
        a.timer = UINT64_MAX;
        ta->on_timer();
      }
    }
  }
};

UecParams uec_params() {
  UecParams u;
  u.cc = "none";
  u.spraying = "oblivious";
  u.entropies = 16;
  u.reps_buffer = 8;
  u.reps_freeze_ps = 0;
  u.reorder_threshold = 3;
  u.trim_ok = true;
  u.nscc.network_rtt_ps = 500000;  // 0.5 us: a window of 1.5 x 25,000 B = 9 packets
  u.nscc.max_window_bdp = 1.5;
  u.credit_chunk_bytes = 16384;
  return u;
}

std::unique_ptr<Link> uec_link() {
  auto l = std::make_unique<Link>();
  l->a.clock = l->b.clock = &l->now;
  l->ta = std::make_unique<UecTransport>(uec_params(), l->a);
  l->tb = std::make_unique<UecTransport>(uec_params(), l->b);
  return l;
}

TEST(UecTransport, InOrderDeliveryAndCumulativeAcks) {
  auto l = uec_link();
  const uint64_t before = PacketPool::global().outstanding();
  l->enqueue(20);
  l->pump();
  std::vector<uint32_t> want;
  for (uint32_t i = 0; i < 20; ++i) want.push_back(i);
  EXPECT_EQ(l->b.delivered, want);
  auto& s = static_cast<UecTransport&>(*l->ta);
  EXPECT_EQ(s.counters().sent_new, 20u);
  EXPECT_EQ(s.in_flight(), 0u);  // all acknowledged
  EXPECT_EQ(PacketPool::global().outstanding(), before);
}

// A trimmed packet's header comes back as a NACK; the sender sends it again at once.
TEST(UecTransport, TrimNackRetransmitsOnceAndDeliversOnce) {
  auto l = uec_link();
  int trimmed = 0;
  l->trim = [&](Packet& p) { return p.tr().psn == 4 && p.tr().retransmits == 0 && ++trimmed; };
  l->enqueue(12);
  l->pump();
  auto& s = static_cast<UecTransport&>(*l->ta);
  auto& r = static_cast<UecTransport&>(*l->tb);
  EXPECT_EQ(r.counters().nacks_sent, 1u);
  EXPECT_EQ(s.counters().rtx_trim, 1u);
  EXPECT_EQ(s.counters().rtx_gap + s.counters().rtx_timeout, 0u);
  EXPECT_EQ(l->b.delivered.size(), 12u);  // once each, PSN 4 last
  EXPECT_EQ(std::set<uint32_t>(l->b.delivered.begin(), l->b.delivered.end()).size(), 12u);
  EXPECT_EQ(l->b.absorbed, 1u);            // the trimmed header
}

// A dropped packet: later packets arrive and are SACKed; once 1.5 windows of packets sent
// after it have been acknowledged it is declared lost (SACK gap) and sent again, before
// its timeout.
TEST(UecTransport, SackGapRetransmitsBeforeTheTimeout) {
  auto l = uec_link();
  l->drop = [](Packet& p) { return p.tr().psn == 2 && p.tr().retransmits == 0; };
  l->enqueue(40);
  l->pump(60);  // 60 us: well before the 100 us timeout
  auto& s = static_cast<UecTransport&>(*l->ta);
  EXPECT_EQ(s.counters().rtx_gap, 1u);
  EXPECT_EQ(s.counters().rtx_timeout, 0u);
  EXPECT_EQ(l->b.delivered.size(), 40u);
  // Out-of-order placement: PSN 2 arrives after PSNs sent later.
  EXPECT_NE(l->b.delivered[2], 2u);
}

// The last packet lost: nothing after it to make a gap, so the timeout brings it back.
TEST(UecTransport, TailLossRecoversByTimeout) {
  auto l = uec_link();
  l->drop = [](Packet& p) { return p.tr().psn == 5 && p.tr().retransmits == 0; };
  l->enqueue(6);
  l->pump(150);
  auto& s = static_cast<UecTransport&>(*l->ta);
  EXPECT_EQ(s.counters().rtx_timeout, 1u);
  EXPECT_EQ(l->b.delivered.size(), 6u);
  EXPECT_EQ(s.in_flight(), 0u);
}

// The receiver's SACK: an ack after PSN 3 arrives without PSN 1 says cum 1 and bits for 2, 3.
TEST(UecTransport, AckCarriesCumulativePsnAndSackBitmap) {
  auto l = uec_link();
  l->drop = [](Packet& p) { return p.tr().psn == 1; };
  l->enqueue(4);
  uint64_t retry = UINT64_MAX;
  std::vector<Packet*> acks;
  while (Packet* p = l->ta->next(&retry)) {
    p->tr().tx_ps = 1;
    l->ta->sent(p);
    if (p->tr().psn == 1) {
      PacketPool::global().release(p);
      continue;
    }
    l->tb->receive(p);
  }
  ASSERT_FALSE(l->b.control.empty());
  const Packet* last = l->b.control.back();
  EXPECT_EQ(last->kind, PacketKind::kXportAck);
  EXPECT_EQ(last->tr().ack_psn, 1u);
  EXPECT_EQ(last->tr().sack_base, 1u);
  EXPECT_EQ(last->tr().sack_bits, 0b110u);  // PSNs 2 and 3 (bit 0 = PSN 1, missing)
  for (Packet* c : l->b.control) PacketPool::global().release(c);
}

std::unique_ptr<Link> roce_link() {
  auto l = std::make_unique<Link>();
  l->a.clock = l->b.clock = &l->now;
  RoceParams r;
  r.dcqcn = false;
  r.cnp_interval_ps = 50000000;
  r.wire_overhead_bytes = 106;
  l->ta = std::make_unique<RoceTransport>(r, l->a);
  l->tb = std::make_unique<RoceTransport>(r, l->b);
  return l;
}

// Go-back-N: PSN 3 lost; the receiver discards 4.. and NACKs once with PSN 3; the sender
// goes back and sends 3.. again; delivery is in order, exactly once.
TEST(RoceTransport, GoBackNOnANackDeliversInOrderOnce) {
  auto l = roce_link();
  l->drop = [](Packet& p) { return p.tr().psn == 3 && p.tr().retransmits == 0; };
  l->enqueue(10);
  l->pump(20);
  auto& s = static_cast<RoceTransport&>(*l->ta);
  auto& r = static_cast<RoceTransport&>(*l->tb);
  std::vector<uint32_t> want;
  for (uint32_t i = 0; i < 10; ++i) want.push_back(i);
  EXPECT_EQ(l->b.delivered, want);
  EXPECT_EQ(r.counters().nacks_sent, 1u);
  EXPECT_EQ(r.counters().out_of_order, 6u);  // 4 .. 9 discarded
  EXPECT_EQ(s.counters().rtx_nack, 7u);      // 3 .. 9 again
  EXPECT_EQ(s.in_flight(), 0u);
}

// Independent measurements: after reset() a transport runs the same traffic exactly as
// the one built fresh (PSNs from 0, the same entropies from the same stream, NSCC's
// window and DCQCN's rate from their start), later in time; its counters keep adding up.
// The connection sees a trim, a loss and ECN marks, so every kind of state has moved.
struct Trace {
  std::vector<Link::Sent> sent;
  std::vector<uint32_t> delivered;
  uint64_t window = 0;  // UEC: the congestion window after the traffic; RoCE: DCQCN's rate
};

void lossy(Link& l) {
  l.trim = [](Packet& p) { return p.tr().psn == 4 && p.tr().retransmits == 0; };
  l.drop = [](Packet& p) { return p.tr().psn == 9 && p.tr().retransmits == 0; };
  l.mark = [](Packet& p) { return p.tr().psn % 3 == 0; };
}

Trace run_and_take(Link& l, uint32_t n, const std::function<uint64_t()>& window) {
  l.sent.clear();
  l.b.delivered.clear();
  l.enqueue(n);
  l.pump(200);
  return Trace{l.sent, l.b.delivered, window()};
}

UecParams nscc_reps() {
  UecParams u = uec_params();
  u.cc = "nscc";
  u.spraying = "reps";
  u.reps_freeze_ps = 20000000;
  return u;
}

TEST(UecTransport, ResetRunsTheSameTrafficAsFreshAndKeepsCounting) {
  auto make = [] {
    auto l = std::make_unique<Link>();
    l->a.clock = l->b.clock = &l->now;
    l->ta = std::make_unique<UecTransport>(nscc_reps(), l->a);
    l->tb = std::make_unique<UecTransport>(nscc_reps(), l->b);
    lossy(*l);
    return l;
  };
  auto fresh = make();
  auto& fs = static_cast<UecTransport&>(*fresh->ta);
  const Trace want = run_and_take(*fresh, 60, [&] { return fs.cwnd(1); });
  ASSERT_EQ(fs.in_flight(), 0u);
  ASSERT_GT(fs.counters().rtx_trim, 0u);
  ASSERT_GT(fs.counters().ecn_echoes, 0u);

  auto l = make();
  auto& s = static_cast<UecTransport&>(*l->ta);
  run_and_take(*l, 25, [&] { return s.cwnd(1); });  // a different row first
  const auto before = s.counters();
  const uint64_t pool = PacketPool::global().outstanding();
  EXPECT_EQ(s.idle_at(), 0u);  // no credit pacer (cc: nscc): no timer that matters
  l->ta->reset();
  l->tb->reset();
  l->a.timer = l->b.timer = UINT64_MAX;  // the NIC withdraws its wake-ups
  l->now += 3000000000ull;  // 3 ms later
  const Trace got = run_and_take(*l, 60, [&] { return s.cwnd(1); });
  EXPECT_TRUE(got.sent == want.sent);
  EXPECT_EQ(got.delivered, want.delivered);
  EXPECT_EQ(got.window, want.window);
  EXPECT_EQ(s.counters().sent_new, before.sent_new + fs.counters().sent_new);
  EXPECT_EQ(s.counters().rtx_trim, before.rtx_trim + fs.counters().rtx_trim);
  EXPECT_EQ(PacketPool::global().outstanding(), pool);
  // Without the reset the second message continues the first's PSNs (the test can fail).
  auto k = make();
  run_and_take(*k, 25, [] { return uint64_t(0); });
  const Trace carried = run_and_take(*k, 60, [] { return uint64_t(0); });
  EXPECT_FALSE(carried.sent == want.sent);
}

TEST(RoceTransport, ResetRunsTheSameTrafficAsFresh) {
  auto make = [] {
    auto l = std::make_unique<Link>();
    l->a.clock = l->b.clock = &l->now;
    RoceParams r;
    r.dcqcn = true;
    r.rp.g = 1.0 / 256;
    r.rp.alpha_timer_ps = 1000000;
    r.rp.rate_timer_ps = 1500000;
    r.rp.rate_decrease_interval_ps = 4000000;
    r.rp.byte_counter_bytes = 10000000;
    r.rp.ai_bps = 400000000;
    r.rp.hai_bps = 4000000000ull;
    r.rp.min_rate_bps = 100000000;
    r.cnp_interval_ps = 4000000;
    r.wire_overhead_bytes = 106;
    l->ta = std::make_unique<RoceTransport>(r, l->a);
    l->tb = std::make_unique<RoceTransport>(r, l->b);
    lossy(*l);
    l->trim = [](Packet&) { return false; };  // RoCE packets are not trimmable
    return l;
  };
  auto rate = [](Link& l) {
    const Dcqcn* d = static_cast<RoceTransport&>(*l.ta).dcqcn(1);
    return d ? d->rate_bps() : 0;
  };
  auto fresh = make();
  const Trace want = run_and_take(*fresh, 40, [&] { return rate(*fresh); });
  ASSERT_GT(static_cast<RoceTransport&>(*fresh->ta).counters().cnps_received, 0u);
  ASSERT_LT(want.window, 400000000000ull);  // DCQCN cut the rate

  auto l = make();
  run_and_take(*l, 15, [&] { return rate(*l); });
  l->ta->reset();
  l->tb->reset();
  l->a.timer = l->b.timer = UINT64_MAX;
  l->now += 3000000000ull;
  const Trace got = run_and_take(*l, 40, [&] { return rate(*l); });
  EXPECT_TRUE(got.sent == want.sent);
  EXPECT_EQ(got.delivered, want.delivered);
  EXPECT_EQ(got.window, want.window);
  // Without the reset the second message starts at the first's rate and PSNs.
  auto k = make();
  run_and_take(*k, 15, [&] { return rate(*k); });
  k->now += 3000000000ull;
  const Trace carried = run_and_take(*k, 40, [&] { return rate(*k); });
  EXPECT_FALSE(carried.sent == want.sent && carried.window == want.window);
}

}  // namespace
}  // namespace fabricsim
