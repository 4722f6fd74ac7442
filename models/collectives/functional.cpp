// Functional (untimed) executor for collective schedules; semantics in functional.h.
#include "models/collectives/functional.h"

#include <algorithm>
#include <cstddef>
#include <sstream>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "models/core/errors.h"

namespace fabricsim::coll {

namespace {

// (sender, receiver, tag): what a send and its recv match on.
using MsgKey = std::tuple<int, int, uint64_t>;

struct MsgKeyHash {
  std::size_t operator()(const MsgKey& k) const {
    // splitmix64 finalizer over the packed pair and the tag.
    uint64_t x = (static_cast<uint64_t>(static_cast<uint32_t>(std::get<0>(k))) << 32 |
                  static_cast<uint32_t>(std::get<1>(k))) ^
                 (std::get<2>(k) * 0x9E3779B97F4A7C15ull);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return static_cast<std::size_t>(x ^ (x >> 31));
  }
};

// xorshift64 (Marsaglia); local so that orders are identical on every platform.
class XorShift64 {
 public:
  explicit XorShift64(uint64_t seed) : state_(seed != 0 ? seed : 0x9E3779B97F4A7C15ull) {}
  uint64_t next() {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    return state_;
  }

 private:
  uint64_t state_;
};

[[noreturn]] void fail(const Schedule& s, const std::string& what) {
  throw InternalError("run_functional: schedule '" + s.algorithm + "': " + what);
}

}  // namespace

FunctionalResult run_functional(const Schedule& s,
                                const std::vector<std::vector<double>>& inputs,
                                uint64_t shuffle_seed) {
  if (s.ranks < 0 || s.programs.size() != static_cast<std::size_t>(s.ranks))
    fail(s, std::to_string(s.programs.size()) + " programs for " + std::to_string(s.ranks) +
                " ranks");
  if (inputs.size() != static_cast<std::size_t>(s.ranks))
    fail(s, std::to_string(inputs.size()) + " input buffers for " + std::to_string(s.ranks) +
                " ranks");
  for (std::size_t r = 0; r < inputs.size(); ++r)
    if (inputs[r].size() != s.count)
      fail(s, "input buffer of rank " + std::to_string(r) + " has " +
                  std::to_string(inputs[r].size()) + " elements, the schedule needs " +
                  std::to_string(s.count));

  // Global op ids: base[r] + index. Checks every op is safe to execute.
  const std::size_t nranks = static_cast<std::size_t>(s.ranks);
  if (s.nvls_group < 0 || (s.nvls_group > 0 && s.ranks % s.nvls_group != 0))
    fail(s, "nvls_group " + std::to_string(s.nvls_group) + " does not divide ranks " +
                std::to_string(s.ranks));
  std::vector<std::size_t> base(nranks + 1, 0);
  for (std::size_t r = 0; r < nranks; ++r) base[r + 1] = base[r] + s.programs[r].ops.size();
  const std::size_t total = base[nranks];
  std::vector<int> rank_of(total);
  std::vector<std::size_t> pending(total);  // deps not yet completed
  std::vector<std::size_t> dep_begin(total + 1, 0);  // CSR of dependents
  for (std::size_t r = 0; r < nranks; ++r) {
    const std::vector<Op>& ops = s.programs[r].ops;
    const int rank = static_cast<int>(r);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      rank_of[base[r] + i] = rank;
      pending[base[r] + i] = op.deps.size();
      for (uint32_t d : op.deps) {
        if (d >= ops.size())
          fail(s, describe_op(rank, i, op) + ": dep " + std::to_string(d) +
                      " out of range (rank has " + std::to_string(ops.size()) + " ops)");
        ++dep_begin[base[r] + d + 1];
      }
      if (op.kind == OpKind::kCompute || op.kind == OpKind::kDelay) continue;
      const bool nvls = op.kind == OpKind::kNvlsReduce || op.kind == OpKind::kNvlsStore;
      if (op.kind != OpKind::kSend && op.kind != OpKind::kRecv && !nvls)
        fail(s, describe_op(rank, i, op) + ": unknown op kind");
      // A recv from itself is legal: it receives the rank's own multicast store.
      if (!nvls && (op.peer < 0 || op.peer >= s.ranks ||
                    (op.peer == rank && op.kind == OpKind::kSend)))
        fail(s, describe_op(rank, i, op) + ": invalid peer");
      if (op.count > s.count || op.offset > s.count - op.count)
        fail(s, describe_op(rank, i, op) + ": range exceeds the buffer of " +
                    std::to_string(s.count) + " elements");
    }
  }
  for (std::size_t g = 0; g < total; ++g) dep_begin[g + 1] += dep_begin[g];
  std::vector<std::size_t> dependents(dep_begin[total]);
  {
    std::vector<std::size_t> fill(dep_begin.begin(), dep_begin.end() - 1);
    for (std::size_t r = 0; r < nranks; ++r)
      for (std::size_t i = 0; i < s.programs[r].ops.size(); ++i)
        for (uint32_t d : s.programs[r].ops[i].deps) dependents[fill[base[r] + d]++] = base[r] + i;
  }

  FunctionalResult res;
  res.buffers = inputs;
  std::unordered_map<MsgKey, std::vector<double>, MsgKeyHash> mailbox;  // sent, not received
  std::unordered_set<MsgKey, MsgKeyHash> sent;                          // every key ever sent
  std::unordered_map<MsgKey, std::size_t, MsgKeyHash> parked;  // deps met, awaiting data
  std::vector<bool> done(total, false);
  std::size_t completed = 0;

  // Executable ops. FIFO (head advances) in program-order mode; random pick otherwise.
  std::vector<std::size_t> ready;
  std::size_t head = 0;
  for (std::size_t g = 0; g < total; ++g)
    if (pending[g] == 0) ready.push_back(g);
  XorShift64 rng(shuffle_seed);

  auto op_at = [&](std::size_t g) -> const Op& {
    const std::size_t r = static_cast<std::size_t>(rank_of[g]);
    return s.programs[r].ops[g - base[r]];
  };
  auto describe_g = [&](std::size_t g) {
    const std::size_t r = static_cast<std::size_t>(rank_of[g]);
    return describe_op(rank_of[g], g - base[r], op_at(g));
  };
  auto complete = [&](std::size_t g) {
    done[g] = true;
    ++completed;
    for (std::size_t k = dep_begin[g]; k < dep_begin[g + 1]; ++k)
      if (--pending[dependents[k]] == 0) ready.push_back(dependents[k]);
  };

  while (head < ready.size()) {
    std::size_t g;
    if (shuffle_seed == 0) {
      g = ready[head++];
    } else {
      const std::size_t pick = static_cast<std::size_t>(rng.next() % ready.size());
      g = ready[pick];
      ready[pick] = ready.back();
      ready.pop_back();
    }
    const Op& op = op_at(g);
    const int rank = rank_of[g];
    // Start of the op's element range (only used by kSend/kRecv, whose ranges were checked).
    auto range_begin = [&]() {
      return res.buffers[static_cast<std::size_t>(rank)].begin() +
             static_cast<std::ptrdiff_t>(op.offset);
    };
    switch (op.kind) {
      case OpKind::kCompute:
      case OpKind::kDelay:
        complete(g);
        break;
      case OpKind::kNvlsReduce: {
        // The switch reads every rank's copy of the range as it is now and sums it.
        // (Its group's copies: the ranks of its domain.)
        const std::size_t first = static_cast<std::size_t>(nvls_group_first(s, rank));
        const std::size_t size = static_cast<std::size_t>(nvls_group_size(s));
        std::vector<double> sum(op.count, 0.0);
        for (std::size_t q = first; q < first + size; ++q)
          for (std::size_t k = 0; k < op.count; ++k)
            sum[k] += res.buffers[q][op.offset + k];
        std::copy(sum.begin(), sum.end(), range_begin());
        res.elements_moved += op.count * size;
        complete(g);
        break;
      }
      case OpKind::kNvlsStore: {
        const auto first = range_begin();
        const int group = nvls_group_first(s, rank);
        for (int q = group; q < group + nvls_group_size(s); ++q) {
          const MsgKey key{rank, q, op.tag};
          if (!sent.insert(key).second)
            fail(s, describe_g(g) + ": a message with this (sender, receiver, tag) was " +
                        "already sent");
          mailbox.emplace(key, std::vector<double>(
                                   first, first + static_cast<std::ptrdiff_t>(op.count)));
          const auto waiting = parked.find(key);
          if (waiting != parked.end()) {
            ready.push_back(waiting->second);
            parked.erase(waiting);
          }
        }
        ++res.messages;
        res.elements_moved += op.count;
        complete(g);
        break;
      }
      case OpKind::kSend: {
        const MsgKey key{rank, op.peer, op.tag};
        if (!sent.insert(key).second)
          fail(s, describe_g(g) + ": a message with this (sender, receiver, tag) was " +
                      "already sent");
        const auto first = range_begin();
        mailbox.emplace(key, std::vector<double>(
                                 first, first + static_cast<std::ptrdiff_t>(op.count)));
        ++res.messages;
        res.elements_moved += op.count;
        const auto waiting = parked.find(key);
        if (waiting != parked.end()) {
          ready.push_back(waiting->second);
          parked.erase(waiting);
        }
        complete(g);
        break;
      }
      case OpKind::kRecv: {
        const MsgKey key{op.peer, rank, op.tag};
        const auto msg = mailbox.find(key);
        if (msg == mailbox.end()) {
          const auto other = parked.find(key);
          if (other != parked.end())
            fail(s, describe_g(g) + " and " + describe_g(other->second) +
                        " wait for the same message");
          parked.emplace(key, g);
          break;
        }
        const std::vector<double>& data = msg->second;
        const auto first = range_begin();
        if (data.size() != op.count)
          fail(s, describe_g(g) + ": the matching message has " +
                      std::to_string(data.size()) + " elements");
        if (op.mode == RecvMode::kReduceSum) {
          for (std::size_t k = 0; k < data.size(); ++k)
            first[static_cast<std::ptrdiff_t>(k)] += data[k];
        } else {
          std::copy(data.begin(), data.end(), first);
        }
        mailbox.erase(msg);
        complete(g);
        break;
      }
    }
  }

  if (completed < total) {
    // Stuck: report the recvs waiting for a message first (usually the root cause),
    // then ops still waiting on deps.
    constexpr std::size_t kShow = 6;
    std::string what = "deadlock: " + std::to_string(total - completed) + " of " +
                       std::to_string(total) + " ops cannot run";
    std::vector<std::size_t> waiting;  // sorted so the message is deterministic
    for (const auto& kv : parked) waiting.push_back(kv.second);
    std::sort(waiting.begin(), waiting.end());
    std::size_t shown = 0;
    for (std::size_t g : waiting) {
      if (shown == kShow) break;
      ++shown;
      what += "; " + describe_g(g) +
              " waits for a message that was not sent (send missing, mistagged or blocked)";
    }
    for (std::size_t g = 0; g < total && shown < kShow; ++g) {
      if (done[g] || pending[g] == 0) continue;
      ++shown;
      const std::size_t r = static_cast<std::size_t>(rank_of[g]);
      std::string unmet;
      for (uint32_t d : op_at(g).deps)
        if (!done[base[r] + d]) {
          unmet = std::to_string(d);
          break;
        }
      what += "; " + describe_g(g) + " waits for dep op " + unmet;
    }
    fail(s, what);
  }
  if (!mailbox.empty()) {
    MsgKey k = mailbox.begin()->first;  // report the smallest key, deterministically
    for (const auto& kv : mailbox) k = std::min(k, kv.first);
    std::ostringstream os;
    os << mailbox.size() << " message(s) never received, e.g. sender " << std::get<0>(k)
       << " -> receiver " << std::get<1>(k) << " tag 0x" << std::hex << std::get<2>(k);
    fail(s, os.str());
  }
  return res;
}

}  // namespace fabricsim::coll
