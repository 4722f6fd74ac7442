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
#include "testbenches/bench.h"

using namespace fabricsim;

namespace {

coll::Schedule pair_allreduce() {
  coll::CollParams cp;
  cp.ranks = 2;
  cp.count = 64 * 1024;  // 256 KiB of floats
  cp.elem_bytes = 4;
  cp.channels = 1;
  cp.chunk_bytes = 32 * 1024;
  return coll::make_schedule("all_reduce", "ring", cp);
}

}  // namespace

TEST(JobEngine, DisjointGroupsRunConcurrentlyChainsSerialiseDelaysWait) {
  Scheduler::instance();
  const LinkParams link = tb::nvlink_like(100'000, 1 << 20);
  EndpointParams ep;
  ep.ports = 2;
  ep.memory_bandwidth_Bps = 1'000'000'000'000ull;
  tb::RingBench bench(4, ep, link);
  std::vector<Endpoint*> ranks;
  for (auto& e : bench.eps) ranks.push_back(e.get());
  CollectiveEngine engine("engine", ranks, 4);
  const coll::Schedule ar = pair_allreduce();
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
  std::vector<uint64_t> took(jobs.size(), 0);
  size_t next = 0;
  uint64_t t0 = 0;
  std::function<void()> run_next = [&]() {
    if (next == jobs.size()) return;
    t0 = sc_core::sc_time_stamp().value();
    const size_t i = next++;
    engine.start(std::move(jobs[i]), [&, i]() {
      took[i] = sc_core::sc_time_stamp().value() - t0;
      run_next();
    });
  };
  run_next();
  sc_core::sc_start();
  ASSERT_GT(took[0], 0u);
  ASSERT_GT(took[3], 0u) << "jobs did not finish";
  EXPECT_EQ(took[1], took[0]) << "disjoint groups slowed each other";
  EXPECT_EQ(took[2], 2 * took[0]) << "chained collectives overlapped or stalled";
  EXPECT_EQ(took[3], took[0] + 5'000'000) << "kDelay did not wait exactly 5 us";
  // Sanity: 256 KiB over one 25 GB/s link (payload 20 GB/s) takes at least 6.5 us.
  EXPECT_GT(took[0], 6'000'000u);
  EXPECT_EQ(PacketPool::global().outstanding(), 0u);
}
