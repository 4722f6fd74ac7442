// The engine runs composed jobs (models/collectives/job.h): collectives on disjoint rank
// groups run concurrently, a comm-stream chain serialises them, and kDelay waits exactly
// its duration. On a ring of point-to-point links, groups {0,1} and {2,3} use disjoint
// links (0-1 and 2-3), so nothing they share can slow one down: the concurrent job must
// take exactly as long as one collective alone, the chained job exactly twice, and a job
// behind a 5 us delay exactly 5 us more (all to the picosecond: same packets, same links).
#include <gtest/gtest.h>

#include "models/collectives/algorithms.h"
#include "models/collectives/engine.h"
#include "models/collectives/job.h"
#include "models/core/scheduler.h"
#include "models/core/timer.h"
#include "testbenches/bench.h"

using namespace fabricsim;

namespace {

// A ring all-reduce of `count` floats on two ranks, in 32 KiB chunks.
coll::Schedule pair_allreduce(uint64_t count, int channels) {
  coll::CollParams cp;
  cp.ranks = 2;
  cp.count = count;
  cp.elem_bytes = 4;
  cp.channels = channels;
  cp.chunk_bytes = 32 * 1024;
  return coll::make_schedule("all_reduce", "ring", cp);
}

// Four ranks on a ring of point-to-point links (one 25 GB/s NVLink-like link each way per
// neighbour pair) and an engine over them.
struct Rig {
  Rig()
      : bench(4, endpoint(), tb::nvlink_like(100'000, 1 << 20)),
        ranks(pointers(bench)),
        engine("engine", ranks, 4) {}
  static EndpointParams endpoint() {
    EndpointParams ep;
    ep.ports = 2;
    ep.memory_bandwidth_Bps = 1'000'000'000'000ull;
    return ep;
  }
  static std::vector<Endpoint*> pointers(tb::RingBench& b) {
    std::vector<Endpoint*> r;
    for (auto& e : b.eps) r.push_back(e.get());
    return r;
  }
  tb::RingBench bench;
  std::vector<Endpoint*> ranks;
  CollectiveEngine engine;
};

// Runs the jobs one after another and returns how long each took. gap_ps > 0: each job
// starts that long after the previous one completed (its last protocol messages, e.g.
// slot releases, are still on the wire when it completes); 0: at once.
std::vector<uint64_t> run_jobs(CollectiveEngine& engine, std::vector<coll::Schedule>& jobs,
                               uint64_t gap_ps) {
  std::vector<uint64_t> took(jobs.size(), 0);
  size_t next = 0;
  uint64_t t0 = 0;
  std::function<void()> run_next;
  TimerQueue gap("gap", [&](uint64_t) { run_next(); });
  run_next = [&]() {
    if (next == jobs.size()) return;
    t0 = sc_core::sc_time_stamp().value();
    const size_t i = next++;
    engine.start(std::move(jobs[i]), [&, i]() {
      took[i] = sc_core::sc_time_stamp().value() - t0;
      if (gap_ps == 0)
        run_next();
      else
        gap.at(sc_core::sc_time_stamp().value() + gap_ps, 0);
    });
  };
  run_next();
  sc_core::sc_start();
  return took;
}

}  // namespace

TEST(JobEngine, DisjointGroupsRunConcurrentlyChainsSerialiseDelaysWait) {
  Scheduler::instance();
  Rig rig;
  CollectiveEngine& engine = rig.engine;
  const coll::Schedule ar = pair_allreduce(64 * 1024, 1);  // 256 KiB of floats
  const std::vector<std::vector<uint32_t>> none(2);

  std::vector<coll::Schedule> jobs;
  {  // 0: group {0,1} alone
    coll::JobBuilder b(4);
    b.add(ar, {0, 1}, 0, none);
    jobs.push_back(b.finish("alone"));
  }
  {  // 1: {0,1} and {2,3} at once
    coll::JobBuilder b(4);
    b.add(ar, {0, 1}, 0, none);
    b.add(ar, {2, 3}, 0, none);
    jobs.push_back(b.finish("concurrent"));
  }
  {  // 2: {0,1} twice on one stream (the second waits for the first's join)
    coll::JobBuilder b(4);
    const std::vector<uint32_t> j = b.add(ar, {0, 1}, 0, none);
    b.add(ar, {0, 1}, 0, {{j[0]}, {j[1]}});
    jobs.push_back(b.finish("chained"));
  }
  {  // 3: {0,1} behind a 5 us launch delay
    coll::JobBuilder b(4);
    b.collective(ar, {0, 1}, 0, 5'000'000, none);
    jobs.push_back(b.finish("delayed"));
  }
  const std::vector<uint64_t> took = run_jobs(engine, jobs, 0);
  ASSERT_GT(took[0], 0u);
  ASSERT_GT(took[3], 0u) << "jobs did not finish";
  EXPECT_EQ(took[1], took[0]) << "disjoint groups slowed each other";
  EXPECT_EQ(took[2], 2 * took[0]) << "chained collectives overlapped or stalled";
  EXPECT_EQ(took[3], took[0] + 5'000'000) << "kDelay did not wait exactly 5 us";
  // Sanity: 256 KiB over one 25 GB/s link (payload 20 GB/s) takes at least 6.5 us.
  EXPECT_GT(took[0], 6'000'000u);
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
}

// The same composition under the protocol model (NCCL Simple: fence, flag, 8 slots per
// connection), where a ring's sends and receives run in their channel's thread block
// (Op::stream) in program order. Every embedded collective gets its own streams and
// connections, receives included: the second of two chained all-reduces must take exactly
// as long as the first (its receives once joined the first collective's stream ids while
// its sends got new ones, so its thread block's order was not the first's), and disjoint
// groups must not slow each other (exact: they share nothing).
TEST(JobEngine, ChainedCollectivesUnderTheProtocolModelEachTakeTheirOwnTime) {
  Scheduler::instance();
  Rig rig;
  CollectiveEngine& engine = rig.engine;
  coll::SyncProtocol sync;
  sync.fence_flag = true;
  sync.ack_bytes = 16;
  sync.flag_bytes = 8;
  sync.slots = 8;
  engine.set_sync(sync);
  const coll::Schedule ar = pair_allreduce(256 * 1024, 2);  // 1 MiB of floats
  const std::vector<std::vector<uint32_t>> none(2);

  std::vector<coll::Schedule> jobs;
  {  // 0: once
    coll::JobBuilder b(4);
    b.add(ar, {0, 1}, 0, none);
    jobs.push_back(b.finish("alone"));
  }
  {  // 1: three times, chained on {0,1}
    coll::JobBuilder b(4);
    std::vector<uint32_t> j = b.add(ar, {0, 1}, 0, none);
    j = b.add(ar, {0, 1}, 0, {{j[0]}, {j[1]}});
    b.add(ar, {0, 1}, 0, {{j[0]}, {j[1]}});
    jobs.push_back(b.finish("chained3"));
  }
  {  // 2: {2,3} and {0,1} at once (disjoint links)
    coll::JobBuilder b(4);
    b.add(ar, {2, 3}, 0, none);
    b.add(ar, {0, 1}, 0, none);
    jobs.push_back(b.finish("concurrent"));
  }
  // Each job starts 20 us after the previous one completed: its last slot releases (kHead)
  // are still on the wire when it completes (the sweep waits for them the same way).
  const std::vector<uint64_t> took = run_jobs(engine, jobs, 20'000'000);
  ASSERT_GT(took[0], 0u);
  ASSERT_GT(took[2], 0u) << "jobs did not finish";
  // Chained collectives couple only through the previous one's last acks, flags and slot
  // releases (tens of bytes) still on the links when the next starts: nanoseconds in
  // ~170 us. Tolerance 0.05%. (With the receives on the first collective's stream ids the
  // chain took 0.9% less: the later collectives' sends no longer waited for their thread
  // block's receives.)
  EXPECT_NEAR(double(took[1]), 3.0 * double(took[0]), 0.0005 * 3.0 * double(took[0]))
      << "a chained collective did not take its own time";
  EXPECT_EQ(took[2], took[0]) << "disjoint groups slowed each other";
  // Sanity: 1 MiB all-reduced by 2 ranks moves 1 MiB each way over one 20 GB/s payload
  // link: at least 52 us.
  EXPECT_GT(took[0], 52'000'000u);
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
}
