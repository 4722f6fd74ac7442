// UALink link-level replay through Port (docs/models.md "Link-level retry", "UALink 1.0"):
// on framing: ualink the unit that a CRC check rejects and go-back-N replays is the
// 680 B FEC codeword carrying one 640 B DL flit, not the packet.
//
// Bench: two bare Ports on an x4 UALink link with configs/ualink_pod8.yaml's parameters
// (850 Gb/s signalling, 20 ns cable; the retry defaults ack_delay 20 ns, retry_latency
// 30 ns). A source hands the transmitter a numbered stream of 256 B writes (272 B of TL
// stream each), the sink checks they arrive exactly once and in order and frees their
// receive buffer at once.
//
// Expected throughput. A codeword takes CW = 6.4 ns and is bad with probability
// p = 1 - (1 - ber)^(8 x 680). A bad copy costs its own time CW plus the NAK wait
// D = 2 x latency + retry_latency = 70 ns before the replay starts; the number of bad copies
// before a good one is geometric with mean p / (1 - p). A saturated stream of C codewords
// therefore takes C x CW + errors x (CW + D) exactly, and on average
//   efficiency = (1 - p) CW / (CW + p D)
// of the error-free 92.35 GB/s of 256 B-write payload.
#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "models/link/port.h"
#include "models/switch/switch_kind.h"
#include "models/endpoint/endpoint.h"
#include "models/switch/switch.h"
#include "testbenches/bench.h"

using namespace fabricsim;

namespace {

constexpr uint64_t kCW = 6'400;            // 680 B at 850 Gb/s
constexpr uint64_t kLatency = 20'000;      // 4 m cable
constexpr uint64_t kRetryLatency = 30'000;
constexpr uint64_t kAckDelay = 20'000;
constexpr uint64_t kD = 2 * kLatency + kRetryLatency;  // 70 ns
constexpr uint64_t kX = kCW + kD;                      // 76.4 ns per bad codeword copy
constexpr uint64_t kTl = 272;                          // TL bytes of a 256 B write

LinkParams replay_link(double ber, uint64_t replay_buffer = 64 * 1024) {
  LinkParams l = tb::ualink_x4(kLatency, 1 << 20);
  l.ber = ber;
  l.replay_buffer_bytes = replay_buffer;
  l.ack_delay_ps = kAckDelay;
  l.retry_latency_ps = kRetryLatency;
  return l;
}

double codeword_error_probability(double ber) { return -std::expm1(8.0 * 680 * std::log1p(-ber)); }

// Codewords of n back-to-back 256 B writes, and the error-free time the codeword holding
// write i's last byte has been sent (from 0).
uint64_t codewords(uint64_t n) { return (n * kTl + 627) / 628; }
uint64_t clean_done(uint64_t i) { return codewords(i + 1) * kCW; }

// Source on port a, sink on port b: `n` single-packet 256 B writes numbered by seq.
class Stream : public PortOwner {
 public:
  Port a, b;
  uint64_t received = 0, out_of_order = 0, last_arrival_ps = 0, bytes = 0;
  std::vector<uint64_t> arrival;  // per seq (reserved up front: no growth in the run)
  // Per seq: port a's crc_errors once that write has been placed (the bad codeword copies
  // drawn up to the codeword holding its last byte); the last one is set after the run.
  std::vector<uint64_t> errors_after;

  Stream(const std::string& name, const LinkParams& link, uint64_t n, bool record = false)
      : a((name + "_a").c_str(), name + ".a", this, 0, false),
        b((name + "_b").c_str(), name + ".b", this, 1, false),
        total_(n) {
    if (record) {
      arrival.assign(n, 0);
      errors_after.assign(n, 0);
    }
    bind_link(a, b, link);
    a.kick();
  }
  ~Stream() override {
    if (next_) PacketPool::global().release(next_);
  }
  Packet* tx_peek(int port) override {
    if (port != 0 || sent_ == total_) return nullptr;
    if (!next_) {
      // Writes 0..sent_-1 are placed: the counter now covers write sent_-1's codewords.
      if (!errors_after.empty() && sent_ > 0) errors_after[sent_ - 1] = a.counters().crc_errors;
      next_ = PacketPool::global().acquire();
      next_->seq = sent_;
      next_->msg_id = sent_;
      next_->packet_payload = 256;
      next_->npackets = 1;
      next_->payload_bytes = 256;
      next_->msg_bytes = 256;
    }
    return next_;
  }
  void tx_pop(int, Packet* p) override {
    EXPECT_EQ(p, next_);
    next_ = nullptr;
    ++sent_;
  }
  void rx_arrive(int port, Packet* p) override {
    EXPECT_EQ(port, 1);
    if (p->seq != received) ++out_of_order;
    if (!arrival.empty() && p->seq < arrival.size()) arrival[p->seq] = Port::now();
    ++received;
    bytes += p->payload_bytes;
    last_arrival_ps = Port::now();
    b.release_rx(p, 0);
    PacketPool::global().release(p);
  }

 private:
  uint64_t total_, sent_ = 0;
  Packet* next_ = nullptr;
};

}  // namespace

// Seeded errors at ber 1e-6 (~0.54% of codewords bad): every write arrives once, in order,
// and late by exactly k x (CW + D) against the error-free stream, where k is the number of
// bad codeword copies drawn up to and including the codeword of the write's last byte
// (port a's crc_errors right after the write was placed): a write whose last byte is in
// or after a bad codeword is late by it, one finished in an earlier codeword is not.
// k never falls, writes that end in the same codeword are equally late, and the counters
// are one replay per bad copy, 680 B and CW + D each.
TEST(UALinkReplay, SeededErrorsDelayEachWriteByWholeReplays) {
  const uint64_t n = 40'000;  // 17,325 codewords
  Stream s("s", replay_link(1e-6), n, true);
  sc_core::sc_start();
  EXPECT_EQ(s.received, n);
  EXPECT_EQ(s.out_of_order, 0u);
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
  const Port::Counters& c = s.a.counters();
  const uint64_t e = c.crc_errors;
  s.errors_after[n - 1] = e;
  EXPECT_GT(e, 50u);  // expected 17,325 x p / (1 - p) = 94.5, sd 9.7
  EXPECT_LT(e, 150u);
  EXPECT_EQ(c.replays, e);
  EXPECT_EQ(c.replay_wire_bytes, e * 680);
  EXPECT_EQ(c.retry_ps, e * kX);
  EXPECT_EQ(c.replay_stall_ps, 0u);
  uint64_t k_prev = 0, delayed = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t late = s.arrival[i] - (clean_done(i) + kLatency);
    ASSERT_EQ(late % kX, 0u) << "write " << i;
    const uint64_t k = late / kX;
    ASSERT_EQ(k, s.errors_after[i]) << "write " << i;
    ASSERT_GE(k, k_prev) << "write " << i;
    if (i > 0 && codewords(i + 1) == codewords(i)) {
      ASSERT_EQ(k, k_prev) << "write " << i;
    }
    if (k > 0) ++delayed;
    k_prev = k;
  }
  EXPECT_EQ(k_prev, e);
  EXPECT_LT(delayed, n);  // the writes before the first bad codeword are on time
  EXPECT_EQ(s.last_arrival_ps, codewords(n) * kCW + e * kX + kLatency);
}

// Throughput falls as the BER rises, and matches (1 - p) CW / (CW + p D) of the error-free
// payload rate. Five independent links, 200,000 writes (86,624 codewords) each. Tolerance:
// the error count is negative-binomial with sd sqrt(C p) / (1 - p); the time's relative sd
// is that x (CW + D) / time (0.59% at 1e-5, 0.28% at 1e-6); 4 sd, at least 0.1%.
// Exactly: time = C x CW + errors x (CW + D) + latency.
TEST(UALinkReplay, ThroughputFallsAsBerRisesAtTheGoBackNRate) {
  const std::vector<double> bers{0, 1e-8, 1e-7, 1e-6, 1e-5};
  const uint64_t n = 200'000, cws = codewords(n);
  std::vector<std::unique_ptr<Stream>> links;
  for (size_t i = 0; i < bers.size(); ++i)
    links.push_back(std::make_unique<Stream>("l" + std::to_string(i), replay_link(bers[i]), n));
  sc_core::sc_start();
  const double ceiling = 800.0 / 8 * 256 * 628 / (272.0 * 640);  // 92.35 GB/s
  std::vector<double> gbps;
  for (size_t i = 0; i < bers.size(); ++i) {
    const Stream& s = *links[i];
    EXPECT_EQ(s.received, n);
    EXPECT_EQ(s.bytes, n * 256);
    EXPECT_EQ(s.out_of_order, 0u);
    const uint64_t e = s.a.counters().crc_errors;
    EXPECT_EQ(s.last_arrival_ps, cws * kCW + e * kX + kLatency);
    gbps.push_back(double(n * 256) / double(s.last_arrival_ps - kLatency) * 1e3);
    const double p = codeword_error_probability(bers[i]);
    const double eff = (1 - p) * kCW / (kCW + p * kD);
    const double time = double(cws) * kCW / eff;
    const double sd = std::sqrt(double(cws) * p) / (1 - p) * kX / time;
    std::printf("ber %-6g p %.6f crc_errors %5llu (expected %.1f) payload %.3f GB/s, "
                "formula %.3f GB/s\n",
                bers[i], p, (unsigned long long)e, double(cws) * p / (1 - p), gbps.back(),
                ceiling * eff);
    EXPECT_NEAR(gbps.back() / (ceiling * eff), 1.0, std::max(0.001, 4 * sd)) << "ber " << bers[i];
  }
  EXPECT_NEAR(gbps[0], ceiling, 0.001);
  for (size_t i = 1; i < bers.size(); ++i) EXPECT_LT(gbps[i], gbps[i - 1]) << "ber " << bers[i];
  EXPECT_LT(gbps.back(), 0.65 * ceiling);  // 1e-5: p = 5.3%, efficiency 0.600
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
}

// ber = 0: the retry machinery is idle whatever its other parameters (a replay buffer of
// one write, a long retry latency): timing identical to the plain link, counters at 0.
TEST(UALinkReplay, ZeroBerIsTimingIdenticalToThePlainLink) {
  LinkParams odd = replay_link(0, 295);
  odd.retry_latency_ps = 10'000'000;
  const uint64_t n = 20'000;
  Stream a("a", tb::ualink_x4(kLatency, 1 << 20), n), b("b", odd, n);
  sc_core::sc_start();
  EXPECT_EQ(a.last_arrival_ps, codewords(n) * kCW + kLatency);
  EXPECT_EQ(b.last_arrival_ps, a.last_arrival_ps);
  const Port::Counters& k = b.a.counters();
  EXPECT_EQ(k.crc_errors + k.replays + k.replay_wire_bytes + k.retry_ps + k.replay_stall_ps, 0u);
}

// A replay buffer of 1180 B holds 4 writes (294 or 295 B of codeword share each), so the
// buffer, not the line, sets the rate: a write's bytes stay from its start until its
// codeword has been sent + the ack round trip A = 2 x latency + ack_delay = 60 ns. The
// first 4 writes go at 0 (two share codeword 0, two end in codeword 1: done 6.4 and
// 12.8 ns); each pair's ack frees room for the next pair, which opens a new codeword:
// every CW + A = 66.4 ns, 4 writes (1024 B of payload), 15.42 GB/s, against the bound
// buffer / round trip = 1180 B / 66.4 ns = 17.77 GB/s of wire. No error is drawn
// (ber 1e-15); the waiting is counted as replay-buffer stall, not credit stall.
TEST(UALinkReplay, SmallReplayBufferStallsAndBoundsThroughput) {
  const uint64_t n = 4'000;
  Stream s("s", replay_link(1e-15, 1180), n);
  sc_core::sc_start();
  EXPECT_EQ(s.received, n);
  const Port::Counters& c = s.a.counters();
  EXPECT_EQ(c.crc_errors, 0u);
  EXPECT_GT(c.replay_stall_ps, 0u);
  EXPECT_EQ(c.credit_stall_ps, 0u);
  const uint64_t rtt = kCW + 2 * kLatency + kAckDelay;  // 66.4 ns
  EXPECT_EQ(s.last_arrival_ps, (n / 4 - 1) * rtt + 2 * kCW + kLatency);
  const double wire_gbps = double(c.tx_wire_bytes) / double(s.last_arrival_ps) * 1e3;
  EXPECT_LE(wire_gbps, 1180.0 / double(rtt) * 1e3);
  const double payload_gbps = double(n * 256) / double(s.last_arrival_ps) * 1e3;
  EXPECT_NEAR(payload_gbps / (4 * 256.0 / double(rtt) * 1e3), 1.0, 0.01);
  std::printf("payload %.3f GB/s, wire %.3f GB/s, bound %.3f GB/s, stall %.3f us\n",
              payload_gbps, wire_gbps, 1180.0 / double(rtt) * 1e3, c.replay_stall_ps * 1e-6);
}

// Aggregated 16 KiB transactions (64 writes, 27.7 codewords) through a cut-through switch,
// ber 1e-5 on both links (~5% of codewords bad): every byte arrives (the endpoint
// reassembles the message; the pool is empty), replays happen on both links, and the
// completion is no earlier than the upstream link's exact busy time C x CW + errors x
// (CW + D) + the path latency (2 cables + pipeline + the last codeword downstream).
TEST(UALinkReplay, AggregatedThroughASwitchDeliversEveryByte) {
  SwitchParams sp = defaults<SwitchParams>(switch_frame_params());
  sp.ports = 2;
  sp.pipeline_latency_ps = 140'000;
  sp.speedup = 2.0;
  sp.egress_buffer_bytes = 32 * 1024;
  EndpointParams ep;
  ep.ports = 1;
  ep.aggregate_bytes = 16 * 1024;
  tb::StarBench bench(2, sp, ep, replay_link(1e-5));
  uint64_t done_ps = 0, delivered = 0;
  bench.eps[1]->on_delivery([&](const Endpoint::Delivery& d) {
    done_ps = Port::now();
    delivered += d.bytes;
  });
  const uint64_t bytes = 8ull << 20, n = bytes / 256;
  bench.eps[0]->send(1, bytes, 1);
  sc_core::sc_start();
  EXPECT_EQ(delivered, bytes);
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
  const Port::Counters& up = bench.eps[0]->port(0).counters();
  const Port::Counters& down = bench.sw->port(1).counters();
  EXPECT_EQ(up.tx_packets, n);
  EXPECT_EQ(down.tx_packets, n);
  EXPECT_GT(up.crc_errors, 250u);  // 14,190 codewords x p / (1 - p) = 793 expected
  EXPECT_GT(down.crc_errors, 250u);
  EXPECT_EQ(up.retry_ps, up.crc_errors * kX);
  const uint64_t up_end = codewords(n) * kCW + up.crc_errors * kX;
  EXPECT_GE(done_ps, up_end + 2 * kLatency + sp.pipeline_latency_ps);
  std::printf("done %.3f us, upstream busy %.3f us, errors up %llu down %llu\n", done_ps * 1e-6,
              up_end * 1e-6, (unsigned long long)up.crc_errors,
              (unsigned long long)down.crc_errors);
}
