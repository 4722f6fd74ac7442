// Aggregation under the protocol model's round robin (docs/architecture.md, "Aggregation under
// round robin"): two endpoints, one link (tb::RingBench of 2: ep0's port 0 into ep1), ep0
// interleaving three data messages of 8 KiB posted at once, 4 KiB transactions (32 NVLink-like
// packets of 128 B; 64 packets a message, two transactions, one port: two rounds). The receive
// buffer (1 MiB) covers the credit loop, so the link runs back to back and every time is a closed
// form in w, the wire time of one packet, and the link latency.
//
// Per packet the round robin sends A B C A B C ...: A's last packet is the 190th of 192 (3 x 64 -
// 2), B's the 191st, C's the 192nd: the three finish together. Each test runs one turn rule and
// checks its delivery times against that closed form, and that the endpoint's per-port count of
// messages with bytes left to cut (port_uncut_, what "shares the port" reads: it replaced a scan of
// the queue on every cut) agrees with a scan of its queue whenever a message is sent or delivered.
#include <gtest/gtest.h>

#include "models/core/packet.h"
#include "models/core/scheduler.h"
#include "testbenches/bench.h"

using namespace fabricsim;

namespace {

constexpr uint64_t kLatencyPs = 100'000;  // 100 ns
constexpr uint64_t kMsgBytes = 8192;
constexpr int kMsgs = 3;

struct Outcome {
  std::vector<uint64_t> done_ps;  // per message, in posting order: delivered at ep1
  uint64_t w_ps = 0;              // wire time of one full packet
  bool counts_agree = true;
};

// What every test here builds: ep0 and ep1 on one link (1 MiB receive buffers), ep0's data
// messages round robin per port (set_interleave), and w, the wire time of one full packet.
struct TwoEndpoints {
  static EndpointParams params(uint64_t aggregate_bytes, PacketTurns in_packets) {
    Scheduler::instance();  // the calendar before any module
    EndpointParams ep;
    ep.ports = 2;
    ep.aggregate_bytes = aggregate_bytes;
    ep.aggregate_round_robin_packets = in_packets;
    return ep;
  }
  TwoEndpoints(uint64_t aggregate_bytes, PacketTurns in_packets)
      : link(tb::nvlink_like(kLatencyPs, 1 << 20)),
        bench(2, params(aggregate_bytes, in_packets), link),
        src(*bench.eps[0]),
        w_ps(transfer_ps(link.framing->packet_wire_bytes(link.packet_payload), link.rate_bps)) {
    src.set_interleave(true);
  }
  const LinkParams link;
  tb::RingBench bench;
  Endpoint& src;
  const uint64_t w_ps;
};

Outcome run(uint64_t aggregate_bytes, PacketTurns in_packets) {
  TwoEndpoints two(aggregate_bytes, in_packets);
  tb::RingBench& bench = two.bench;
  Endpoint& src = two.src;
  Outcome r;
  r.w_ps = two.w_ps;
  r.done_ps.assign(kMsgs, 0);
  std::vector<uint64_t> ids;
  const auto check = [&] { r.counts_agree = r.counts_agree && src.uncut_counts_agree(); };
  src.on_sent([&](uint64_t, PacketKind) { check(); });
  bench.eps[1]->on_delivery([&](const Endpoint::Delivery& d) {
    check();
    for (size_t i = 0; i < ids.size(); ++i)
      if (ids[i] == d.msg_id) r.done_ps[i] = sc_core::sc_time_stamp().value();
  });
  for (int i = 0; i < kMsgs; ++i) ids.push_back(src.send(1, kMsgBytes, uint64_t(i)));
  check();
  sc_core::sc_start();
  check();
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
  return r;
}

// The n-th packet of the link (1-based) is delivered at n x w + latency (store and forward; a
// transaction's tail is its last packet's).
uint64_t at(const Outcome& r, uint64_t n) { return n * r.w_ps + kLatencyPs; }

// The three messages finish with the a-th, b-th and c-th packet of the link.
void expect_done(const Outcome& r, uint64_t a, uint64_t b, uint64_t c) {
  EXPECT_TRUE(r.counts_agree);
  EXPECT_EQ(r.done_ps[0], at(r, a));
  EXPECT_EQ(r.done_ps[1], at(r, b));
  EXPECT_EQ(r.done_ps[2], at(r, c));
}

TEST(EndpointRoundRobin, PerPacketMessagesFinishTogether) {
  expect_done(run(0, PacketTurns::kNone), 190, 191, 192);
}

// aggregate_round_robin_packets: while two or more of them have bytes to cut, each turn is one
// packet: the same finishing times as per packet, exactly.
TEST(EndpointRoundRobin, PacketTurnsWhileSharedFinishAsPerPacket) {
  expect_done(run(4096, PacketTurns::kAll), 190, 191, 192);
}

// As shipped, whole transactions per turn (A B C A B C, 32 packets each): A finishes at its second
// turn, 128 packets in, 62 packets (a third of the run) before it does per packet; B 31 packets
// early.
TEST(EndpointRoundRobin, TransactionTurnsFinishOneAfterAnother) {
  expect_done(run(4096, PacketTurns::kNone), 128, 160, 192);
}

// aggregate_round_robin_packets: nvls takes packet turns for in-switch group messages only:
// these three are point to point, so their turns stay whole transactions.
TEST(EndpointRoundRobin, NvlsOnlyLeavesPointToPointTurnsWhole) {
  expect_done(run(4096, PacketTurns::kGroupOnly), 128, 160, 192);
}

// The count through the two other ways a message's bytes to cut change: routes recomputed
// (as after a fault: set_routes recounts) and abandon_queued (failure bypass: the rest of
// every queued message is dropped). When the first message has started whole on the wire,
// the routes are set again (the same ones) and the queue abandoned: the count must agree
// with the scan after each, be zero after the abandon, and only the first message arrive.
TEST(EndpointRoundRobin, CountsFollowNewRoutesAndAbandon) {
  TwoEndpoints two(4096, PacketTurns::kAll);
  const LinkParams& link = two.link;
  tb::RingBench& bench = two.bench;
  Endpoint& src = two.src;
  bool agree = true, after_abandon = false;
  uint64_t abandoned = 0, delivered = 0;
  src.on_sent([&](uint64_t, PacketKind) {
    agree = agree && src.uncut_counts_agree();
    if (after_abandon) return;
    after_abandon = true;
    src.set_routes({{}, {0}});
    agree = agree && src.uncut_counts_agree();
    abandoned = src.abandon_queued();
    agree = agree && src.uncut_counts_agree();
  });
  bench.eps[1]->on_delivery([&](const Endpoint::Delivery&) { ++delivered; });
  for (int i = 0; i < kMsgs; ++i) src.send(1, kMsgBytes, uint64_t(i));
  sc_core::sc_start();
  EXPECT_TRUE(agree);
  EXPECT_TRUE(after_abandon);
  // Packet turns A B C ...: when A's last packet (the 190th cut) starts, B and C have 63 of
  // their 64 packets cut; one packet each is left to cut.
  EXPECT_EQ(abandoned, 2u * link.packet_payload);
  EXPECT_EQ(delivered, 1u);
}

// The held last packet (docs/architecture.md, "The held last packet"): A and B, 8 KiB each,
// posted at once, A's data written by 100 w (its not_before). Turns A B A B of 32 packets:
// A's first transaction at 0-32 w, B's at 32-64 w, then A's second without its last packet
// (held) at 64-95 w and B's second from 95 w. A's last packet is released at 100 w, while
// B's transaction is on the wire. Per packet it waits there for one packet of B, not for
// all of B's transaction (until 127 w): it goes between B's packets, at the boundary of
// 100 w, and B's rest follows it (B ends at 128 w).
TEST(EndpointRoundRobin, ReleasedLastPacketGoesBetweenAnotherMessagesPackets) {
  TwoEndpoints two(4096, PacketTurns::kNone);
  tb::RingBench& bench = two.bench;
  Endpoint& src = two.src;
  const uint64_t w = two.w_ps;
  uint64_t a_id = 0, b_id = 0, a_done = 0, b_done = 0;
  bench.eps[1]->on_delivery([&](const Endpoint::Delivery& d) {
    const uint64_t t = sc_core::sc_time_stamp().value();
    if (d.msg_id == a_id) a_done = t;
    if (d.msg_id == b_id) b_done = t;
  });
  a_id = src.send(1, kMsgBytes, 0, PacketKind::kData, 0, 100 * w);
  b_id = src.send(1, kMsgBytes, 1);
  sc_core::sc_start();
  EXPECT_EQ(a_done, 101 * w + kLatencyPs);
  EXPECT_EQ(b_done, 128 * w + kLatencyPs);
  EXPECT_EQ(src.port(0).packets_between(), 1u);
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
}

}  // namespace
