#include "models/collectives/job.h"

#include <algorithm>
#include <unordered_map>

#include "models/core/errors.h"

namespace fabricsim::coll {

JobBuilder::JobBuilder(int ranks) {
  if (ranks < 1) throw InternalError("JobBuilder: ranks must be >= 1");
  s_.ranks = ranks;
  s_.programs.resize(size_t(ranks));
}

uint32_t JobBuilder::compute(int rank, uint64_t ps, std::vector<uint32_t> deps) {
  Op op;
  op.kind = OpKind::kCompute;
  op.duration_ps = ps;
  op.deps = std::move(deps);
  auto& ops = s_.programs.at(rank).ops;
  ops.push_back(std::move(op));
  return uint32_t(ops.size() - 1);
}

uint32_t JobBuilder::delay(int rank, uint64_t ps, std::vector<uint32_t> deps) {
  Op op;
  op.kind = OpKind::kDelay;
  op.duration_ps = ps;
  op.deps = std::move(deps);
  auto& ops = s_.programs.at(rank).ops;
  ops.push_back(std::move(op));
  return uint32_t(ops.size() - 1);
}

uint32_t JobBuilder::p2p(int rank, OpKind kind, int peer, uint64_t count, uint64_t tag,
                         std::vector<uint32_t> deps) {
  if (kind != OpKind::kSend && kind != OpKind::kRecv)
    throw InternalError("JobBuilder::p2p: a send or a receive");
  Op op;
  op.kind = kind;
  op.peer = peer;
  op.count = count;
  op.tag = tag;
  op.deps = std::move(deps);
  auto& ops = s_.programs.at(rank).ops;
  ops.push_back(std::move(op));
  return uint32_t(ops.size() - 1);
}

std::vector<uint32_t> JobBuilder::add(const Schedule& sub, const std::vector<int>& group,
                                      uint64_t offset,
                                      const std::vector<std::vector<uint32_t>>& start) {
  if (sub.ranks != int(group.size()) || start.size() != group.size())
    throw InternalError("JobBuilder::add: group, start and schedule sizes differ");
  // Dense renumbering of the sub's tags: unique per directed pair inside the sub, so the
  // image (next_tag_ + index) is unique per directed pair inside the job.
  std::unordered_map<uint64_t, uint64_t> tag_map;
  for (const Program& p : sub.programs)
    for (const Op& op : p.ops)
      if (op.kind == OpKind::kSend || op.kind == OpKind::kRecv)
        tag_map.emplace(op.tag, tag_map.size());
  std::vector<uint32_t> joins(group.size());
  int32_t max_stream = -1;
  int32_t max_channel = -1;
  for (size_t i = 0; i < group.size(); ++i) {
    const int rank = group[i];
    if (rank < 0 || rank >= ranks()) throw InternalError("JobBuilder::add: rank out of range");
    auto& ops = s_.programs[size_t(rank)].ops;
    const uint32_t base = uint32_t(ops.size());
    const auto& src = sub.programs[i].ops;
    std::vector<bool> has_dependent(src.size(), false);
    for (const Op& o : src) {
      Op op = o;
      if (op.kind == OpKind::kSend || op.kind == OpKind::kRecv) {
        op.peer = group.at(size_t(o.peer));
        op.offset += offset;
        op.tag = next_tag_ + tag_map.at(o.tag);
      }
      // Every embedded collective runs on its own thread blocks (streams) and connections
      // (channels): a sub's stream s becomes next_stream_ + s and its channel c
      // next_channel_ + c, so concurrent collectives never share one. Sends and receives
      // alike: the engine runs a stream's receives in its order too, and keys a connection's
      // receive proxy by (peer, stream, channel).
      if ((op.kind == OpKind::kSend || op.kind == OpKind::kRecv) && o.stream >= 0) {
        op.stream = next_stream_ + o.stream;
        max_stream = std::max(max_stream, o.stream);
      }
      if ((op.kind == OpKind::kSend || op.kind == OpKind::kRecv) && o.channel >= 0) {
        op.channel = next_channel_ + o.channel;
        max_channel = std::max(max_channel, o.channel);
      }
      if (op.deps.empty()) {
        op.deps = start[i];
      } else {
        for (uint32_t& d : op.deps) {
          has_dependent[d] = true;
          d += base;
        }
      }
      ops.push_back(std::move(op));
    }
    std::vector<uint32_t> sinks;
    for (uint32_t k = 0; k < src.size(); ++k)
      if (!has_dependent[k]) sinks.push_back(base + k);
    joins[i] = delay(rank, 0, src.empty() ? start[i] : sinks);
  }
  next_tag_ += tag_map.size();
  next_stream_ += max_stream + 1;
  next_channel_ += max_channel + 1;
  return joins;
}

std::vector<uint32_t> JobBuilder::collective(const Schedule& sub, const std::vector<int>& group,
                                             uint64_t offset, uint64_t launch_ps,
                                             const std::vector<std::vector<uint32_t>>& start) {
  // One rank alone moves nothing: no launch (so a 1-rank job is pure compute).
  if (group.size() == 1) return add(sub, group, offset, start);
  std::vector<std::vector<uint32_t>> launched(group.size());
  for (size_t i = 0; i < group.size(); ++i)
    launched[i] = {delay(group[i], launch_ps, start.at(i))};
  return add(sub, group, offset, launched);
}

Schedule JobBuilder::finish(std::string name) {
  s_.algorithm = std::move(name);
  uint64_t count = 0;
  for (const Program& p : s_.programs)
    for (const Op& op : p.ops)
      if (op.kind == OpKind::kSend || op.kind == OpKind::kRecv)
        count = std::max(count, op.offset + op.count);
  s_.count = count;
  validate(s_);
  return std::move(s_);
}

uint64_t compute_ps(const Schedule& s, int rank) {
  uint64_t t = 0;
  for (const Op& op : s.programs.at(size_t(rank)).ops)
    if (op.kind == OpKind::kCompute) t += op.duration_ps;
  return t;
}

}  // namespace fabricsim::coll
