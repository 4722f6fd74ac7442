// Acceptance 1 and 2: one link, back-to-back packets and credit-limited throughput.
#include <gtest/gtest.h>

#include <vector>

#include "models/core/timer.h"
#include "models/endpoint/endpoint.h"
#include "models/link/frame_framing.h"
#include "models/nvlink/flit_framing.h"
#include "models/switch/switch.h"
#include "models/switch/switch_kind.h"
#include "testbenches/bench.h"

using namespace fabricsim;

namespace {

struct Pair {
  Endpoint a, b;
  uint64_t done_ps = 0;
  uint64_t delivered = 0;
  Pair(const EndpointParams& ep, const LinkParams& link, const char* an = "a",
       const char* bn = "b", bool replay = false)
      : a(an, an, 0, ep), b(bn, bn, 1, ep) {
    bind_link(a.port(0), b.port(0), link, 1, replay);
    a.set_routes({{}, {0}});
    b.set_routes({{0}, {}});
    b.on_delivery([this](const Endpoint::Delivery& d) {
      done_ps = sc_core::sc_time_stamp().value();
      delivered += d.bytes;
    });
  }
};

EndpointParams one_port(uint64_t aggregate = 0) {
  EndpointParams ep;
  ep.ports = 1;
  ep.aggregate_bytes = aggregate;
  return ep;
}

}  // namespace

// 128 B payload in 16 B flits with 2 overhead flits = 10 flits = 160 B on the wire.
// At 200 Gb/s that is 6.4 ns per packet exactly.
TEST(Link, SinglePacketLatencyIsSerialisationPlusPropagation) {
  const uint64_t prop = 10'000;
  Pair p(one_port(), tb::nvlink_like(prop, 64 * 1024));
  p.a.send(1, 128, 1);
  sc_core::sc_start();
  EXPECT_EQ(p.done_ps, 6'400u + prop);
  EXPECT_EQ(p.delivered, 128u);
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
}

TEST(Link, BackToBackThroughputIsLineRateTimesFramingEfficiency) {
  const uint64_t prop = 10'000;
  const uint64_t packets = 20'000;
  LinkParams link = tb::nvlink_like(prop, 64 * 1024);
  Pair p(one_port(), link);
  p.a.send(1, packets * 128, 1);
  sc_core::sc_start();
  const double seconds = double(p.done_ps - prop) * 1e-12;
  const double payload_Bps = double(packets * 128) / seconds;
  const double expected = double(link.rate_bps) / 8 * 128.0 / 160.0;  // 20 GB/s
  EXPECT_NEAR(payload_Bps / expected, 1.0, 1e-3);
  EXPECT_EQ(p.done_ps, packets * 6'400 + prop);  // exact: no drift over 20k packets
  EXPECT_EQ(p.a.port(0).counters().tx_wire_bytes, packets * 160);
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
}

// A rate whose per-packet time is not a whole number of picoseconds: the carried
// remainder keeps the total exact to within 1 ps.
TEST(Link, SerialisationRemainderIsCarried) {
  LinkParams link = tb::nvlink_like(0, 64 * 1024);
  link.rate_bps = 212'500'000'000ull;  // 160 B -> 6023.529... ps
  const uint64_t packets = 10'000;
  Pair p(one_port(), link);
  p.a.send(1, packets * 128, 1);
  sc_core::sc_start();
  const uint64_t exact_floor = uint64_t(u128(packets * 160 * 8) * 1000000000000ull /
                                        link.rate_bps);
  EXPECT_LE(p.done_ps - exact_floor, 1u);
}

// A port's arrivals are linked through the packets, each carrying the next one's due time
// as a 32-bit picosecond delta from its own (Packet::next_due_delta); a gap of 2^32 ps
// (4.3 ms) or more is read from the next packet instead. On a 10 ms link two transactions
// sent 5 ms apart are in flight together with such a gap: each must still arrive
// serialisation + propagation after it was sent (a truncated delta would deliver the
// second ~0.7 ms early; a lost one would leave it undelivered).
TEST(Link, ArrivalsFarApartOnALongLinkKeepTheirTimes) {
  const uint64_t prop = 10'000'000'000;  // 10 ms
  const uint64_t ser = 6'400;            // 128 B payload, 160 B on the wire at 200 Gb/s
  Pair p(one_port(), tb::nvlink_like(prop, 64 * 1024));
  std::vector<uint64_t> at;
  p.b.on_delivery(
      [&](const Endpoint::Delivery&) { at.push_back(sc_core::sc_time_stamp().value()); });
  // tag 1 at 0; tags 2 and 3 at 5 ms (back to back: a small delta after a far one); tag 4
  // at 9.9 ms (4.9 ms after tag 3 is sent, while tags 1-3 are still on the link).
  TimerQueue later("later", [&](uint64_t tag) { p.a.send(1, 128, tag); });
  p.a.send(1, 128, 1);
  later.at(5'000'000'000, 2);
  later.at(5'000'000'000, 3);
  later.at(9'900'000'000, 4);
  sc_core::sc_start();
  EXPECT_EQ(at, (std::vector<uint64_t>{ser + prop, 5'000'000'000 + ser + prop,
                                       5'000'000'000 + 2 * ser + prop,
                                       9'900'000'000 + ser + prop}));
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
}

// With receive buffer B and credit round trip R (packet serialisation + forward latency
// + credit return latency), throughput = min(line rate, B / R).
TEST(Link, CreditLimitedThroughputIsBufferOverRoundTrip) {
  const uint64_t prop = 100'000;          // 100 ns each way
  const uint64_t buffer = 4 * 160;        // four packets
  const uint64_t packets = 4'000;
  LinkParams link = tb::nvlink_like(prop, buffer);
  Pair p(one_port(), link);
  p.a.send(1, packets * 128, 1);
  sc_core::sc_start();
  const double r_s = (6'400 + 2 * prop) * 1e-12;
  const double wire_Bps = std::min(double(link.rate_bps) / 8, double(buffer) / r_s);
  const double expected_payload_Bps = wire_Bps * 128.0 / 160.0;
  const double measured = double(packets * 128) / (double(p.done_ps) * 1e-12);
  EXPECT_NEAR(measured / expected_payload_Bps, 1.0, 0.01);
  EXPECT_GT(p.a.port(0).counters().credit_stall_ps, 0u);
}

TEST(Link, LargeBufferReachesLineRate) {
  const uint64_t prop = 100'000;
  const uint64_t buffer = 64 * 160;  // 64 x 6.4 ns = 409.6 ns > R = 206.4 ns
  const uint64_t packets = 20'000;
  LinkParams link = tb::nvlink_like(prop, buffer);
  Pair p(one_port(), link);
  p.a.send(1, packets * 128, 1);
  sc_core::sc_start();
  EXPECT_EQ(p.done_ps, packets * 6'400 + prop);
  EXPECT_EQ(p.a.port(0).counters().credit_stall_ps, 0u);
}

// Aggregated transactions keep wire time byte-exact: the same message over one link takes
// exactly as long as per-packet, including a short last packet.
TEST(Link, AggregationIsByteExactOnOneLink) {
  const uint64_t prop = 10'000;
  const uint64_t bytes = 1'000'000;  // 7812 full packets + one of 64 B
  Pair p(one_port(64 * 128), tb::nvlink_like(prop, 1 << 20));
  p.a.send(1, bytes, 1);
  sc_core::sc_start();
  const uint64_t wire = 7812 * 160 + (2 + 4) * 16;
  EXPECT_EQ(p.a.port(0).counters().tx_wire_bytes, wire);
  EXPECT_EQ(p.a.port(0).counters().tx_packets, 7813u);
  EXPECT_EQ(p.done_ps, wire * 8 * 1000 / 200 + prop);
  EXPECT_EQ(p.delivered, bytes);
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
}

// A port without link-level retry whose framing is a plain rule (flit, frame) and whose
// rate is whole picoseconds per byte frames and times its transactions itself (Port's
// plain link layer); with its replay buffer on (here with ber 0: no error is ever drawn)
// it calls the framing's link layer. Both must give the same times byte for byte: on frame
// framing (minimum-frame padding, gap) with a large buffer, messages in aggregated
// transactions of several packets with a short last one; on flit framing with request
// flits, through a receive buffer of four packets behind 100 ns (the credits bind: the
// endpoint then sends single packets), the same messages. Each with a header-only read
// request and its response.
TEST(Link, PlainLinkLayerTimesAsTheFramingsLinkLayer) {
  LinkParams frame = tb::nvlink_like(30'000, 64 * 1024);
  FrameFramingParams fp;
  fp.header_bytes = 18;
  fp.min_frame_bytes = 64;
  fp.gap_bytes = 20;
  frame.framing = std::make_shared<FrameFraming>(fp);
  frame.rate_bps = 100'000'000'000ull;  // 80 ps per byte
  frame.replay_buffer_bytes = 1 << 20;  // far more than the credits: never binds
  LinkParams flit = tb::nvlink_like(100'000, 4 * 160);
  FlitFramingParams lp;
  lp.flit_bytes = 16;
  lp.overhead_flits = 2;
  lp.request_flits = 1;
  flit.framing = std::make_shared<FlitFraming>(lp);
  flit.replay_buffer_bytes = 1 << 20;
  EndpointParams ep = one_port(8 * 128);  // transactions of up to 8 packets
  // aggregate_min_message 0 (aggregate every message) with a header-only read request:
  // its 0 bytes once made 0 pieces in Endpoint::cut_from (a division by zero).
  ep.aggregate_min_message = 0;
  Pair plain_frame(ep, frame, "a", "b"), layer_frame(ep, frame, "c", "d", true);
  Pair plain_flit(ep, flit, "e", "f"), layer_flit(ep, flit, "g", "h", true);
  std::vector<uint64_t> at[4];
  Pair* pairs[4] = {&plain_frame, &layer_frame, &plain_flit, &layer_flit};
  for (int i = 0; i < 4; ++i) {
    pairs[i]->b.on_delivery([&at, i](const Endpoint::Delivery&) {
      at[i].push_back(sc_core::sc_time_stamp().value());
    });
    pairs[i]->a.on_read_done([&at, i](uint32_t, uint64_t, uint64_t, uint64_t) {
      at[i].push_back(sc_core::sc_time_stamp().value());
    });
    pairs[i]->a.send(1, 100'037, 1);  // 781 full packets of 128 B and one of 69 B
    pairs[i]->a.read(1, 4'096, 2);    // a header-only request
    pairs[i]->a.send(1, 5'000, 3);
  }
  sc_core::sc_start();
  for (int i = 0; i < 4; ++i)  // the pairs compare what they should
    EXPECT_EQ(pairs[i]->a.port(0).plain_link_layer(), i % 2 == 0) << i;
  for (int i = 0; i < 4; i += 2) {
    ASSERT_EQ(at[i].size(), 3u);
    EXPECT_EQ(at[i], at[i + 1]);
    const Port::Counters c = pairs[i]->a.port(0).counters(), d = pairs[i + 1]->a.port(0).counters();
    EXPECT_EQ(c.tx_wire_bytes, d.tx_wire_bytes);
    EXPECT_EQ(c.tx_transactions, d.tx_transactions);
    EXPECT_EQ(c.busy_ps, d.busy_ps);
    EXPECT_EQ(c.credit_stall_ps, d.credit_stall_ps);
  }
  // Frame: transactions of several packets; flit: the credits bound.
  EXPECT_LT(plain_frame.a.port(0).counters().tx_transactions * 2,
            plain_frame.a.port(0).counters().tx_packets);
  EXPECT_GT(plain_flit.a.port(0).counters().credit_stall_ps, 0u);
  // Frame: 128 B payload -> 146 B frame + 20 B gap; the 69 B packet 87 + 20; the read
  // request pads to 64 + 20. 5000 B = 39 x 128 + 8 B (8 + 18 < 64: padded).
  EXPECT_EQ(plain_frame.a.port(0).counters().tx_wire_bytes,
            (781 + 39) * 166ull + 107 + 84 + 84);
  // Flit: 128 B -> 10 flits; 69 B -> 5 + 2 flits; the read request 1 flit; 8 B -> 3 flits.
  EXPECT_EQ(plain_flit.a.port(0).counters().tx_wire_bytes,
            (781 + 39) * 160ull + 7 * 16 + 16 + 3 * 16);
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
}

// The same through a cut-through switch: a switch port delivers a transaction when its
// first packet is in (its head time), so the head times of multi-packet transactions set
// when the crossbar and the next link start. Plain ports (i = 0) and ports through their
// link layer (i = 1) must deliver at the same picoseconds.
TEST(Link, PlainLinkLayerHeadTimesThroughACutThroughSwitch) {
  SwitchParams sp = defaults<SwitchParams>(switch_frame_params());
  sp.ports = 2;
  sp.pipeline_latency_ps = 100'000;
  sp.speedup = 2.0;
  sp.egress_buffer_bytes = 32 * 1024;
  LinkParams link = tb::nvlink_like(20'000, 64 * 1024);
  link.replay_buffer_bytes = 1 << 20;  // never binds
  EndpointParams ep = one_port(16 * 128);
  std::vector<std::unique_ptr<Endpoint>> eps;
  std::vector<std::unique_ptr<Switch>> sws;
  std::vector<uint64_t> at[2];
  for (int i = 0; i < 2; ++i) {
    const std::string n = std::to_string(i);
    sws.push_back(std::make_unique<Switch>(("sw" + n).c_str(), "sw" + n, sp, std::vector<int>{0, 1}));
    eps.push_back(std::make_unique<Endpoint>(("src" + n).c_str(), "src" + n, 0, ep));
    eps.push_back(std::make_unique<Endpoint>(("dst" + n).c_str(), "dst" + n, 1, ep));
    bind_link(eps[2 * i]->port(0), sws[i]->port(0), link, 1, i == 1);
    bind_link(eps[2 * i + 1]->port(0), sws[i]->port(1), link, 1, i == 1);
    sws[i]->set_routes({{0}, {1}});
    sws[i]->set_peers({SwitchPeer{0, 0, 0}, SwitchPeer{1, 1, 0}});
    eps[2 * i]->set_routes({{}, {0}});
    eps[2 * i + 1]->set_routes({{0}, {}});
    eps[2 * i + 1]->on_delivery(
        [&at, i](const Endpoint::Delivery&) { at[i].push_back(Port::now()); });
    eps[2 * i]->send(1, 100'037, 1);
    eps[2 * i]->send(1, 5'000, 2);
  }
  sc_core::sc_start();
  EXPECT_TRUE(sws[0]->port(1).plain_link_layer());
  EXPECT_FALSE(sws[1]->port(1).plain_link_layer());
  ASSERT_EQ(at[0].size(), 2u);
  EXPECT_EQ(at[0], at[1]);
  EXPECT_LT(eps[0]->port(0).counters().tx_transactions * 2, eps[0]->port(0).counters().tx_packets);
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
}

// Four sources send 2,000 packets each into one sink through a switch: the sink's link
// drains a quarter of what they send, so each source stops at 12.8 us with ~1,500 of its
// packets still in the switch's ingress buffer, whose credits come back over the next
// ~38 us while it no longer transmits (and so no longer absorbs them). They must not pile
// up: every 64 returns the receiver absorbs the due ones into the idle transmitter, whose
// credits are then all back (credits_check), with at most 64 plus those in flight (one
// 25.6 ns return per 5 ns link) still queued. Without it the source holds ~1,500.
TEST(Link, AnIdleTransmittersCreditReturnsDoNotPileUp) {
  const int n = 5;  // 4 sources, sink 4
  const uint64_t packets = 2'000;
  SwitchParams sp = defaults<SwitchParams>(switch_frame_params());
  sp.ports = n;
  sp.pipeline_latency_ps = 10'000;
  sp.input_queues = "voq";
  sp.arbiter = "islip";
  sp.egress_buffer_bytes = 2 * 160;
  LinkParams link = tb::nvlink_like(5'000, packets * 160);  // a source never waits for credits
  tb::StarBench bench(n, sp, one_port(), link);
  uint64_t delivered = 0;
  bench.eps[4]->on_delivery([&](const Endpoint::Delivery& d) { delivered += d.bytes; });
  for (int i = 0; i < 4; ++i) bench.eps[size_t(i)]->send(4, packets * 128, uint64_t(i + 1));
  sc_core::sc_start();
  EXPECT_EQ(delivered, 4 * packets * 128);
  // The sink received for ~4 x 12.8 us: the sources were idle for most of it.
  EXPECT_GT(Port::now(), 50'000'000u);
  for (int i = 0; i < 4; ++i) {
    const Port& src = bench.eps[size_t(i)]->port(0);
    EXPECT_EQ(src.counters().tx_transactions, packets);
    EXPECT_LE(src.credit_returns_held(), 64u + 2u) << "source " << i;
    EXPECT_EQ(src.credits_check(), "") << "source " << i;
  }
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
}

// A transmitter's counters live in its receiver's counter line (the line the hop writes
// anyway; models/link/port.h, "Line 2"): each port still reports its own direction.
// Unequal traffic both ways tells the directions apart.
TEST(Link, EachPortReportsItsOwnDirectionsCounters) {
  Pair p(one_port(), tb::nvlink_like(10'000, 64 * 1024));
  p.a.send(1, 10 * 128, 1);
  p.b.send(0, 3 * 128, 2);
  sc_core::sc_start();
  // Port `c` sent `sent` 128 B packets (160 B on the wire, 6.4 ns each) and received `got`.
  auto expect_counts = [](const Port::Counters& c, uint64_t sent, uint64_t got) {
    EXPECT_EQ(c.tx_packets, sent);
    EXPECT_EQ(c.tx_payload_bytes, sent * 128);
    EXPECT_EQ(c.tx_wire_bytes, sent * 160);
    EXPECT_EQ(c.busy_ps, sent * 6'400);
    EXPECT_EQ(c.rx_packets, got);
    EXPECT_EQ(c.rx_payload_bytes, got * 128);
  };
  expect_counts(p.a.port(0).counters(), 10, 3);
  expect_counts(p.b.port(0).counters(), 3, 10);
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
}

// A port's SystemC side is its PortModule, under the name the port had when it was the
// module itself ("a.port_1", its sockets "a.port_1.tx" and "a.port_1.rx"); the ports
// themselves sit side by side in memory (models/link/port.h, "Layout"), and a packet
// crosses a link between two ports made that way as between any two (the first test's
// timing).
TEST(Link, PortsKeepTheirSystemCNamesAndSitSideBySide) {
  EndpointParams ep;
  ep.ports = 3;
  Endpoint a("a", "a", 0, ep), b("b", "b", 1, ep);
  for (int i = 0; i < 3; ++i) {
    const std::string name = "a.port_" + std::to_string(i);
    EXPECT_NE(dynamic_cast<PortModule*>(sc_core::sc_find_object(name.c_str())), nullptr)
        << name;
    EXPECT_NE(sc_core::sc_find_object((name + ".tx").c_str()), nullptr) << name;
    EXPECT_NE(sc_core::sc_find_object((name + ".rx").c_str()), nullptr) << name;
  }
  EXPECT_EQ(a.port(2).display_name(), std::string("a.port[2]"));
  if (Port::kSideBySide) {
    const char* first = reinterpret_cast<const char*>(&a.port(0));
    for (int i = 1; i < 3; ++i)
      EXPECT_EQ(reinterpret_cast<const char*>(&a.port(i)) - first, ptrdiff_t(i * sizeof(Port)))
          << "port " << i;
  }
  const uint64_t prop = 10'000;
  for (int i = 0; i < 3; ++i) bind_link(a.port(i), b.port(i), tb::nvlink_like(prop, 64 * 1024));
  EXPECT_EQ(a.port(1).peer_name(), std::string("b.port[1]"));
  a.set_routes({{}, {1}});  // the packet takes the middle link
  b.set_routes({{1}, {}});
  uint64_t done_ps = 0;
  b.on_delivery([&](const Endpoint::Delivery&) { done_ps = sc_core::sc_time_stamp().value(); });
  a.send(1, 128, 1);
  sc_core::sc_start();
  EXPECT_EQ(done_ps, 6'400u + prop);
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
}

// Control packets between the packets of an aggregated transaction (Port::kick_between;
// docs/architecture.md). Three endpoints on one switch (cut-through, no pipeline latency,
// crossbar speedup 8, so that a crossbar transfer holds an input or output for an eighth of
// its wire time); 10 ns links; transactions up to 16 packets. ep0 sends 16 packets (2 KiB,
// 160 B and 6.4 ns each on the wire) to ep1 as one transaction at 0: its port's wire is
// busy to 102.4 ns. An 8-byte acknowledgement is 3 flits, 48 B, 1.92 ns on the wire.
namespace {

struct Between {
  tb::StarBench bench;
  struct At {
    int ep;
    uint64_t tag, ps;
  };
  std::vector<At> at;  // per delivery, in order
  static SwitchParams params(double speedup) {
    SwitchParams sp = defaults<SwitchParams>(switch_frame_params());
    sp.ports = 3;
    sp.pipeline_latency_ps = 0;
    sp.speedup = speedup;
    sp.egress_buffer_bytes = 64 * 1024;
    return sp;
  }
  explicit Between(double speedup = 8.0)
      : bench(3, params(speedup), one_port(16 * 128), tb::nvlink_like(10'000, 64 * 1024)) {
    for (int i = 0; i < 3; ++i)
      bench.eps[size_t(i)]->on_delivery(
          [this, i](const Endpoint::Delivery& d) { at.push_back({i, d.tag, Port::now()}); });
  }
  uint64_t time_of(uint64_t tag) const {  // when message `tag` was delivered
    for (const At& a : at)
      if (a.tag == tag) return a.ps;
    return 0;
  }
  // ep0's 16 packets to ep1 (tag 1) at 0 and an 8-byte control message `kind` from `from`
  // to `to` (tag 2) at `at_ps`; then the run.
  struct Control {
    int from, to;
    PacketKind kind;
  };
  Control control{};
  TimerQueue later{"later", [this](uint64_t) {
                     bench.eps[size_t(control.from)]->send(uint32_t(control.to), 8, 2,
                                                            control.kind);
                   }};
  void run(Control c, uint64_t at_ps) {
    control = c;
    bench.eps[0]->send(1, 16 * 128, 1);
    later.at(at_ps, 0);
    sc_core::sc_start();
  }
};

// An ack alone from one endpoint to another, all idle: 1.92 ns on the sender's wire, 10
// ns of link, 0.24 ns through the crossbar (48 B at 8 x 200 Gb/s), 1.92 ns on the
// switch's wire, 10 ns of link.
constexpr uint64_t kAckAlone = 1'920 + 10'000 + 240 + 1'920 + 10'000;

}  // namespace

// An endpoint's acknowledgement queued while its port sends a transaction of 16 packets
// leaves at the next boundary between two of them (25.6 ns, the 4th; queued at 20 ns), as
// per packet, not after the whole transaction (102.4 ns): it reaches ep2 at 25.6 ns + the
// time of an ack alone, which ep1's ack to ep2 at 0 measures. The transaction's rest
// leaves after it: the port is busy 16 x 6.4 + 1.92 ns.
TEST(Link, AcknowledgementGoesBetweenTheTransactionsPackets) {
  Between b;
  b.bench.eps[1]->send(2, 8, 3, PacketKind::kAck);
  b.run({0, 2, PacketKind::kAck}, 20'000);
  ASSERT_EQ(b.at.size(), 3u);
  EXPECT_EQ(b.time_of(3), kAckAlone);
  EXPECT_EQ(b.time_of(2), 25'600 + kAckAlone);
  const Port& src = b.bench.eps[0]->port(0);
  EXPECT_EQ(src.packets_between(), 1u);
  EXPECT_EQ(src.counters().tx_transactions, 2u);
  EXPECT_EQ(src.counters().busy_ps, 16 * 6'400 + 1'920u);
  // The data: through the switch's wire from 17.2 ns (its first packet crossed) to its
  // tail, 102.4 + 10 + 0.8 (its last packet crossing) + 6.4 ns, then 10 ns of link. The
  // switch took the transaction at its head, with the tail it had when it left ep0, before
  // the ack went between its packets: that tail is 1.92 ns early there (the bound of the
  // model at a cut-through receiver: one packet's wire time per packet between).
  EXPECT_GE(b.time_of(1), 102'400 + 10'000 + 800 + 6'400 + 10'000u);
  EXPECT_LE(b.time_of(1), 102'400 + 10'000 + 800 + 6'400 + 10'000 + 1'920u);
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
}

// Two endpoints joined by two links (ports 0 and 1 both reach the other end), 4 KiB
// transactions of 32 NVLink-like packets (w = 6.4 ns each). At 0, a sends a one-packet
// message A of 64 B (3.84 ns on the wire) and an 8 KiB message B, cut into two 4 KiB
// transactions: port 0 takes A, port 1 B's first transaction at 0, port 0 B's second at
// 3.84 ns. Their boundaries between packets are at 3.84 ns + k w and k w. A head (a
// control message of another message than the ones on the wire) queued at 10.2 w, both
// ports busy, goes at the earliest boundary, port 0's at 67.84 ns, and only port 0 is
// woken for it (Endpoint::send, Port::offer_between): nothing wakes between 70 ns (after
// port 0's own look for a next packet at 67.84 + 1.92 ns) and 73.6 ns, where port 1's
// boundary (70.4 ns) is. Waking both, port 1 woke there to find the head gone.
TEST(Link, ControlPacketWakesOnlyThePortWithTheEarliestBoundary) {
  EndpointParams ep;
  ep.ports = 2;
  ep.aggregate_bytes = 4096;
  const LinkParams link = tb::nvlink_like(100'000, 1 << 20);
  Endpoint a("a", "a", 0, ep), b("b", "b", 1, ep);
  bind_link(a.port(0), b.port(0), link);
  bind_link(a.port(1), b.port(1), link);
  a.set_routes({{}, {0, 1}});
  b.set_routes({{0, 1}, {}});
  const uint64_t w = transfer_ps(link.framing->packet_wire_bytes(128), link.rate_bps);
  const uint64_t a_w = transfer_ps(link.framing->packet_wire_bytes(64), link.rate_bps);
  const uint64_t head_w =
      transfer_ps(link.framing->packet_wire_bytes(8, PacketKind::kHead), link.rate_bps);
  ASSERT_EQ(w, 6'400u);
  ASSERT_EQ(a_w, 3'840u);
  ASSERT_EQ(head_w, 1'920u);
  uint64_t head_at = 0;
  b.on_delivery([&](const Endpoint::Delivery& d) {
    if (d.tag == 3) head_at = Port::now();
  });
  std::vector<uint64_t> events;  // kernel events counted at each look
  TimerQueue later{"later", [&](uint64_t what) {
                     if (what == 0)
                       a.send(1, 8, 3, PacketKind::kHead);
                     else
                       events.push_back(g_kernel_events);
                   }};
  a.send(1, 64, 1);
  a.send(1, 8192, 2);
  later.at(10 * w + w / 5, 0);
  later.at(70'000, 1);
  later.at(73'600, 1);
  sc_core::sc_start();
  EXPECT_EQ(head_at, a_w + 10 * w + head_w + 100'000);
  EXPECT_EQ(a.port(0).packets_between(), 1u);
  EXPECT_EQ(a.port(1).packets_between(), 0u);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1] - events[0], 1u);  // the second look's own wake-up only
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
}

// At a switch's egress, first in, first out: an ack that reaches the egress to ep1 while
// ep0's transaction streams through it follows the packets of it that had crossed, as per
// packet. ep2's ack, sent at 50 ns, has crossed at 62.16 ns; the transaction's 16 packets
// crossed evenly from 17.2 to 113.2 ns, 8 of them by then; its egress wire runs from 17.2
// to 119.6 ns, a packet each 6.4 ns, so the ack leaves at 68.4 ns (after the 8th, which
// per packet crosses at 68.4 ns too: ep0 sent it by 57.6 ns) and reaches ep1 at 80.32 ns,
// 6.24 ns later than alone. The transaction's rest follows it: its tail reaches ep1
// 1.92 ns later than it would without the ack (ep1 takes it at its tail, and moves it).
TEST(Link, SwitchEgressSendsAPacketBetweenATransactionsPacketsInArrivalOrder) {
  Between b;
  b.run({2, 1, PacketKind::kAck}, 50'000);
  ASSERT_EQ(b.at.size(), 2u);
  EXPECT_EQ(b.time_of(2), 80'320u);
  EXPECT_EQ(b.time_of(1), 119'600 + 1'920 + 10'000u);
  EXPECT_EQ(b.bench.sw->port(1).packets_between(), 1u);
  EXPECT_EQ(b.bench.eps[0]->port(0).packets_between(), 0u);
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
}

// Not between the packets of a transaction with its own source and destination: a flag
// that ep0 writes to ep1 after its data (queued at 20 ns) was queued after all of them,
// and arrives after the data.
TEST(Link, FlagDoesNotOvertakeItsOwnData) {
  Between b;
  b.run({0, 1, PacketKind::kFlag}, 20'000);
  ASSERT_EQ(b.at.size(), 2u);
  EXPECT_EQ(b.at[0].tag, 1u);  // the data, then the flag
  EXPECT_LT(b.time_of(1), b.time_of(2));
  EXPECT_EQ(b.bench.eps[0]->port(0).packets_between(), 0u);
  EXPECT_EQ(b.bench.sw->port(1).packets_between(), 0u);
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
}

// Through the crossbar, as on the wire: at speedup 1 ep0's transaction of 16 packets holds
// the switch's input 0 and output 1 for its whole crossing, 102.4 ns from its head's
// arrival at 16.4 ns, one packet each 6.4 ns. A control packet of one that needs that
// input or output crosses at the next boundary between two of its packets, as per packet
// it waits for at most one packet, not for the whole crossing (until 118.8 ns).
// Input: ep0's ack to ep2 leaves ep0 between its packets at 25.6 ns, reaches the switch at
// 37.52 ns, crosses from the boundary at 42.0 ns (1.92 ns, 48 B at 200 Gb/s) and reaches
// ep2 at 43.92 + 1.92 + 10 ns.
TEST(Link, AcknowledgementCrossesBetweenATransactionsPacketsAtItsInput) {
  Between b(1.0);
  b.run({0, 2, PacketKind::kAck}, 20'000);
  ASSERT_EQ(b.at.size(), 2u);
  EXPECT_EQ(b.time_of(2), 42'000 + 1'920 + 1'920 + 10'000u);
  EXPECT_EQ(b.bench.sw->stats_json(0).value("crossed_between", 0), 1);
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
}

// Output: ep2's ack to ep1, sent at 20 ns, reaches the switch at 31.92 ns, while the
// transaction holds output 1; it crosses from the boundary at 35.6 ns and ends its
// crossing at 37.52 ns. At the egress to ep1, first in, first out: the packets of the
// transaction that had crossed by then (3: they end crossing at 22.8, 29.2 and 35.6 ns)
// leave first. The egress wire sends them from 22.8 ns, one each 6.4 ns, so the ack
// leaves at 42.0 ns and reaches ep1 at 42.0 + 1.92 + 10 ns.
TEST(Link, AcknowledgementCrossesBetweenATransactionsPacketsAtItsOutput) {
  Between b(1.0);
  b.run({2, 1, PacketKind::kAck}, 20'000);
  ASSERT_EQ(b.at.size(), 2u);
  EXPECT_EQ(b.time_of(2), 42'000 + 1'920 + 10'000u);
  EXPECT_EQ(b.bench.sw->stats_json(0).value("crossed_between", 0), 1);
  EXPECT_EQ(b.bench.sw->port(1).packets_between(), 1u);
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
}
