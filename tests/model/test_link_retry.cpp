// Link-level retry (docs/models.md, "Link-level retry"): a link with a bit error rate
// loses no packet but loses throughput, by the go-back-N mechanism in Port.
//
// The bench drives two bare Ports (no endpoint): a source hands the transmitter a numbered
// stream of transactions, the sink checks that they arrive exactly once and in order and
// frees their receive buffer at once.
//
// Go-back-N model and the expected throughput. A packet of W wire bytes takes T = 8W / rate
// to serialise and is corrupted with probability p = 1 - (1 - ber)^(8W) (independent bit
// errors). A corrupted copy costs its own serialisation T plus the wait until the NAK is
// back and the replay starts, D = 2 x latency + retry_latency, after which go-back-N
// re-sends from that packet. The number of bad copies before a good one is geometric with
// mean p / (1 - p), so the time per delivered packet is T + p/(1-p) x (T + D) and
//   efficiency = (1 - p) T / (T + p D).
// Exactly (no statistics): time = N T + crc_errors x (T + D) for a saturated source.
#include <cmath>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "models/link/port.h"
#include "models/switch/switch_kind.h"
#include "models/endpoint/endpoint.h"
#include "testbenches/bench.h"

using namespace fabricsim;

namespace {

constexpr uint64_t kT = 6'400;       // 160 B at 200 Gb/s
constexpr uint64_t kLatency = 25'000;
constexpr uint64_t kRetryLatency = 30'000;
constexpr uint64_t kAckDelay = 20'000;
constexpr uint64_t kD = 2 * kLatency + kRetryLatency;  // 80 ns

LinkParams retry_link(double ber, uint64_t replay_buffer = 64 * 1024) {
  LinkParams l = tb::nvlink_like(kLatency, 256 * 1024);
  l.ber = ber;
  l.replay_buffer_bytes = replay_buffer;
  l.ack_delay_ps = kAckDelay;
  l.retry_latency_ps = kRetryLatency;
  return l;
}

double packet_error_probability(double ber, uint64_t wire_bytes) {
  return -std::expm1(double(8 * wire_bytes) * std::log1p(-ber));
}

// Source on port a, sink on port b: `transactions` transactions of `npackets` packets of
// 128 B payload each, numbered by seq.
class Stream : public PortOwner {
 public:
  Port a, b;
  uint64_t received = 0, out_of_order = 0, last_arrival_ps = 0;

  Stream(const std::string& name, const LinkParams& link, uint64_t transactions,
         uint32_t npackets, uint64_t seed = 1)
      : a((name + "_a").c_str(), name + ".a", this, 0, false),
        b((name + "_b").c_str(), name + ".b", this, 1, false),
        total_(transactions),
        npackets_(npackets) {
    bind_link(a, b, link, seed);
    a.kick();
  }
  ~Stream() override {
    if (next_) PacketPool::global().release(next_);
  }

  Packet* tx_peek(int port) override {
    if (port != 0 || sent_ == total_) return nullptr;
    if (!next_) {
      next_ = PacketPool::global().acquire();
      next_->seq = sent_;
      next_->msg_id = sent_;
      next_->packet_payload = 128;
      next_->npackets = npackets_;
      next_->payload_bytes = 128 * npackets_;
      next_->msg_bytes = next_->payload_bytes;
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
    ++received;
    last_arrival_ps = Port::now();
    b.release_rx(p, 0);
    PacketPool::global().release(p);
  }

 private:
  uint64_t total_, sent_ = 0;
  uint32_t npackets_;
  Packet* next_ = nullptr;
};

}  // namespace

// High BER, per-packet transactions: nothing lost, nothing duplicated, in order; the time is
// exactly N T + errors x (T + D) + latency, and the throughput matches the go-back-N formula.
TEST(LinkRetry, HighBerDeliversEveryPacketOnceInOrderAtGoBackNThroughput) {
  const double ber = 1e-5;
  const uint64_t n = 100'000;
  Stream s("s", retry_link(ber), n, 1);
  sc_core::sc_start();
  EXPECT_EQ(s.received, n);
  EXPECT_EQ(s.out_of_order, 0u);
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);

  const Port::Counters& c = s.a.counters();
  const uint64_t e = c.crc_errors;
  EXPECT_EQ(c.replays, e);
  EXPECT_EQ(c.tx_packets, n);
  EXPECT_EQ(c.replay_wire_bytes, e * 160);
  EXPECT_EQ(c.retry_ps, e * (kT + kD));
  EXPECT_EQ(c.replay_stall_ps, 0u);  // 64 KiB >> one ack round trip (76.4 ns = 478 B)
  EXPECT_EQ(s.last_arrival_ps, n * kT + e * (kT + kD) + kLatency);

  // p = 0.012719; errors ~ N p/(1-p) = 1288 with standard deviation sqrt(N p)/(1-p) = 36
  // (2.8%); each error costs T + D = 86.4 ns of 750 us, so the time's relative standard
  // deviation is 0.41%. Tolerances: errors within 4 sd (11%), efficiency within 2% (~5 sd).
  const double p = packet_error_probability(ber, 160);
  const double mean_errors = double(n) * p / (1 - p);
  EXPECT_NEAR(double(e), mean_errors, 4 * std::sqrt(double(n) * p) / (1 - p));
  const double expected_eff = (1 - p) * kT / (kT + p * kD);  // 0.8518
  const double measured_eff = double(n * kT) / double(s.last_arrival_ps - kLatency);
  EXPECT_NEAR(measured_eff / expected_eff, 1.0, 0.02)
      << "measured " << measured_eff << " expected " << expected_eff;
  EXPECT_LT(measured_eff, 0.9);  // the loss is visible: not line rate
}

// Aggregated transactions of 64 packets: the replay restarts at the corrupted packet inside
// the transaction, not at the transaction's start, so the cost per error is still one
// packet + D and the exact and statistical checks are those of per-packet traffic.
TEST(LinkRetry, AggregatedTransactionReplaysFromTheCorruptedPacket) {
  const double ber = 1e-5;
  const uint64_t txns = 1'600;  // 102,400 packets
  Stream s("s", retry_link(ber), txns, 64);
  sc_core::sc_start();
  EXPECT_EQ(s.received, txns);
  EXPECT_EQ(s.out_of_order, 0u);
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
  const Port::Counters& c = s.a.counters();
  const uint64_t n = txns * 64, e = c.crc_errors;
  EXPECT_EQ(c.tx_packets, n);
  EXPECT_EQ(c.replay_wire_bytes, e * 160);
  EXPECT_EQ(s.last_arrival_ps, n * kT + e * (kT + kD) + kLatency);
  // Replaying whole transactions instead would cost about 32 packets per error and give
  // an efficiency near 0.5; the per-packet go-back-N model gives 0.85 (2% as above).
  const double p = packet_error_probability(ber, 160);
  const double expected_eff = (1 - p) * kT / (kT + p * kD);
  const double measured_eff = double(n * kT) / double(s.last_arrival_ps - kLatency);
  EXPECT_NEAR(measured_eff / expected_eff, 1.0, 0.02);
}

// Throughput falls monotonically as the BER rises. Five independent links in one kernel,
// 200,000 packets each; expected errors 0, 2.6, 26, 256, 2,576 (p x N / (1 - p)).
TEST(LinkRetry, ThroughputFallsMonotonicallyAsBerRises) {
  const std::vector<double> bers{0, 1e-8, 1e-7, 1e-6, 1e-5};
  const uint64_t n = 200'000;
  std::vector<std::unique_ptr<Stream>> links;
  for (size_t i = 0; i < bers.size(); ++i)
    links.push_back(std::make_unique<Stream>("l" + std::to_string(i), retry_link(bers[i]), n, 1));
  sc_core::sc_start();
  std::vector<double> gbps;
  for (size_t i = 0; i < bers.size(); ++i) {
    const Stream& s = *links[i];
    EXPECT_EQ(s.received, n);
    EXPECT_EQ(s.out_of_order, 0u);
    gbps.push_back(double(n * 128) / double(s.last_arrival_ps - kLatency) * 1e3);  // GB/s
    const uint64_t e = s.a.counters().crc_errors;
    EXPECT_EQ(s.last_arrival_ps, n * kT + e * (kT + kD) + kLatency);
    std::printf("ber %-6g crc_errors %6llu payload %.3f GB/s\n", bers[i],
                (unsigned long long)e, gbps.back());
  }
  EXPECT_DOUBLE_EQ(gbps[0], 20.0);  // ber 0: 128/160 of 25 GB/s exactly
  for (size_t i = 1; i < bers.size(); ++i) EXPECT_LT(gbps[i], gbps[i - 1]) << "ber " << bers[i];
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
}

// ber = 0: the retry machinery is idle. Whatever the other retry parameters (a replay
// buffer of one packet, long retry latency), the timing is that of the plain link to the
// picosecond, including a credit-limited link, and no retry statistic moves.
TEST(LinkRetry, ZeroBerIsTimingIdenticalToThePlainLink) {
  LinkParams odd = retry_link(0, 160);
  odd.retry_latency_ps = 10'000'000;
  odd.ack_delay_ps = 10'000'000;
  LinkParams plain = tb::nvlink_like(kLatency, 256 * 1024);
  LinkParams credit_limited = tb::nvlink_like(100'000, 4 * 160);
  LinkParams credit_limited_odd = credit_limited;
  credit_limited_odd.replay_buffer_bytes = 160;
  credit_limited_odd.retry_latency_ps = 10'000'000;
  const uint64_t n = 20'000;
  Stream a("a", plain, n, 1), b("b", odd, n, 1);
  Stream c("c", credit_limited, 2'000, 1), d("d", credit_limited_odd, 2'000, 1);
  Stream e("e", plain, n / 64, 64), f("f", odd, n / 64, 64);
  sc_core::sc_start();
  EXPECT_EQ(a.last_arrival_ps, n * kT + kLatency);
  EXPECT_EQ(b.last_arrival_ps, a.last_arrival_ps);
  EXPECT_EQ(d.last_arrival_ps, c.last_arrival_ps);
  EXPECT_GT(c.a.counters().credit_stall_ps, 0u);
  EXPECT_EQ(d.a.counters().credit_stall_ps, c.a.counters().credit_stall_ps);
  EXPECT_EQ(f.last_arrival_ps, e.last_arrival_ps);
  for (const Stream* s : {&b, &d, &f}) {
    const Port::Counters& k = s->a.counters();
    EXPECT_EQ(k.crc_errors + k.replays + k.replay_wire_bytes + k.retry_ps + k.replay_stall_ps,
              0u);
  }
}

// With retry on but (at this seed and length) no error, a replay buffer of B bytes bounds
// what is unacknowledged: a transaction holds its wire bytes from its start until its tail
// + 2 x latency + ack_delay, so throughput = min(line, B / (T + 2 x latency + ack_delay)),
// the same law as credits. B = 4 packets, round trip 76.4 ns: 4 x 160 / 76.4 ns = 8.38 GB/s
// of wire, 6.70 GB/s of payload.
TEST(LinkRetry, SmallReplayBufferLimitsThroughputLikeCredits) {
  const uint64_t n = 4'000;
  Stream s("s", retry_link(1e-15, 4 * 160), n, 1);
  sc_core::sc_start();
  EXPECT_EQ(s.received, n);
  const Port::Counters& c = s.a.counters();
  EXPECT_EQ(c.crc_errors, 0u);
  EXPECT_GT(c.replay_stall_ps, 0u);
  EXPECT_EQ(c.credit_stall_ps, 0u);
  // Exactly: every 4 packets take one round trip (4 back-to-back, then wait for the ack of
  // the first): the k-th group of four starts at k x (T + 2 x latency + ack_delay).
  const uint64_t rtt = kT + 2 * kLatency + kAckDelay;
  EXPECT_EQ(s.last_arrival_ps, (n / 4 - 1) * rtt + 4 * kT + kLatency);
  const double measured = double(n * 128) / double(s.last_arrival_ps) * 1e3;
  EXPECT_NEAR(measured / (4.0 * 128 / double(rtt) * 1e3), 1.0, 0.01);
}

// Through a cut-through switch, with aggregated 16 KiB transactions: both links draw
// errors (ber 1e-5). Every byte arrives (reassembly checks it; the pool is empty), and the
// completion time lies between two mechanistic bounds: no earlier than the busier link's
// serialisation N T + errors x (T + D) + the path latency, and no later than the upstream
// link's finish + the downstream link's own losses + the path latency + one transaction
// (the downstream link starts each transaction when its head arrives and runs at the same
// rate, so it falls behind only by its own losses).
TEST(LinkRetry, ThroughACutThroughSwitchEveryByteArrivesWithinTheLossBounds) {
  SwitchParams sp = defaults<SwitchParams>(switch_frame_params());
  sp.ports = 2;
  sp.pipeline_latency_ps = 100'000;
  sp.speedup = 2.0;
  sp.egress_buffer_bytes = 32 * 1024;
  EndpointParams ep;
  ep.ports = 1;
  ep.aggregate_bytes = 16 * 1024;
  tb::StarBench bench(2, sp, ep, retry_link(1e-5));
  uint64_t done_ps = 0, delivered = 0;
  bench.eps[1]->on_delivery([&](const Endpoint::Delivery& d) {
    done_ps = Port::now();
    delivered += d.bytes;
  });
  const uint64_t bytes = 8ull << 20, n = bytes / 128;  // 65,536 packets, 512 transactions
  bench.eps[0]->send(1, bytes, 1);
  sc_core::sc_start();
  EXPECT_EQ(delivered, bytes);
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
  const Port::Counters& up = bench.eps[0]->port(0).counters();
  const Port::Counters& down = bench.sw->port(1).counters();
  EXPECT_GT(up.crc_errors, 500u);  // ~845 expected on each link
  EXPECT_GT(down.crc_errors, 500u);
  EXPECT_EQ(up.tx_packets, n);
  EXPECT_EQ(down.tx_packets, n);
  const uint64_t path = 2 * kLatency + sp.pipeline_latency_ps;
  const uint64_t up_end = n * kT + up.crc_errors * (kT + kD);
  const uint64_t down_busy = n * kT + down.crc_errors * (kT + kD);
  const uint64_t txn = 128 * kT;  // one 16 KiB transaction of 160 B packets
  EXPECT_GE(done_ps, std::max(up_end, down_busy) + path);
  EXPECT_LE(done_ps, up_end + down.crc_errors * (kT + kD) + path + txn);
  std::printf("done %.3f us, lower %.3f us, upper %.3f us, errors up %llu down %llu\n",
              done_ps * 1e-6, (std::max(up_end, down_busy) + path) * 1e-6,
              (up_end + down.crc_errors * (kT + kD) + path + txn) * 1e-6,
              (unsigned long long)up.crc_errors, (unsigned long long)down.crc_errors);
}
