// The algorithm registry: the built-in families in registration order, look-up by name,
// and the entry points of algorithms.h that dispatch through an entry (make_schedule,
// alpha_beta_time_s) or depend on the collective only (buffer_elems, busbw_factor).
#include <algorithm>
#include <string>
#include <vector>

#include "models/collectives/algorithms/common.h"
#include "models/core/errors.h"

namespace fabricsim::coll {

namespace {

// nccl-tests names of the collectives, in Collective order.
const char* collective_name(Collective c) {
  switch (c) {
    case Collective::kAllReduce:
      return "all_reduce";
    case Collective::kReduceScatter:
      return "reduce_scatter";
    case Collective::kAllGather:
      return "all_gather";
    case Collective::kBroadcast:
      return "broadcast";
    case Collective::kReduce:
      return "reduce";
    case Collective::kAllToAll:
      return "alltoall";
    case Collective::kSendRecv:
      return "sendrecv";
  }
  throw InternalError("collective_name: unknown collective");
}

AlgorithmRegistry built_in_algorithms() {
  AlgorithmRegistry r;
  // One line per family (its file in algorithms/). Within a collective, registration
  // order is table order: the first is the default, and `auto` tries candidates, and
  // error messages list names, in this order.
  detail::register_ring(r);
  detail::register_tree(r);
  detail::register_halving_doubling(r);
  detail::register_direct(r);
  detail::register_hierarchical(r);
  detail::register_in_switch(r);
  detail::register_alltoall(r);
  detail::register_torus(r);
  return r;
}

// "all_reduce, reduce_scatter, ..." in table order, for error messages.
std::string known_collectives() {
  std::vector<std::string> names;
  for (const AlgoInfo& a : algorithm_table())
    if (std::find(names.begin(), names.end(), a.collective_name) == names.end())
      names.push_back(a.collective_name);
  std::string out;
  for (const std::string& s : names) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// The entry for (collective, algorithm), or nullptr.
const AlgoInfo* find_entry(const std::string& collective, const std::string& algorithm) {
  for (const AlgoInfo& a : algorithm_table())
    if (collective == a.collective_name && algorithm == a.name) return &a;
  return nullptr;
}

}  // namespace

AlgoInfo algo_entry(Collective collective, const char* name, unsigned traits, const char* cost,
                    ScheduleFn schedule, AlphaBetaFn alpha_beta, CheckFn check) {
  AlgoInfo a;
  a.collective = collective;
  a.collective_name = collective_name(collective);
  a.name = name;
  a.pipelined = (traits & kPipelined) != 0;
  a.rooted = (traits & kRooted) != 0;
  a.in_switch = (traits & kInSwitch) != 0;
  a.levels = (traits & kLevels) != 0;
  a.nccl = (traits & kNccl) != 0;
  a.torus = (traits & kTorus) != 0;
  a.cost = cost;
  a.schedule = schedule;
  a.alpha_beta = alpha_beta;
  a.check = check;
  return a;
}

const AlgoInfo& AlgorithmRegistry::add(const AlgoInfo& entry) {
  const std::string what =
      std::string("AlgorithmRegistry::add: ") + collective_name(entry.collective) + "/" +
      (entry.name != nullptr ? entry.name : "(null)");
  if (entry.name == nullptr || *entry.name == '\0') throw InternalError(what + ": no name");
  if (entry.cost == nullptr || !entry.schedule || !entry.alpha_beta || !entry.check)
    throw InternalError(what + ": cost, schedule, alpha_beta and check are all required");
  AlgoInfo a = entry;
  a.collective_name = collective_name(a.collective);
  // After the last entry of the same or an earlier collective: grouped by collective in
  // Collective order, registration order within one.
  auto pos = entries_.end();
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->collective == a.collective && std::string(it->name) == a.name)
      throw InternalError(what + ": already registered");
    if (it->collective > a.collective && pos == entries_.end()) pos = it;
  }
  return *entries_.insert(pos, a);
}

void AlgorithmRegistry::remove(const std::string& collective, const std::string& algorithm) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it)
    if (collective == it->collective_name && algorithm == it->name) {
      entries_.erase(it);
      return;
    }
  throw InternalError("AlgorithmRegistry::remove: " + collective + "/" + algorithm +
                      " is not registered");
}

AlgorithmRegistry& algorithm_registry() {
  static AlgorithmRegistry registry = built_in_algorithms();
  return registry;
}

const AlgorithmTable& algorithm_table() { return algorithm_registry().entries(); }

std::vector<std::string> algorithms_for(const std::string& collective) {
  std::vector<std::string> out;
  for (const AlgoInfo& a : algorithm_table())
    if (collective == a.collective_name) out.push_back(a.name);
  if (out.empty())
    throw InternalError("algorithms_for: unknown collective '" + collective +
                        "' (known: " + known_collectives() + ")");
  return out;
}

std::vector<std::string> flat_algorithms_for(const std::string& collective) {
  std::vector<std::string> out;
  for (const std::string& name : algorithms_for(collective)) {  // throws if unknown
    const AlgoInfo& a = algo_info(collective, name);
    if (!a.levels && !a.in_switch) out.push_back(name);
  }
  return out;
}

bool has_levels(const std::string& collective, const std::string& algorithm) {
  const AlgoInfo* a = find_entry(collective, algorithm);
  return a != nullptr && a->levels;
}

bool uses_nvls_switches(const std::string& algorithm) {
  for (const AlgoInfo& a : algorithm_table())
    if (algorithm == a.name && a.in_switch) return true;
  return false;
}

const AlgoInfo& algo_info(const std::string& collective, const std::string& algorithm) {
  const std::vector<std::string> names = algorithms_for(collective);  // throws if unknown
  if (const AlgoInfo* a = find_entry(collective, algorithm)) return *a;
  std::string known;
  for (const std::string& s : names) known += (known.empty() ? "" : ", ") + s;
  throw InternalError("unknown algorithm '" + algorithm + "' for collective '" + collective +
                      "' (known: " + known + ")");
}

uint64_t buffer_elems(Collective c, int ranks, uint64_t count) {
  if (ranks < 1)
    throw InternalError("buffer_elems: ranks must be >= 1 (got " + std::to_string(ranks) + ")");
  const uint64_t n = static_cast<uint64_t>(ranks);
  switch (c) {
    case Collective::kAllToAll:
      return count + n * detail::ceil_div(count, n);
    case Collective::kSendRecv:
      return 2 * count;
    default:
      return count;
  }
}

double busbw_factor(Collective c, int n) {
  if (n < 1) throw InternalError("busbw_factor: n must be >= 1 (got " + std::to_string(n) + ")");
  const double dn = static_cast<double>(n);
  switch (c) {
    case Collective::kAllReduce:
      return 2.0 * (dn - 1.0) / dn;
    case Collective::kReduceScatter:
    case Collective::kAllGather:
    case Collective::kAllToAll:
      return (dn - 1.0) / dn;
    case Collective::kBroadcast:
    case Collective::kReduce:
    case Collective::kSendRecv:
      return 1.0;
  }
  throw InternalError("busbw_factor: unknown collective");
}

double busbw_factor(const AlgoInfo& a, int n) { return busbw_factor(a.collective, n); }

double alpha_beta_time_s(const AlgoInfo& a, int n, double bytes, double alpha_s,
                         double beta_s_per_byte, int domain_size) {
  if (n < 1)
    throw InternalError("alpha_beta_time_s: n must be >= 1 (got " + std::to_string(n) + ")");
  if (!(bytes >= 0) || !(alpha_s >= 0) || !(beta_s_per_byte >= 0))
    throw InternalError("alpha_beta_time_s: bytes, alpha and beta must be >= 0");
  if (n == 1) return 0.0;
  return a.alpha_beta(n, bytes, alpha_s, beta_s_per_byte, domain_size);
}

Schedule make_schedule(const std::string& collective, const std::string& algorithm,
                       const CollParams& p, int domain_size) {
  const AlgoInfo& a = algo_info(collective, algorithm);
  a.check(p, domain_size);
  if (!a.levels && p.slices != 1)
    throw InternalError("make_schedule: slices " + std::to_string(p.slices) + " for " +
                        collective + " " + algorithm +
                        ", which has no levels to pipeline (slices must be 1)");
  return a.schedule(p, domain_size);
}

}  // namespace fabricsim::coll
