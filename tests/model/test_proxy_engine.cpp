// The engine's network proxy (engine.h, "Proxy") on a hand-computable case: two GPUs whose
// only port is a scale-out NIC port, joined by one link. Every time below is a sum of the
// named parameters and one wire time, so a test fails if a stage is missing, counted
// twice, or overlapped where NCCL serialises it (store and forward per step):
//   pass  = the step's bytes at channel_bandwidth (the thread block writes the buffer)
//   F     = fence_latency (Simple: the block's fence before its tail)
//   P     = proxy_post_latency (tail -> RDMA write posted; slot consumed -> receive posted)
//   w + p = the step's wire time on the link + the link latency (the endpoint's DMA)
//   Q + L = proxy_poll_latency + proxy_flush_latency (completion seen, flushed, tail written)
//   G     = flag_latency (the reader's block sees the tail)
#include <gtest/gtest.h>

#include "models/collectives/engine.h"
#include "models/core/scheduler.h"
#include "testbenches/bench.h"

using namespace fabricsim;

namespace {

constexpr uint64_t kPass = 10'000'000;   // 64 KiB at 6.5536 GB/s: 10 us
constexpr uint64_t kF = 1'800'000;       // 1.8 us
constexpr uint64_t kP = 1'000'000;       // 1 us
constexpr uint64_t kQ = 700'000;         // 0.7 us
constexpr uint64_t kL = 1'300'000;       // 1.3 us
constexpr uint64_t kG = 300'000;         // 0.3 us
constexpr uint64_t kLat = 500'000;       // link latency 0.5 us
constexpr uint64_t kStep = 64 * 1024;    // bytes per step (16384 floats)

struct Bench {
  LinkParams link = tb::nvlink_like(kLat, 1 << 20);
  std::vector<std::unique_ptr<Endpoint>> eps;
  std::unique_ptr<CollectiveEngine> engine;
  explicit Bench(uint32_t slots) {
    Scheduler::instance();
    EndpointParams ep;
    ep.ports = 0;        // no fabric port: port 0 is the NIC port
    ep.nic_ports = 1;
    ep.memory_bandwidth_Bps = 1'000'000'000'000ull;
    ep.fence_latency_ps = kF;
    ep.flag_latency_ps = kG;
    ep.proxy_post_latency_ps = kP;
    ep.proxy_poll_latency_ps = kQ;
    ep.proxy_flush_latency_ps = kL;
    ep.channel_bps[0] = kStep * 8 * 100'000;  // kStep bytes in 10 us
    for (int i = 0; i < 2; ++i)
      eps.push_back(std::make_unique<Endpoint>(("ep" + std::to_string(i)).c_str(),
                                               "ep" + std::to_string(i), uint32_t(i), ep));
    bind_link(eps[0]->port(0), eps[1]->port(0), link, 1, false);
    eps[0]->set_routes({{}, {0}});
    eps[1]->set_routes({{0}, {}});
    engine = std::make_unique<CollectiveEngine>(
        "engine", std::vector<Endpoint*>{eps[0].get(), eps[1].get()}, 4);
    coll::SyncProtocol sp;
    sp.fence_flag = true;
    sp.ack_bytes = 16;
    sp.flag_bytes = 8;
    sp.slots = slots;
    engine->set_sync(sp);
  }
  // Wire time of `bytes` of payload in the link's packets.
  uint64_t wire_ps(uint64_t bytes) const {
    const uint64_t full = bytes / link.packet_payload, last = bytes % link.packet_payload;
    uint64_t wire = full * link.framing->packet_wire_bytes(link.packet_payload);
    if (last) wire += link.framing->packet_wire_bytes(uint32_t(last));
    return transfer_ps(wire, link.rate_bps);
  }
  // `steps` steps of kStep from rank 0 to rank 1 on one connection (stream 0), or with
  // `streamless` issued at once without a stream, on one shared connection or (with
  // `per_channel`) step j on channel j's.
  uint64_t run(int steps, bool streamless = false, bool per_channel = false) {
    coll::Schedule s;
    s.algorithm = "steps";
    s.ranks = 2;
    s.count = uint64_t(steps) * kStep / 4;
    s.programs.resize(2);
    for (int j = 0; j < steps; ++j) {
      coll::Op send;
      send.kind = coll::OpKind::kSend;
      send.peer = 1;
      send.tag = uint64_t(j);
      send.offset = uint64_t(j) * kStep / 4;
      send.count = kStep / 4;
      send.stream = streamless ? -1 : 0;
      send.channel = per_channel ? int32_t(j) : -1;
      s.programs[0].ops.push_back(send);
      coll::Op recv = send;
      recv.kind = coll::OpKind::kRecv;
      recv.peer = 0;
      s.programs[1].ops.push_back(recv);
    }
    coll::validate(s);
    uint64_t done_ps = 0;
    engine->start(std::move(s), [&] { done_ps = sc_core::sc_time_stamp().value(); });
    sc_core::sc_start();
    EXPECT_EQ(PacketPool::global().outstanding(), 0u);
    return done_ps;
  }
};

}  // namespace

// One step: nothing overlaps. The block writes and fences it, the proxy posts it, it
// crosses the link whole, the receive proxy polls, flushes and writes the tail, the
// reader's block sees it.
TEST(NetProxy, OneStepIsTheSumOfItsStages) {
  Bench b(8);
  const uint64_t t = b.run(1);
  const uint64_t expect = kPass + kF + kP + b.wire_ps(kStep) + kLat + kQ + kL + kG;
  RecordProperty("simulated_ps", std::to_string(t));
  RecordProperty("expected_ps", std::to_string(expect));
  EXPECT_EQ(t, expect);
  // The sender's block was free when its fence retired: the proxy posted the write later.
  EXPECT_EQ(b.engine->op_done_ps(0, 0), kPass + kF);
}

// Two steps, 8 slots: the block writes step 1 while the proxy and the link carry step 0
// (the pass is longer than the rest of the path), so only step 1's path is exposed after
// two passes: the steps are pipelined, each one stored and forwarded.
TEST(NetProxy, TwoStepsPipelineThroughTheSlots) {
  Bench b(8);
  const uint64_t t = b.run(2);
  const uint64_t expect = 2 * (kPass + kF) + kP + b.wire_ps(kStep) + kLat + kQ + kL + kG;
  EXPECT_EQ(t, expect);
  EXPECT_EQ(b.engine->op_done_ps(1, 0), kPass + kF + kP + b.wire_ps(kStep) + kLat + kQ + kL + kG);
}

// Two steps, one slot: step 1 waits until the reader has consumed step 0, its receive
// proxy has posted the receive (P) and the clear-to-send (an 8 B head) has crossed the
// link back.
TEST(NetProxy, OneSlotWaitsForTheReceiveProxysClearToSend) {
  Bench b(1);
  const uint64_t t = b.run(2);
  const uint64_t one = kPass + kF + kP + b.wire_ps(kStep) + kLat + kQ + kL + kG;
  const uint64_t head = kP + b.wire_ps(8) + kLat;
  EXPECT_EQ(b.engine->op_done_ps(1, 0), one);
  EXPECT_EQ(t, 2 * one + head);
}

// Stream-less sends (hierarchical_nvls's ring across nodes, direct, all-to-all: no thread
// block serialises them) on two channels with one slot per connection. A connection is
// (writer, reader, stream, channel) (engine.h, "Slots"), as NCCL gives every channel its
// own connectors to each peer (ncclChannel::peers, NCCL_STEPS slots each): step 1 on
// channel 1 does not wait for step 0's slot. Both passes run at once, both proxies post
// at the same time and the link carries the steps back to back (oldest first), so the
// last one lands one wire time after the first. On main's engine, which keyed a
// connection by (writer, reader, stream) only, this took 2 x one + head (next test).
TEST(NetProxy, StreamlessChannelsHaveTheirOwnSlots) {
  Bench b(1);
  const uint64_t t = b.run(2, /*streamless=*/true, /*per_channel=*/true);
  const uint64_t one = kPass + kF + kP + b.wire_ps(kStep) + kLat + kQ + kL + kG;
  RecordProperty("simulated_ps", std::to_string(t));
  EXPECT_EQ(t, one + b.wire_ps(kStep));
  EXPECT_EQ(b.engine->op_done_ps(0, 1), kPass + kF);  // its slot was free at once
}

// The same two stream-less steps without a channel share one connection: step 1 waits for
// step 0's clear-to-send, the one-slot sum of OneSlotWaitsForTheReceiveProxysClearToSend.
TEST(NetProxy, StreamlessStepsWithoutAChannelShareOneConnection) {
  Bench b(1);
  const uint64_t t = b.run(2, /*streamless=*/true, /*per_channel=*/false);
  const uint64_t one = kPass + kF + kP + b.wire_ps(kStep) + kLat + kQ + kL + kG;
  const uint64_t head = kP + b.wire_ps(8) + kLat;
  EXPECT_EQ(t, 2 * one + head);
}
