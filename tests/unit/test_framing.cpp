// Protocol framing, the per-packet link layer and byte-exact serialisation
// (models/nvlink/flit_framing.h, models/link/frame_framing.h, packet_link_layer.h,
// serializer.h).
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/core/packet.h"
#include "models/core/types.h"
#include "models/link/frame_framing.h"
#include "models/link/link_params.h"
#include "models/link/serializer.h"
#include "models/nvlink/flit_framing.h"

namespace fabricsim {
namespace {

// NVLink-style: 16 B flits, header (with CRC) + address/byte-enable flit per packet.
FlitFraming nvlink() {
  FlitFramingParams f;
  f.flit_bytes = 16;
  f.overhead_flits = 2;
  return FlitFraming(f);
}

// Plain Ethernet: 14 B MAC header + 4 B FCS = 18 B, 64 B minimum frame,
// 7 B preamble + 1 B SFD + 12 B inter-frame gap = 20 B.
FrameFramingParams ethernet_params() {
  FrameFramingParams f;
  f.header_bytes = 18;
  f.min_frame_bytes = 64;
  f.gap_bytes = 20;
  return f;
}
FrameFraming ethernet() { return FrameFraming(ethernet_params()); }

// RoCEv2: Ethernet 18 (incl. FCS) + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 = 62 B per packet.
FrameFraming rocev2() {
  FrameFramingParams f = ethernet_params();
  f.header_bytes = 18 + 20 + 8 + 12 + 4;
  return FrameFraming(f);
}

Packet transaction(uint32_t payload, uint32_t packet_payload, uint32_t npackets) {
  Packet p;
  p.payload_bytes = payload;
  p.packet_payload = packet_payload;
  p.npackets = npackets;
  return p;
}

// ---------------------------------------------------------------------------------------
// Flits

TEST(Framing, FlitPacketWireBytes) {
  const FlitFraming f = nvlink();
  EXPECT_EQ(f.packet_wire_bytes(128), 160u);  // 8 data + 2 overhead flits
  EXPECT_EQ(f.packet_wire_bytes(256), 288u);  // 16 + 2
  EXPECT_EQ(f.packet_wire_bytes(1), 48u);     // a partial flit is a whole flit: 1 + 2
  EXPECT_EQ(f.packet_wire_bytes(0), 32u);     // overhead only
  EXPECT_EQ(f.packet_wire_bytes(16), 48u);    // exactly one data flit
  EXPECT_EQ(f.packet_wire_bytes(17), 64u);    // one byte over: two data flits
}

TEST(Framing, FlitEfficiency) {
  const FlitFraming f = nvlink();
  EXPECT_DOUBLE_EQ(f.efficiency(128), 0.8);        // 128 / 160
  EXPECT_DOUBLE_EQ(f.efficiency(256), 256.0 / 288.0);
  EXPECT_DOUBLE_EQ(f.efficiency(0), 0.0);
}

TEST(Framing, FlitOverheadFlitsAndFlitSizeAreParameters) {
  FlitFramingParams p = nvlink().params();
  p.overhead_flits = 1;
  EXPECT_EQ(FlitFraming(p).packet_wire_bytes(128), 144u);  // 8 + 1 flits
  p.flit_bytes = 32;
  EXPECT_EQ(FlitFraming(p).packet_wire_bytes(128), 160u);  // 4 + 1 flits of 32 B
  EXPECT_EQ(FlitFraming(p).packet_wire_bytes(33), 96u);    // 2 + 1
}

// ---------------------------------------------------------------------------------------
// Frames

TEST(Framing, EthernetFrameWireBytes) {
  const FrameFraming f = ethernet();
  EXPECT_EQ(f.packet_wire_bytes(1500), 1538u);  // the classic 1538 B per MTU frame
  EXPECT_EQ(f.packet_wire_bytes(1), 84u);       // padded to 64 B + 20 B: the classic minimum
  EXPECT_EQ(f.packet_wire_bytes(0), 84u);
  EXPECT_EQ(f.packet_wire_bytes(46), 84u);      // 46 + 18 = 64: exactly the minimum frame
  EXPECT_EQ(f.packet_wire_bytes(47), 85u);      // no padding above the minimum
  EXPECT_NEAR(f.efficiency(1500), 1500.0 / 1538.0, 1e-15);
}

TEST(Framing, RoceFrameWireBytes) {
  const FrameFraming f = rocev2();
  EXPECT_EQ(f.packet_wire_bytes(1500), 1500u + 62u + 20u);  // 1582
  EXPECT_EQ(f.packet_wire_bytes(1), 84u);                   // 63 B frame padded to 64
  EXPECT_EQ(f.packet_wire_bytes(2), 84u);                   // 64 B frame, no padding
  EXPECT_EQ(f.packet_wire_bytes(3), 85u);
  EXPECT_EQ(f.packet_wire_bytes(4096), 4096u + 82u);
}

// ---------------------------------------------------------------------------------------
// Transactions: every packet framed separately

TEST(Framing, TransactionIsSumOverPacketsWithShortLastPacket) {
  // 600 B in packets of 128 B: four full packets and a last one of 600 - 4*128 = 88 B.
  const Packet p = transaction(600, 128, 5);
  ASSERT_EQ(p.last_packet_payload(), 88u);
  const FlitFraming nv = nvlink();
  const FrameFraming eth = ethernet(), roce = rocev2();
  const Framing* const framings[] = {&nv, &eth, &roce};
  for (const Framing* f : framings) {
    uint64_t sum = 0;
    for (uint32_t k = 0; k < 4; ++k) sum += f->packet_wire_bytes(128);
    sum += f->packet_wire_bytes(88);
    EXPECT_EQ(f->transaction_wire_bytes(p), sum) << f->describe();
  }
  // Explicit values: flits 4 x 160 + (6 data + 2) x 16 = 768;
  // RoCEv2 4 x (128 + 62 + 20) + (88 + 62 + 20) = 840 + 170 = 1010.
  EXPECT_EQ(nvlink().transaction_wire_bytes(p), 768u);
  EXPECT_EQ(rocev2().transaction_wire_bytes(p), 1010u);
}

TEST(Framing, TransactionOfWholePackets) {
  const Packet p = transaction(512, 128, 4);
  ASSERT_EQ(p.last_packet_payload(), 128u);
  EXPECT_EQ(nvlink().transaction_wire_bytes(p), 4u * 160u);
}

TEST(Framing, SinglePacketTransaction) {
  EXPECT_EQ(nvlink().transaction_wire_bytes(transaction(100, 128, 1)), 16u * (7 + 2));
  EXPECT_EQ(ethernet().transaction_wire_bytes(transaction(10, 1500, 1)), 84u);
  // Zero-payload control transaction (ack/flag): one packet of overhead.
  EXPECT_EQ(nvlink().transaction_wire_bytes(transaction(0, 0, 1)), 32u);
}

TEST(Framing, DescribeNamesTheParameters) {
  EXPECT_NE(nvlink().describe().find("16"), std::string::npos);
  EXPECT_NE(ethernet().describe().find("64"), std::string::npos);
}

// A receiver (a switch port) uses a packet once the whole packet is in, and a packet is
// usable when its last byte is: no slack for the replay buffer's ack round trip.
TEST(Framing, PerPacketFramingsReceiveOnePacketAndHaveNoReplaySlack) {
  EXPECT_EQ(nvlink().receive_unit_bytes(128), 160u);
  EXPECT_EQ(rocev2().receive_unit_bytes(1500), 1582u);
  EXPECT_EQ(ethernet().receive_unit_bytes(1), 84u);
  EXPECT_EQ(nvlink().replay_slack_bytes(), 0u);
  EXPECT_EQ(rocev2().replay_slack_bytes(), 0u);
}

// ---------------------------------------------------------------------------------------
// The per-packet link layer (no SystemC needed): 200 Gb/s = 40 ps per byte.

// A single packet is store-and-forward: usable at the far end when its last byte is sent.
// A transaction of several packets cuts through: its head is its first packet, its tail
// cannot be sent before its last packet has arrived here (tail_ps) and been serialised.
TEST(PacketLinkLayer, SinglePacketsAndCutThroughTransactions) {
  LinkParams l;
  l.rate_bps = 200'000'000'000ull;
  l.framing = std::make_shared<const FlitFraming>(nvlink());
  const std::unique_ptr<LinkLayer> ll = l.framing->make_link_layer(l, 1, "t.port[0]");

  // Sends `p` at `t`: `wire` bytes, first packet usable at `head`, last at `tail`, when
  // the transmitter is free again too.
  const auto sends = [&](const Packet& p, uint64_t t, uint64_t wire, uint64_t head,
                         uint64_t tail) {
    ASSERT_EQ(ll->prepare(p), wire);
    const TxTiming tm = ll->send(p, t, wire);
    EXPECT_EQ(tm.head_ps, head);
    EXPECT_EQ(tm.tail_ps, tail);
    EXPECT_EQ(tm.free_ps, tail);
  };
  sends(transaction(128, 128, 1), 1'000, 160, 1'000 + 6'400, 1'000 + 6'400);
  // 600 B: 4 x 160 + (6 + 2) x 16 = 768 B, 30.72 ns; the first packet takes 6.4 ns, the
  // last (88 B, 128 wire bytes) 5.12 ns.
  Packet five = transaction(600, 128, 5);
  five.tail_ps = 20'000;  // its last packet was in by then: the line sets the tail
  sends(five, 10'000, 768, 10'000 + 6'400, 10'000 + 30'720);
  five.tail_ps = 100'000;  // it comes in slower than it leaves: the tail waits for it
  sends(five, 50'000, 768, 50'000 + 6'400, 100'000 + 5'120);
  EXPECT_EQ(ll->retry_counters().crc_errors, 0u);
}

// ---------------------------------------------------------------------------------------
// Serializer

// 200 Gb/s = 25 B/ns = 40 ps per byte exactly: 160 B always takes 6400 ps.
TEST(Serializer, ExactRateHasNoRemainder) {
  Serializer s(200'000'000'000ull);
  EXPECT_EQ(s.rate_bps(), 200'000'000'000ull);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(s.take_ps(160), 6400u) << "call " << i;
  EXPECT_EQ(s.peek_ps(160), 6400u);
}

// 212.5 Gb/s: 160 B = 1280 bits = 6023.5294... ps. The carried remainder makes the running
// sum equal floor(exact total) after every call, so a million packets never drift.
TEST(Serializer, CarriedRemainderKeepsLongRunsExact) {
  const uint64_t rate = 212'500'000'000ull;
  const uint64_t bytes = 160;
  const uint64_t n = 1'000'000;
  Serializer s(rate);
  uint64_t sum = 0;
  for (uint64_t k = 1; k <= n; ++k) {
    const uint64_t t = s.take_ps(bytes);
    ASSERT_TRUE(t == 6023u || t == 6024u) << "call " << k << " took " << t;
    sum += t;
    if (k % 9973 == 0 || k == n) {
      const u128 exact_num = u128(k) * bytes * 8u * 1'000'000'000'000ull;
      ASSERT_EQ(sum, uint64_t(exact_num / rate)) << "after " << k << " calls";
    }
  }
  // Exact total: 1e6 x 1280e12 / 212.5e9 ps = 6,023,529,411.76... ps.
  EXPECT_EQ(sum, 6'023'529'411ull);
  const double exact = double(n) * 1280e12 / 212.5e9;
  EXPECT_LT(std::abs(double(sum) - exact), 1.0);
}

// Mixed sizes: the sum still equals floor(total bits x 1e12 / rate).
TEST(Serializer, MixedSizesSumToExactTotal) {
  const uint64_t rate = 212'500'000'000ull;
  Serializer s(rate);
  const std::vector<uint64_t> sizes{1, 48, 160, 288, 84, 1538, 7, 13};
  uint64_t sum = 0, bytes = 0;
  for (int rep = 0; rep < 10'000; ++rep)
    for (uint64_t b : sizes) {
      sum += s.take_ps(b);
      bytes += b;
    }
  const u128 exact_num = u128(bytes) * 8u * 1'000'000'000'000ull;
  EXPECT_EQ(sum, uint64_t(exact_num / rate));
}

// peek_ps rounds up and does not touch the carried remainder.
TEST(Serializer, PeekRoundsUpAndDoesNotAdvance) {
  const uint64_t rate = 212'500'000'000ull;
  Serializer a(rate), b(rate);
  EXPECT_EQ(a.peek_ps(160), 6024u);  // ceil(6023.53)
  EXPECT_EQ(a.peek_ps(1), 38u);      // ceil(8e12 / 212.5e9 = 37.65)
  EXPECT_EQ(a.peek_ps(0), 0u);
  EXPECT_EQ(a.peek_ps(160), transfer_ps(160, rate));
  // Interleaving peeks must not change what take_ps returns.
  for (int i = 0; i < 1000; ++i) {
    (void)a.peek_ps(160 + uint64_t(i));
    ASSERT_EQ(a.take_ps(160), b.take_ps(160)) << "call " << i;
  }
  // At a rate that divides exactly, peek equals take.
  Serializer c(200'000'000'000ull);
  EXPECT_EQ(c.peek_ps(160), 6400u);
  // 3 b/s: 1 B = 8e12 / 3 = 2666666666666.67 ps -> 2666666666667.
  Serializer d(3);
  EXPECT_EQ(d.peek_ps(1), 2'666'666'666'667ull);
  // take_ps floors and carries: 8e12 = 3 x 2666666666666 + 2, then (8e12 + 2) = 3 x
  // 2666666666667 + 1, then (8e12 + 1) = 3 x 2666666666667: three bytes take 8e12 ps exactly.
  EXPECT_EQ(d.take_ps(1), 2'666'666'666'666ull);
  EXPECT_EQ(d.take_ps(1), 2'666'666'666'667ull);
  EXPECT_EQ(d.take_ps(1), 2'666'666'666'667ull);
}

// The port's plain link layer frames with Framing::plain's rule instead of calling
// packet_wire_bytes: the two must agree for every payload (0: a header-only packet) and
// packet kind, and a framing the rule cannot express must say so.
TEST(Framing, PlainRuleIsPacketWireBytes) {
  FlitFramingParams req;
  req.flit_bytes = 16;
  req.overhead_flits = 2;
  req.request_flits = 1;
  FlitFramingParams odd = req;
  odd.flit_bytes = 24;  // not a power of two: no plain rule
  FrameFramingParams small = ethernet_params();
  small.min_frame_bytes = 0;
  const std::vector<std::shared_ptr<Framing>> plain = {
      std::make_shared<FlitFraming>(nvlink()), std::make_shared<FlitFraming>(req),
      std::make_shared<FrameFraming>(ethernet()), std::make_shared<FrameFraming>(small)};
  for (const std::shared_ptr<Framing>& f : plain) {
    PlainFraming pf;
    ASSERT_TRUE(f->plain(&pf)) << f->describe();
    for (uint32_t payload = 0; payload <= 4200; ++payload)
      for (PacketKind k : {PacketKind::kData, PacketKind::kReadReq, PacketKind::kAck})
        ASSERT_EQ(pf.wire(payload), f->packet_wire_bytes(payload, k))
            << f->describe() << ", payload " << payload;
  }
  PlainFraming pf;
  EXPECT_FALSE(FlitFraming(odd).plain(&pf));
}

}  // namespace
}  // namespace fabricsim
