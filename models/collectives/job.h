// Composing a job (e.g. one training step) as ONE Schedule: compute ops, delays and any
// number of collectives, each on a group of ranks (a communicator), tied together by
// dependencies. Plain data, no SystemC; the CollectiveEngine runs the result like any
// collective, so collectives of a job overlap with compute and with each other exactly as
// far as their dependencies allow.
//
// Streams are expressed with dependencies: a "stream" is a chain in which each item's first
// ops depend on the previous item's completion (its join op). JobBuilder::collective gives
// every collective a launch delay (kDelay) on its stream and returns per member rank a join
// op (kDelay 0) that completes when the collective's last op on that rank has.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "models/collectives/program.h"

namespace fabricsim::coll {

class JobBuilder {
 public:
  explicit JobBuilder(int ranks);

  int ranks() const { return int(s_.programs.size()); }

  // A compute op on `rank` (the rank's compute unit runs one at a time) of `ps`.
  uint32_t compute(int rank, uint64_t ps, std::vector<uint32_t> deps);
  // A kDelay op on `rank`: completes `ps` after its deps (0: a join point).
  uint32_t delay(int rank, uint64_t ps, std::vector<uint32_t> deps);
  // One side of a point-to-point message of `count` elements between `rank` and `peer`
  // (a kSend or a kRecv that copies); both sides carry the same `tag`, from new_tag().
  uint32_t p2p(int rank, OpKind kind, int peer, uint64_t count, uint64_t tag,
               std::vector<uint32_t> deps);
  // A tag that no collective embedded before or after uses.
  uint64_t new_tag() { return next_tag_++; }

  // Embeds `sub`, a schedule over group.size() ranks, with its rank i on rank group[i]:
  // peers mapped through `group`, element offsets shifted by `offset`, tags renumbered to
  // be unique in the job, streams and channels renumbered so that no two embedded
  // collectives share a thread block or a connection, deps shifted. The sub's dep-free ops of member i depend on
  // start[i] (empty: none). Returns, per member, a join op that completes when all of the
  // sub's ops on that rank have (with start[i] if the sub has no ops there).
  std::vector<uint32_t> add(const Schedule& sub, const std::vector<int>& group, uint64_t offset,
                            const std::vector<std::vector<uint32_t>>& start);

  // add() preceded by a launch delay of `launch_ps` per member after start[i]; a group of
  // one rank (nothing to move) gets no launch delay.
  std::vector<uint32_t> collective(const Schedule& sub, const std::vector<int>& group,
                                   uint64_t offset, uint64_t launch_ps,
                                   const std::vector<std::vector<uint32_t>>& start);

  // The job: buffer = the largest element range any op uses. Validated (program.h).
  Schedule finish(std::string name);

  // Ops of rank r so far (the next op's index).
  uint32_t size(int rank) const { return uint32_t(s_.programs.at(rank).ops.size()); }

 private:
  Schedule s_;
  uint64_t next_tag_ = 0;
  int32_t next_stream_ = 0;   // first stream id of the next embedded collective
  int32_t next_channel_ = 0;  // first channel id of the next embedded collective
};

// Sum of the durations of the kCompute ops of `rank` (its compute stream's busy time).
uint64_t compute_ps(const Schedule& s, int rank);

}  // namespace fabricsim::coll
