// Structural validation of collective schedules (see program.h).
#include "models/collectives/program.h"

#include <algorithm>
#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

#include "models/core/errors.h"

namespace fabricsim::coll {

// Schedules on 576+ ranks hold hundreds of millions of ops: Op::channel sits in padding
// after Op::stream and must not grow the op (LP64: 56 bytes of fields, then the deps).
static_assert(sizeof(void*) != 8 || sizeof(Op) <= 56 + sizeof(std::vector<uint32_t>),
              "coll::Op grew: keep its fields within 56 bytes");

namespace {

const char* kind_name(OpKind k) {
  switch (k) {
    case OpKind::kSend:
      return "send";
    case OpKind::kRecv:
      return "recv";
    case OpKind::kCompute:
      return "compute";
    case OpKind::kDelay:
      return "delay";
    case OpKind::kNvlsReduce:
      return "nvls_reduce";
    case OpKind::kNvlsStore:
      return "nvls_store";
  }
  return "invalid-kind";
}

// "schedule 'ring': " -- every message starts with this so logs say which schedule broke.
std::string prefix(const Schedule& s) {
  return "validate: schedule '" + s.algorithm + "': ";
}

}  // namespace

std::string describe_op(int rank, std::size_t index, const Op& op) {
  std::ostringstream os;
  os << "rank " << rank << " op " << index << " (" << kind_name(op.kind);
  if (op.kind == OpKind::kNvlsReduce || op.kind == OpKind::kNvlsStore) {
    os << " tag=0x" << std::hex << op.tag << std::dec << " offset=" << op.offset
       << " count=" << op.count;
  } else if (op.kind == OpKind::kSend || op.kind == OpKind::kRecv) {
    os << " peer=" << op.peer << " tag=0x" << std::hex << op.tag << std::dec
       << " offset=" << op.offset << " count=" << op.count;
    if (op.kind == OpKind::kRecv)
      os << " mode=" << (op.mode == RecvMode::kReduceSum ? "reduce-sum" : "copy");
  } else if (op.kind == OpKind::kCompute || op.kind == OpKind::kDelay) {
    os << " duration_ps=" << op.duration_ps;
  }
  os << ")";
  return os.str();
}

namespace {

[[noreturn]] void fail(const Schedule& s, const std::string& what) {
  throw InternalError(prefix(s) + what);
}

// One end of a point-to-point message, keyed by the directed pair and tag it matches on.
struct MsgEnd {
  int sender = 0;
  int receiver = 0;
  uint64_t tag = 0;
  bool is_send = false;
  bool multicast = false;  // the send is a kNvlsStore (one end per receiver)
  int rank = 0;           // rank whose program holds the op
  std::size_t index = 0;  // op index in that program
};

}  // namespace

void validate(const Schedule& s) {
  if (s.ranks < 0) fail(s, "ranks = " + std::to_string(s.ranks) + " is negative");
  if (s.programs.size() != static_cast<std::size_t>(s.ranks))
    fail(s, "has " + std::to_string(s.programs.size()) + " programs for " +
                std::to_string(s.ranks) + " ranks (need one per rank)");

  if (s.nvls_group < 0 || (s.nvls_group > 0 && s.ranks % s.nvls_group != 0))
    fail(s, "nvls_group = " + std::to_string(s.nvls_group) + " does not divide ranks " +
                std::to_string(s.ranks));
  std::vector<MsgEnd> ends;
  for (int r = 0; r < s.ranks; ++r) {
    const std::vector<Op>& ops = s.programs[static_cast<std::size_t>(r)].ops;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      for (uint32_t d : op.deps) {
        if (static_cast<std::size_t>(d) >= i)
          fail(s, describe_op(r, i, op) + ": dep " + std::to_string(d) +
                      " does not point to an earlier op of rank " + std::to_string(r) +
                      " (deps must be < " + std::to_string(i) + ")");
      }
      auto check_range = [&]() {
        // Overflow-safe form of offset + count <= s.count.
        if (op.count > s.count || op.offset > s.count - op.count)
          fail(s, describe_op(r, i, op) + ": element range [" + std::to_string(op.offset) +
                      ", " + std::to_string(op.offset) + "+" + std::to_string(op.count) +
                      ") exceeds the buffer of " + std::to_string(s.count) + " elements");
      };
      switch (op.kind) {
        case OpKind::kCompute:
        case OpKind::kDelay:
          continue;
        case OpKind::kNvlsReduce:
          check_range();
          continue;
        case OpKind::kNvlsStore:
          check_range();
          for (int q = nvls_group_first(s, r); q < nvls_group_first(s, r) + nvls_group_size(s);
               ++q) {
            MsgEnd e;
            e.is_send = true;
            e.multicast = true;
            e.sender = r;
            e.receiver = q;
            e.tag = op.tag;
            e.rank = r;
            e.index = i;
            ends.push_back(e);
          }
          continue;
        case OpKind::kSend:
        case OpKind::kRecv:
          break;
        default:
          fail(s, "rank " + std::to_string(r) + " op " + std::to_string(i) +
                      ": unknown op kind " + std::to_string(static_cast<int>(op.kind)));
      }
      if (op.peer < 0 || op.peer >= s.ranks)
        fail(s, describe_op(r, i, op) + ": peer " + std::to_string(op.peer) +
                    " out of range [0, " + std::to_string(s.ranks) + ")");
      // A rank receives from itself only its own multicast store (checked when pairing).
      if (op.peer == r && op.kind == OpKind::kSend)
        fail(s, describe_op(r, i, op) + ": peer is the rank itself");
      // Overflow-safe form of offset + count <= s.count.
      if (op.count > s.count || op.offset > s.count - op.count)
        fail(s, describe_op(r, i, op) + ": element range [" + std::to_string(op.offset) + ", " +
                    std::to_string(op.offset) + "+" + std::to_string(op.count) +
                    ") exceeds the buffer of " + std::to_string(s.count) + " elements");
      if (op.kind == OpKind::kRecv && op.mode != RecvMode::kCopy &&
          op.mode != RecvMode::kReduceSum)
        fail(s, describe_op(r, i, op) + ": unknown recv mode " +
                    std::to_string(static_cast<int>(op.mode)));
      MsgEnd e;
      e.is_send = op.kind == OpKind::kSend;
      e.sender = e.is_send ? r : op.peer;
      e.receiver = e.is_send ? op.peer : r;
      e.tag = op.tag;
      e.rank = r;
      e.index = i;
      ends.push_back(e);
    }
  }

  // Group both ends of each (sender, receiver, tag) together; sends before recvs in a group.
  std::sort(ends.begin(), ends.end(), [](const MsgEnd& a, const MsgEnd& b) {
    if (a.sender != b.sender) return a.sender < b.sender;
    if (a.receiver != b.receiver) return a.receiver < b.receiver;
    if (a.tag != b.tag) return a.tag < b.tag;
    if (a.is_send != b.is_send) return a.is_send;
    if (a.rank != b.rank) return a.rank < b.rank;
    return a.index < b.index;
  });
  auto op_of = [&s](const MsgEnd& e) -> const Op& {
    return s.programs[static_cast<std::size_t>(e.rank)].ops[e.index];
  };
  for (std::size_t g = 0; g < ends.size();) {
    std::size_t h = g;
    while (h < ends.size() && ends[h].sender == ends[g].sender &&
           ends[h].receiver == ends[g].receiver && ends[h].tag == ends[g].tag)
      ++h;
    std::size_t sends = 0;
    while (g + sends < h && ends[g + sends].is_send) ++sends;
    const std::size_t recvs = h - g - sends;
    const MsgEnd& first = ends[g];
    std::ostringstream key;
    key << "sender " << first.sender << " -> receiver " << first.receiver << " tag 0x"
        << std::hex << first.tag;
    if (sends == 0)
      fail(s, describe_op(first.rank, first.index, op_of(first)) +
                  ": no matching send (expected a send on rank " +
                  std::to_string(first.sender) + " with peer=" +
                  std::to_string(first.receiver) + " and the same tag)");
    if (sends > 1)
      fail(s, key.str() + ": " + std::to_string(sends) + " sends share the tag: " +
                  describe_op(ends[g].rank, ends[g].index, op_of(ends[g])) + " and " +
                  describe_op(ends[g + 1].rank, ends[g + 1].index, op_of(ends[g + 1])) +
                  " (tags must be unique per sender/receiver pair)");
    if (recvs == 0)
      fail(s, describe_op(first.rank, first.index, op_of(first)) +
                  ": no matching recv (expected a recv on rank " +
                  std::to_string(first.receiver) + " with peer=" +
                  std::to_string(first.sender) + " and the same tag)");
    if (recvs > 1)
      fail(s, describe_op(first.rank, first.index, op_of(first)) + ": matched by " +
                  std::to_string(recvs) + " recvs, e.g. " +
                  describe_op(ends[g + 1].rank, ends[g + 1].index, op_of(ends[g + 1])) +
                  " and " +
                  describe_op(ends[g + 2].rank, ends[g + 2].index, op_of(ends[g + 2])) +
                  " (need exactly one)");
    if (first.sender == first.receiver && !first.multicast)
      fail(s, describe_op(ends[g + 1].rank, ends[g + 1].index, op_of(ends[g + 1])) +
                  ": peer is the rank itself (only a multicast store reaches its sender)");
    const Op& snd = op_of(first);
    const Op& rcv = op_of(ends[g + 1]);
    if (snd.count != rcv.count)
      fail(s, describe_op(first.rank, first.index, snd) + " sends " + std::to_string(snd.count) +
                  " elements but its matching " +
                  describe_op(ends[g + 1].rank, ends[g + 1].index, rcv) + " expects " +
                  std::to_string(rcv.count));
    g = h;
  }
}

}  // namespace fabricsim::coll
