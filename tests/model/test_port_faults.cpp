// The Port's fault API (models/link/port.h, "Faults") on one link between two endpoints:
// what a failure cuts, where it goes (kept for replay, back to the owner, or to the loss
// handler), and that every credit and replay-buffer byte comes back (Port::credits_check).
#include <gtest/gtest.h>

#include <deque>
#include <functional>
#include <vector>

#include "models/endpoint/endpoint.h"
#include "testbenches/bench.h"

using namespace fabricsim;

namespace {

// A loss handler that keeps what it gets, to check and to hand back.
struct Keeper : LossHandler {
  std::vector<Packet*> lost_packets;
  std::vector<LossRecovery> recoveries;
  std::vector<LossCause> causes;
  void lost(const Port&, LossRecovery r, Packet* p, LossCause c) override {
    lost_packets.push_back(p);
    recoveries.push_back(r);
    causes.push_back(c);
  }
};

struct Pair {
  Endpoint a, b;
  Keeper keeper;
  uint64_t delivered = 0, done_ps = 0;
  Pair(const LinkParams& link) : a("a", "a", 0, params()), b("b", "b", 1, params()) {
    bind_link(a.port(0), b.port(0), link);
    a.set_routes({{}, {0}});
    b.set_routes({{0}, {}});
    a.port(0).set_loss_handler(&keeper);
    b.port(0).set_loss_handler(&keeper);
    b.on_delivery([this](const Endpoint::Delivery& d) {
      delivered += d.bytes;
      done_ps = sc_core::sc_time_stamp().value();
    });
  }
  static EndpointParams params() {
    EndpointParams ep;
    ep.ports = 1;
    return ep;
  }
  void down() {
    a.port(0).link_down();
    b.port(0).link_down();
  }
  void up() {
    a.port(0).link_up();
    b.port(0).link_up();
  }
};

// Actions at given simulated times, run by the fabric's scheduler (as the fault manager's
// are: Port::now() is the scheduler's time).
class Script : public Wakeable {
 public:
  void at(uint64_t t_ps, std::function<void()> f) {
    steps_.push_back(std::move(f));
    alarms_.push_back(Alarm{this, uint32_t(steps_.size() - 1)});
    Scheduler::instance().set(alarms_.back(), t_ps);
  }
  void wake(uint32_t what) override { steps_[what](); }

 private:
  std::vector<std::function<void()>> steps_;
  std::deque<Alarm> alarms_;  // stable addresses
};

constexpr uint64_t kBytes = 64 * 1024;  // 512 packets of 128 B, 3.28 us at 20 GB/s

}  // namespace

// Link-level replay (NVLink): the packet on the wire when the link fails is cut, its
// credits come back to the transmitter, it is kept and replayed once the link is up; the
// message arrives whole, the outage's length later.
TEST(PortFaults, LinkReplayKeepsTheCutAndReplaysItAfterLinkUp) {
  LinkParams link = tb::nvlink_like(10'000, 16 * 1024);
  link.recovery = LossRecovery::kLinkReplay;
  Pair p(link);
  Script s;
  p.a.send(1, kBytes, 1);
  s.at(1'003'200, [&] {  // 3/4 through a packet (6.4 ns each)
    const uint64_t rx_before = p.b.port(0).counters().rx_payload_bytes;
    p.down();
    EXPECT_EQ(p.a.port(0).fault_counters().cut_transactions, 1u);
    EXPECT_EQ(p.a.port(0).held(), 1u);
    EXPECT_TRUE(p.keeper.lost_packets.empty());
    // The cut packet is no longer an arrival of b: its receive counters drop by its payload.
    EXPECT_EQ(p.b.port(0).counters().rx_payload_bytes, rx_before - 128);
  });
  s.at(3'000'000, [&] {  // the link stayed down 2 us: nothing arrived
    EXPECT_EQ(p.delivered, 0u);
    p.up();
  });
  sc_core::sc_start();
  EXPECT_EQ(p.delivered, kBytes);
  EXPECT_EQ(p.a.port(0).fault_counters().replayed, 1u);
  EXPECT_EQ(p.a.port(0).fault_counters().down_ps, 2'000'000u - 3'200u);
  // 156 packets of 6.4 ns went through before the cut (the 157th was 3/4 on the wire);
  // from the link up at 3 us that one is sent whole again, then the other 355.
  EXPECT_EQ(p.done_ps, 3'000'000u + (512 - 156) * 6'400u + 10'000u);
  EXPECT_EQ(p.a.port(0).credits_check(), "");
  EXPECT_EQ(p.b.port(0).credits_check(), "");
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
}

// The failure is detected with the link still down: the kept transactions go back to the
// owner (tx_recover), which sends them again when it has a route (here: the same port once
// it is up).
TEST(PortFaults, RecoverHeldHandsTheCutBackToTheOwner) {
  LinkParams link = tb::nvlink_like(10'000, 16 * 1024);
  link.recovery = LossRecovery::kLinkReplay;
  Pair p(link);
  Script s;
  p.a.send(1, kBytes, 1);
  s.at(1'003'200, [&] {
    p.down();
    p.a.port(0).recover_held();
    EXPECT_EQ(p.a.port(0).held(), 0u);
    EXPECT_EQ(p.a.port(0).fault_counters().recovered, 1u);
  });
  s.at(2'000'000, [&] { p.up(); });
  sc_core::sc_start();
  EXPECT_EQ(p.delivered, kBytes);
  EXPECT_EQ(p.a.port(0).fault_counters().replayed, 0u);
  EXPECT_EQ(p.a.port(0).credits_check(), "");
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
}

// End-to-end retransmission (InfiniBand): the cut goes to the loss handler, its credits
// back to the transmitter; handed back to its source (Endpoint::retransmit) it completes
// the message. The receive buffer's credits balance at the end.
TEST(PortFaults, EndToEndLossGoesToTheHandlerAndRetransmits) {
  LinkParams link = tb::nvlink_like(10'000, 16 * 1024);
  link.recovery = LossRecovery::kEndToEnd;
  Pair p(link);
  Script s;
  p.a.send(1, kBytes, 1);
  s.at(1'003'200, [&] {
    p.down();
    ASSERT_EQ(p.keeper.lost_packets.size(), 1u);
    EXPECT_EQ(p.keeper.recoveries[0], LossRecovery::kEndToEnd);
    EXPECT_EQ(p.keeper.causes[0], LossCause::kLinkDown);
    EXPECT_EQ(p.a.port(0).held(), 0u);
  });
  s.at(2'000'000, [&] {
    p.up();
    p.a.retransmit(p.keeper.lost_packets.at(0));
  });
  sc_core::sc_start();
  EXPECT_EQ(p.delivered, kBytes);
  // Sent once more than the message (the retransmitted copy).
  EXPECT_EQ(p.a.payload_sourced(), kBytes + 128);
  EXPECT_EQ(p.a.port(0).credits_check(), "");
  EXPECT_EQ(p.b.port(0).credits_check(), "");
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
}

// The device behind a port fails: what is still arriving there is lost (a cause the
// handler is told), and its credits go back upstream as if it had been drained.
TEST(PortFaults, DropArrivalsReturnsTheirCredits) {
  LinkParams link = tb::nvlink_like(50'000, 16 * 1024);  // 50 ns: several packets in flight
  link.recovery = LossRecovery::kEndToEnd;
  Pair p(link);
  Script s;
  p.a.send(1, kBytes, 1);
  s.at(1'000'000, [&] {
    p.down();
    const size_t cut = p.keeper.lost_packets.size();
    p.b.port(0).drop_arrivals();
    const size_t dropped = p.keeper.lost_packets.size() - cut;
    EXPECT_GE(dropped, 5u);  // 50 ns of 6.4 ns packets were on the wire
    EXPECT_EQ(p.b.port(0).fault_counters().dropped_arrivals, dropped);
    for (size_t i = cut; i < p.keeper.lost_packets.size(); ++i)
      EXPECT_EQ(p.keeper.causes[i], LossCause::kDeviceDown);
  });
  sc_core::sc_start();
  EXPECT_EQ(p.a.port(0).credits_check(), "");  // every credit back (the link is idle)
  for (Packet* x : p.keeper.lost_packets) PacketPool::global().release(x);
}

// A bit-error burst on a link built with its replay buffer (Port::attach replay): CRC
// errors and replays during the burst only.
TEST(PortFaults, BitErrorBurstOnlyWhileItLasts) {
  LinkParams link = tb::nvlink_like(10'000, 16 * 1024);
  link.replay_buffer_bytes = 16 * 1024;
  link.recovery = LossRecovery::kLinkReplay;
  Endpoint a("a", "a", 0, Pair::params()), b("b", "b", 1, Pair::params());
  bind_link(a.port(0), b.port(0), link, 1, /*replay=*/true);
  a.set_routes({{}, {0}});
  b.set_routes({{0}, {}});
  uint64_t delivered = 0;
  b.on_delivery([&](const Endpoint::Delivery& d) { delivered += d.bytes; });
  a.send(1, 4 * kBytes, 1);
  Script s;
  uint64_t during = 0;
  s.at(2'000'000, [&] {
    EXPECT_EQ(a.port(0).counters().crc_errors, 0u);
    a.port(0).set_ber(1e-4);
  });
  s.at(6'000'000, [&] {
    during = a.port(0).counters().crc_errors;
    EXPECT_GT(during, 5u);
    a.port(0).set_ber(0);
  });
  sc_core::sc_start();
  EXPECT_EQ(a.port(0).counters().crc_errors, during);
  EXPECT_EQ(a.port(0).counters().replays, during);
  EXPECT_EQ(delivered, 4 * kBytes);
  EXPECT_EQ(a.port(0).credits_check(), "");
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
}
