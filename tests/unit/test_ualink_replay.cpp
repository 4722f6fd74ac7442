// UALink link-level replay in the stream framing (models/ualink/flit_stream.h: FlitStream with
// enable_replay; docs/models.md "Link-level retry" and "UALink 1.0"). Pure C++, with a
// scripted error pattern: the error unit is the 680 B codeword (one 640 B DL flit), a bad
// copy is NAKed and replayed go-back-N, so its good copy, and every later codeword of the
// run, ends one codeword + D later per bad copy (D = 2 x latency + retry_latency).
// Packets whose last byte is in an earlier codeword are not delayed.
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "models/link/bit_errors.h"
#include "models/link/link_type.h"
#include "models/ualink/flit_stream.h"
#include "models/ualink/ualink_framing.h"
#include "models/core/rng.h"

namespace fabricsim {
namespace {

constexpr uint64_t kX4 = 4 * 212'500'000'000ull;  // 850 Gb/s: one codeword = 6400 ps
constexpr uint64_t kCW = 6'400;
constexpr uint64_t kD = 2 * 20'000 + 30'000;      // configs/ualink_pod8.yaml: 20 ns cable,
                                                  // retry_latency default 30 ns
constexpr uint64_t kX = kCW + kD;                 // 76.4 ns per bad copy
constexpr uint64_t kBits = 8 * 680;               // bits of one codeword
constexpr uint64_t kWrite = 272;                  // TL bytes of a 256 B write

// The declared defaults of framing: ualink.
UALinkFraming ualink() {
  return UALinkFraming(defaults<UALinkFramingParams>(framings().at("ualink").params));
}

// Good bits before each bit error, in order; then no more errors.
class Scripted : public BitErrors {
 public:
  explicit Scripted(std::vector<uint64_t> gaps) : gaps_(std::move(gaps)) {}
  uint64_t next_gap() override { return i_ < gaps_.size() ? gaps_[i_++] : (uint64_t(1) << 62); }

 private:
  std::vector<uint64_t> gaps_;
  size_t i_ = 0;
};

// Time the codeword holding slot `slot` (0-based, from the run's start at 0) ends on an
// error-free x4 link: whole codewords of 6400 ps.
uint64_t clean_done(uint64_t last_slot) { return (last_slot / 628 + 1) * kCW; }

// n back-to-back 256 B writes from t = 0; returns the placements.
std::vector<FlitStream::Placement> stream_writes(FlitStream& s, int n) {
  std::vector<FlitStream::Placement> out;
  uint64_t t = 0;
  for (int i = 0; i < n; ++i) {
    out.push_back(s.place(t, kWrite, kWrite));
    t = out.back().free_ps;
  }
  return out;
}

// Codeword 3 (slots 1884..2511) is bad once: the error falls at bit 17 of its first copy.
// Packet 5 (slots 1360..1631) ends in codeword 2 and is on time; packet 6 (1632..1903)
// starts in codeword 2 but its last byte is in codeword 3, so it is late by exactly one
// codeword + D, as is every later packet. The placement that opened codeword 3 reports
// the bad copy.
TEST(UALinkReplayStream, BadCodewordDelaysPacketsEndingInOrAfterItByOneCodewordPlusD) {
  const UALinkFraming f = ualink();
  Scripted errors({3 * kBits + 17});
  FlitStream s(f, kX4);
  s.enable_replay(&errors, kD);
  EXPECT_EQ(s.replay_ps(), kX);
  FlitStream ref(f, kX4);
  const auto got = stream_writes(s, 40);
  const auto clean = stream_writes(ref, 40);
  uint32_t bad = 0;
  for (int i = 0; i < 40; ++i) {
    const uint64_t last_slot = uint64_t(i + 1) * kWrite - 1;
    const bool late = last_slot / 628 >= 3;
    EXPECT_EQ(clean[i].done_ps, clean_done(last_slot)) << "packet " << i;
    EXPECT_EQ(got[i].done_ps, clean[i].done_ps + (late ? kX : 0)) << "packet " << i;
    EXPECT_EQ(got[i].wire_bytes, clean[i].wire_bytes);
    EXPECT_EQ(got[i].bad_copies, i == 6 ? 1u : 0u) << "packet " << i;
    EXPECT_EQ(got[i].last_lost_ps, last_slot / 628 == 3 ? kX : 0u) << "packet " << i;
    bad += got[i].bad_copies;
  }
  EXPECT_EQ(bad, 1u);
  EXPECT_EQ(got[5].done_ps, 3 * kCW);   // codeword 2, on time
  EXPECT_EQ(got[6].done_ps, 4 * kCW + kX);  // codeword 3's good copy
  // The transmitter is held: packet 7 (slots 1904..2175) fills the rest of codeword 3's
  // first copy (its content is fixed), packets from codeword 4 on go after the replay.
  EXPECT_EQ(got[7].start_ps, clean[7].start_ps);
  EXPECT_EQ(got[39].free_ps, clean[39].free_ps + kX);
}

// Two bad copies of the same codeword cost two replays; two bad codewords add up; a
// packet after both is late by 3 x (codeword + D), one between them by 2 x.
TEST(UALinkReplayStream, ReplaysAccumulatePerBadCopy) {
  const UALinkFraming f = ualink();
  // codeword 1: first copy bad (bit 100), replayed copy bad (bit 5), next copy good;
  // then 4 good codewords (2..5) and codeword 6 bad.
  Scripted errors({kBits + 100, 5, 4 * kBits + (kBits - 5) + 1000});
  FlitStream s(f, kX4);
  s.enable_replay(&errors, kD);
  FlitStream ref(f, kX4);
  const auto got = stream_writes(s, 30);
  const auto clean = stream_writes(ref, 30);
  uint32_t bad = 0;
  for (int i = 0; i < 30; ++i) {
    const uint64_t cw = (uint64_t(i + 1) * kWrite - 1) / 628;
    const uint64_t late = cw < 1 ? 0 : cw < 6 ? 2 : 3;
    EXPECT_EQ(got[i].done_ps, clean[i].done_ps + late * kX) << "packet " << i;
    bad += got[i].bad_copies;
  }
  EXPECT_EQ(bad, 3u);
}

// The bad codeword's content is what was placed while its first copy was on the wire; a
// packet that comes in the NAK window goes after the good copy (go-back-N sends it into
// the window, the receiver discards it, the replay re-sends it after the bad codeword);
// one that comes after the replay starts a new run at its arrival.
TEST(UALinkReplayStream, NakWindowPacketsFollowTheGoodCopy) {
  const UALinkFraming f = ualink();
  Scripted errors({40});  // codeword 0 bad
  FlitStream s(f, kX4);
  s.enable_replay(&errors, kD);
  const FlitStream::Placement a = s.place(0, 80, 80);  // a lone 64 B write opens codeword 0
  EXPECT_EQ(a.bad_copies, 1u);
  EXPECT_EQ(a.done_ps, kCW + kX);                      // 82.8 ns instead of 6.4 ns
  EXPECT_EQ(a.free_ps, 80u * kCW / 628);               // its bytes are in the first copy
  const FlitStream::Placement b = s.place(3'000, 80, 80);  // during the first copy
  EXPECT_EQ(b.done_ps, kCW + kX);                      // joins codeword 0
  EXPECT_EQ(b.bad_copies, 0u);
  const FlitStream::Placement c = s.place(30'000, 80, 80);  // in the NAK window
  EXPECT_EQ(c.start_ps, kCW + kX);                     // after the good copy
  EXPECT_EQ(c.done_ps, 2 * kCW + kX);
  const FlitStream::Placement d = s.place(200'000, 80, 80);  // long after: a new run
  EXPECT_EQ(d.start_ps, 200'000u);
  EXPECT_EQ(d.done_ps, 200'000u + kCW);
}

// Replay on, but no error in the stream: times are those of the plain stream to the
// picosecond (mixed sizes, gaps, late joins).
TEST(UALinkReplayStream, NoErrorIsTimingIdenticalToThePlainStream) {
  const UALinkFraming f = ualink();
  Scripted errors({});
  FlitStream s(f, kX4), ref(f, kX4);
  s.enable_replay(&errors, kD);
  Rng rng(3, "sizes");
  uint64_t t = 0;
  for (int i = 0; i < 20'000; ++i) {
    const uint64_t tl = 16 + 32 * rng.below(9);
    const FlitStream::Placement a = s.place(t, tl, tl), b = ref.place(t, tl, tl);
    ASSERT_EQ(a.start_ps, b.start_ps) << i;
    ASSERT_EQ(a.free_ps, b.free_ps) << i;
    ASSERT_EQ(a.done_ps, b.done_ps) << i;
    ASSERT_EQ(a.first_ps, b.first_ps) << i;
    ASSERT_EQ(a.wire_bytes, b.wire_bytes) << i;
    t = a.free_ps + (rng.below(4) == 0 ? rng.below(20'000) : 0);
  }
}

// A multi-packet transaction: first_ps is its first packet's codeword (good copy), done_ps
// its last packet's. 8 writes = 2176 slots = codewords 0..3; codeword 2 is bad: the first
// packet (codeword 0) is on time, the whole transaction late by one codeword + D.
TEST(UALinkReplayStream, TransactionHeadAndTailAcrossABadCodeword) {
  const UALinkFraming f = ualink();
  Scripted errors({2 * kBits + 1});
  FlitStream s(f, kX4);
  s.enable_replay(&errors, kD);
  const FlitStream::Placement p = s.place(0, 8 * kWrite, kWrite);
  EXPECT_EQ(p.first_ps, kCW);
  EXPECT_EQ(p.done_ps, 4 * kCW + kX);
  EXPECT_EQ(p.bad_copies, 1u);
  EXPECT_EQ(p.last_lost_ps, 0u);  // the last codeword (3) itself was good
  EXPECT_EQ(p.free_ps, 8 * kWrite * kCW / 628 + kX);
  // Now the first packet's codeword is the bad one.
  Scripted errors2({7});
  FlitStream s2(f, kX4);
  s2.enable_replay(&errors2, kD);
  const FlitStream::Placement q = s2.place(0, 8 * kWrite, kWrite);
  EXPECT_EQ(q.first_ps, kCW + kX);
  EXPECT_EQ(q.done_ps, 4 * kCW + kX);
}

}  // namespace
}  // namespace fabricsim
