// UALink 1.0 stream framing (models/ualink/ualink_framing.h: UALinkFraming; flit_stream.h,
// stream_link_layer.h).
// Pure C++: wire bytes of 64/128/256 B requests, reads and responses; exact long-run
// totals of the stream (time and wire bytes); the ~93% payload efficiency of large writes.
#include <cstdint>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "models/core/packet.h"
#include "models/core/rng.h"
#include "models/core/types.h"
#include "models/link/link_params.h"
#include "models/link/link_type.h"
#include "models/ualink/flit_stream.h"
#include "models/ualink/ualink_framing.h"

namespace fabricsim {
namespace {

// UALink 1.0 as configured in configs/ualink_pod8.yaml: 64 B TL flits (32 B half-flits),
// 16 B request / 8 B response fields, 640 B DL flits with 12 B of header + segment headers
// + CRC (628 B of TL stream), one 680 B RS(544,514) codeword per DL flit.
// The declared defaults of framing: ualink.
UALinkFraming ualink() {
  return UALinkFraming(defaults<UALinkFramingParams>(framings().at("ualink").params));
}

// x4 port at the 212.5 GT/s signalling rate: 850 Gb/s; one 680 B codeword = 6400 ps.
constexpr uint64_t kX4 = 4 * 212'500'000'000ull;
constexpr uint64_t kX1 = 212'500'000'000ull;

TEST(UALinkFraming, DefaultsAreUALink10) {
  const UALinkFraming f = ualink();
  EXPECT_EQ(f.dl_payload_bytes(), 628u);  // 640 - 3 B flit header - 5 x 1 B segment hdr - 4 B CRC
  EXPECT_EQ(f.params().fec_codeword_bytes, 680u);
  // 680 / 640 = 212.5 / 200: the codeword overhead is exactly what separates the
  // signalling rate from the 200 Gb/s data rate, so counting codeword bytes at 212.5 Gb/s
  // equals counting DL-flit bytes at 200 Gb/s (no double count).
  EXPECT_EQ(u128(f.params().fec_codeword_bytes) * 200, u128(f.params().dl_flit_bytes) * 2125 / 10);
  FlitStream s(f, kX4);
  EXPECT_EQ(s.codeword_ps(), 6400u);
  EXPECT_EQ(FlitStream(f, kX1).codeword_ps(), 25600u);
  EXPECT_EQ(FlitStream(f, 2 * kX1).codeword_ps(), 12800u);
}

// TL layout: writes carry a 16 B request field + data in 32 B half-flits; reads a 16 B
// request field; read responses and write acks an 8 B response field (+ their data).
TEST(UALinkFraming, TlBytesPerRequest) {
  const UALinkFraming f = ualink();
  EXPECT_EQ(f.tl_bytes(64), 80u);
  EXPECT_EQ(f.tl_bytes(128), 144u);
  EXPECT_EQ(f.tl_bytes(192), 208u);
  EXPECT_EQ(f.tl_bytes(256), 272u);
  EXPECT_EQ(f.tl_bytes(8, PacketKind::kFlag), 16u + 32u);  // a short write: one half-flit
  EXPECT_EQ(f.tl_bytes(0, PacketKind::kReadReq), 16u);
  EXPECT_EQ(f.tl_bytes(64, PacketKind::kReadResp), 72u);
  EXPECT_EQ(f.tl_bytes(256, PacketKind::kReadResp), 264u);
  EXPECT_EQ(f.tl_bytes(16, PacketKind::kAck), 8u + 32u);
}

// A lone packet is charged its share of codeword bytes, rounded up: ceil(tl x 680 / 628).
TEST(UALinkFraming, PacketWireBytes) {
  const UALinkFraming f = ualink();
  EXPECT_EQ(f.packet_wire_bytes(64), 87u);    // 80 x 680 / 628 = 86.62
  EXPECT_EQ(f.packet_wire_bytes(128), 156u);  // 144 x 680 / 628 = 155.92
  EXPECT_EQ(f.packet_wire_bytes(256), 295u);  // 272 x 680 / 628 = 294.52
  EXPECT_EQ(f.packet_wire_bytes(0, PacketKind::kReadReq), 18u);   // 16 x 680 / 628 = 17.32
  EXPECT_EQ(f.packet_wire_bytes(64, PacketKind::kReadResp), 78u); // 72 x 680 / 628 = 77.96
  Packet p;
  p.payload_bytes = 1000;
  p.packet_payload = 256;
  p.npackets = 4;  // 3 x 256 + 232
  p.kind = PacketKind::kData;
  EXPECT_EQ(f.transaction_tl_bytes(p), 3u * 272u + (16u + 256u));
}

// The published ~93% ("effective peak bandwidth") is against the 200 Gb/s data rate:
// 256 x 628 / (272 x 640) = 92.35%; against the 212.5 GT/s signalling rate it is
// 256 x 628 / (272 x 680) = 86.92%. 64 B writes: 64 x 628 / (80 x 640) = 78.5%.
TEST(UALinkFraming, LargeWriteEfficiencyIs93PercentOfDataRate) {
  const UALinkFraming f = ualink();
  EXPECT_NEAR(f.data_rate_efficiency(256), 0.93, 0.01);
  EXPECT_DOUBLE_EQ(f.data_rate_efficiency(256), 256.0 * 628 / (272.0 * 640));
  EXPECT_DOUBLE_EQ(f.efficiency(256), 256.0 * 628 / (272.0 * 680));
  EXPECT_NEAR(f.data_rate_efficiency(64), 0.785, 1e-9);
  // Stream measurement: a long run of back-to-back 256 B writes on an x4 port delivers
  // 92.35% of 4 x 200 Gb/s of payload.
  FlitStream s(f, kX4);
  const uint64_t n = 100'000;
  uint64_t t = 0;
  for (uint64_t i = 0; i < n; ++i) t = s.place(t, f.tl_bytes(256), f.tl_bytes(256)).free_ps;
  const double payload_bps = double(n) * 256 * 8 / (double(t) * 1e-12);
  EXPECT_NEAR(payload_bps / 800e9, 0.9235, 0.0005);
}

// A lone 64 B write on an idle x4 link: its 80 TL bytes take 80/628 of a codeword, but
// the receiver can use it only when the whole (padded) codeword has been sent.
TEST(UALinkFraming, LonePacketWaitsForItsCodeword) {
  const UALinkFraming f = ualink();
  FlitStream s(f, kX4);
  const FlitStream::Placement p = s.place(1000, 80, 80);
  EXPECT_EQ(p.start_ps, 1000u);
  EXPECT_EQ(p.free_ps, 1000u + 80u * 6400u / 628u);  // 815.29 -> 815
  EXPECT_EQ(p.done_ps, 1000u + 6400u);
  EXPECT_EQ(p.wire_bytes, 86u);  // floor(86.62); the remainder is carried
}

// Packets that arrive while a codeword is still being sent share it; one that arrives
// after the codeword's end starts a new codeword at its arrival.
TEST(UALinkFraming, LatePacketsJoinTheOpenCodewordOrStartANewOne) {
  const UALinkFraming f = ualink();
  FlitStream s(f, kX4);
  const FlitStream::Placement a = s.place(0, 80, 80);
  // At 3000 ps the codeword has passed ceil(3000 x 628 / 6400) = 295 slots: the next
  // packet takes slots 295..374 of the same codeword (slots 80..294 went out as padding).
  const FlitStream::Placement b = s.place(3000, 80, 80);
  EXPECT_EQ(b.start_ps, 295u * 6400u / 628u);
  EXPECT_EQ(b.done_ps, a.done_ps);
  EXPECT_EQ(b.done_ps, 6400u);
  // Back to back after b: slots 375..454, still the first codeword.
  const FlitStream::Placement c = s.place(b.free_ps, 80, 80);
  EXPECT_EQ(c.start_ps, b.free_ps);
  EXPECT_EQ(c.done_ps, 6400u);
  // 272 more bytes from slot 455 run past slot 628: the packet ends in the second codeword.
  const FlitStream::Placement d = s.place(c.free_ps, 272, 272);
  EXPECT_EQ(d.done_ps, 12800u);
  // After the run ends (free at slot 727 of 1256; arrival after the second codeword's end)
  // a new run starts at the arrival.
  const FlitStream::Placement e = s.place(20000, 16, 16);
  EXPECT_EQ(e.start_ps, 20000u);
  EXPECT_EQ(e.done_ps, 26400u);
}

// Long runs are exact: N back-to-back packets of mixed sizes end (free_ps) at floor of the
// exact stream time, their codewords complete at whole codeword times, and the wire bytes
// charged sum to floor(total TL bytes x 680 / 628): within 1 ps and 1 byte however long.
TEST(UALinkFraming, LongRunsAreExact) {
  const UALinkFraming f = ualink();
  for (uint64_t rate : {kX1, 2 * kX1, kX4, uint64_t(3 * 212'500'000'001ull)}) {
    FlitStream s(f, rate);
    Rng rng(7, "ualink_sizes");
    const uint32_t sizes[4] = {64, 128, 192, 256};
    uint64_t t = 0, tl_total = 0, wire = 0, done = 0;
    const uint64_t n = 200'000;
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t tl = f.tl_bytes(sizes[rng.below(4)]);
      const FlitStream::Placement p = s.place(t, tl, tl);
      ASSERT_EQ(p.start_ps, t) << "packet " << i << " was not back to back";
      t = p.free_ps;
      done = p.done_ps;
      tl_total += tl;
      wire += p.wire_bytes;
    }
    const u128 ps_num = u128(tl_total) * 680u * 8u * 1'000'000'000'000ull;
    EXPECT_EQ(t, uint64_t(ps_num / (u128(628) * rate))) << rate;
    const uint64_t codewords = (tl_total + 627) / 628;
    EXPECT_EQ(done, uint64_t(u128(codewords) * 680u * 8u * 1'000'000'000'000ull / rate)) << rate;
    EXPECT_EQ(wire, uint64_t(u128(tl_total) * 680u / 628u)) << rate;
  }
}

// A switch port takes in one whole codeword before it uses a packet (the DL flit's CRC),
// and a packet is usable up to one codeword after its last byte was sent.
TEST(UALinkFraming, ReceiveUnitAndReplaySlackAreOneCodeword) {
  const UALinkFraming f = ualink();
  EXPECT_EQ(f.receive_unit_bytes(64), 680u);
  EXPECT_EQ(f.receive_unit_bytes(256), 680u);
  EXPECT_EQ(f.replay_slack_bytes(), 680u);
}

// The port's link layer on a UALink link is the stream: each transaction's wire bytes are
// the stream's charge (its remainder carried) and its times are the placement's.
TEST(UALinkFraming, StreamLinkLayerChargesAndTimesAsTheStream) {
  LinkParams l;
  l.rate_bps = kX4;
  l.framing = std::make_shared<const UALinkFraming>(ualink());
  const std::unique_ptr<LinkLayer> ll = l.framing->make_link_layer(l, 1, "t.port[0]");
  FlitStream ref(ualink(), kX4);
  Rng rng(5, "ualink_sizes");
  const uint32_t sizes[4] = {64, 128, 192, 256};
  uint64_t t = 0;
  for (int i = 0; i < 10'000; ++i) {
    Packet p;
    p.payload_bytes = p.packet_payload = sizes[rng.below(4)];
    p.npackets = 1;
    const uint64_t tl = ualink().tl_bytes(p.payload_bytes);
    const uint64_t wire = ll->prepare(p);
    ASSERT_EQ(wire, ref.peek_wire(tl)) << i;
    const TxTiming tm = ll->send(p, t, wire);
    const FlitStream::Placement pl = ref.place(t, tl, tl);
    ASSERT_EQ(tm.head_ps, pl.done_ps) << i;
    ASSERT_EQ(tm.tail_ps, pl.done_ps) << i;
    ASSERT_EQ(tm.free_ps, pl.free_ps) << i;
    t = tm.free_ps + (rng.below(4) == 0 ? rng.below(10'000) : 0);
  }
  EXPECT_EQ(ll->retry_counters().crc_errors, 0u);
}

}  // namespace
}  // namespace fabricsim
