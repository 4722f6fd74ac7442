#include "models/flow/flow_net.h"

#include <algorithm>
#include <cmath>

#include "models/core/errors.h"

namespace fabricsim {

uint32_t FlowNet::add_resource(double capacity_per_ps) {
  FABRICSIM_ASSERT(capacity_per_ps > 0, "flow net: a resource needs a positive capacity");
  cap_.push_back(capacity_per_ps);
  on_.emplace_back();
  carried_.push_back(0);
  res_mark_.push_back(0);
  rem_.push_back(0);
  wsum_.push_back(0);
  res_ver_.push_back(0);
  return uint32_t(cap_.size() - 1);
}

uint32_t FlowNet::alloc_uses(uint32_t n) {
  if (n < free_uses_.size() && !free_uses_[n].empty()) {
    const uint32_t b = free_uses_[n].back();
    free_uses_[n].pop_back();
    return b;
  }
  const uint32_t b = uint32_t(uses_.size());
  uses_.resize(uses_.size() + n);
  return b;
}

void FlowNet::mark(uint32_t r) {
  if (res_mark_[r] & 1) return;
  res_mark_[r] |= 1;
  dirty_.push_back(r);
}

uint32_t FlowNet::start(uint64_t now_ps, double bytes, const std::vector<Use>& uses,
                        uint64_t cookie) {
  FABRICSIM_ASSERT(!uses.empty(), "flow net: a flow must cross a resource");
  uint32_t id;
  if (!free_flows_.empty()) {
    id = free_flows_.back();
    free_flows_.pop_back();
  } else {
    id = uint32_t(flows_.size());
    flows_.emplace_back();
    flow_mark_.push_back(0);
  }
  Flow& f = flows_[id];
  f.use_count = uint32_t(uses.size());
  f.use_begin = alloc_uses(f.use_count);
  for (uint32_t i = 0; i < f.use_count; ++i) {
    const Use& u = uses[i];
    FABRICSIM_ASSERT(u.resource < cap_.size() && u.weight > 0, "flow net: bad resource use");
    FlowUse& fu = uses_[f.use_begin + i];
    fu.resource = u.resource;
    fu.weight = u.weight;
    fu.pos = uint32_t(on_[u.resource].size());
    on_[u.resource].push_back(id);
    mark(u.resource);
  }
  f.remaining = bytes;
  f.rate = 0;
  f.since_ps = now_ps;
  f.cookie = cookie;
  f.seq = seq_++;
  ++f.version;
  f.live = true;
  ++live_;
  ++started_;
  return id;
}

void FlowNet::advance(Flow& f, uint64_t now_ps) {
  if (now_ps > f.since_ps && f.rate > 0) {
    const double moved = std::min(f.remaining, f.rate * double(now_ps - f.since_ps));
    f.remaining -= moved;
    for (uint32_t i = 0; i < f.use_count; ++i) {
      const FlowUse& u = uses_[f.use_begin + i];
      carried_[u.resource] += moved * u.weight;
    }
  }
  f.since_ps = now_ps;
}

void FlowNet::settle(uint64_t now_ps) {
  if (dirty_.empty()) return;
  // The component: every resource reachable from a marked one through shared flows.
  comp_res_.clear();
  comp_flows_.clear();
  for (uint32_t r : dirty_) {
    res_mark_[r] = 2;
    comp_res_.push_back(r);
  }
  dirty_.clear();
  for (size_t i = 0; i < comp_res_.size(); ++i) {
    const uint32_t r = comp_res_[i];
    for (uint32_t fid : on_[r]) {
      if (flow_mark_[fid]) continue;
      flow_mark_[fid] = 1;
      comp_flows_.push_back(fid);
      const Flow& f = flows_[fid];
      for (uint32_t k = 0; k < f.use_count; ++k) {
        const uint32_t r2 = uses_[f.use_begin + k].resource;
        if (res_mark_[r2] == 2) continue;
        res_mark_[r2] = 2;
        comp_res_.push_back(r2);
      }
    }
  }
  // Progressive filling with a lazy heap on each resource's fair share rem / wsum.
  for (uint32_t r : comp_res_) {
    rem_[r] = cap_[r];
    wsum_[r] = 0;
  }
  for (uint32_t fid : comp_flows_) {
    Flow& f = flows_[fid];
    advance(f, now_ps);
    for (uint32_t k = 0; k < f.use_count; ++k) wsum_[uses_[f.use_begin + k].resource] += uses_[f.use_begin + k].weight;
  }
  struct Key {
    double share;
    uint32_t r, ver;
    bool operator>(const Key& o) const { return share != o.share ? share > o.share : r > o.r; }
  };
  std::vector<Key> heap;
  heap.reserve(comp_res_.size());
  for (uint32_t r : comp_res_)
    if (wsum_[r] > 0) heap.push_back(Key{rem_[r] / wsum_[r], r, ++res_ver_[r]});
  std::make_heap(heap.begin(), heap.end(), std::greater<Key>());
  size_t frozen = 0;
  while (!heap.empty() && frozen < comp_flows_.size()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<Key>());
    const Key k = heap.back();
    heap.pop_back();
    if (k.ver != res_ver_[k.r] || wsum_[k.r] <= 0) continue;
    const double share = std::max(0.0, rem_[k.r] / wsum_[k.r]);
    for (uint32_t fid : on_[k.r]) {
      if (flow_mark_[fid] != 1) continue;  // already frozen
      flow_mark_[fid] = 2;
      ++frozen;
      Flow& f = flows_[fid];
      f.rate = share;
      for (uint32_t j = 0; j < f.use_count; ++j) {
        const FlowUse& u = uses_[f.use_begin + j];
        rem_[u.resource] -= u.weight * share;
        wsum_[u.resource] -= u.weight;
        if (u.resource == k.r) continue;
        if (wsum_[u.resource] > 1e-12) {
          heap.push_back(Key{std::max(0.0, rem_[u.resource]) / wsum_[u.resource], u.resource,
                             ++res_ver_[u.resource]});
          std::push_heap(heap.begin(), heap.end(), std::greater<Key>());
        } else {
          wsum_[u.resource] = 0;
          ++res_ver_[u.resource];
        }
      }
    }
    wsum_[k.r] = 0;
  }
  recomputed_ += comp_flows_.size();
  for (uint32_t fid : comp_flows_) {
    Flow& f = flows_[fid];
    if (flow_mark_[fid] == 1) {
      // Left unfrozen by rounding (its resources' weights summed to ~0): the least
      // capacity left on its resources.
      double r = -1;
      for (uint32_t j = 0; j < f.use_count; ++j) {
        const FlowUse& u = uses_[f.use_begin + j];
        const double x = std::max(rem_[u.resource], cap_[u.resource] * 1e-9) / u.weight;
        r = r < 0 ? x : std::min(r, x);
      }
      f.rate = r;
    }
    flow_mark_[fid] = 0;
    FABRICSIM_ASSERT(f.rate > 0, "flow net: a flow got no rate");
    ++f.version;
    const double t = std::ceil(f.remaining / f.rate);
    const uint64_t at = now_ps + (t > 0 ? uint64_t(t) : 0);
    due_.push(Due{at, f.seq, fid, f.version});
  }
  for (uint32_t r : comp_res_) res_mark_[r] = 0;
}

uint64_t FlowNet::next_finish() {
  while (!due_.empty()) {
    const Due& d = due_.top();
    const Flow& f = flows_[d.flow];
    if (f.live && f.version == d.version) return d.at_ps;
    due_.pop();
  }
  return UINT64_MAX;
}

void FlowNet::finish_due(uint64_t now_ps, std::vector<uint64_t>& done) {
  while (next_finish() <= now_ps) {
    const Due d = due_.top();
    due_.pop();
    Flow& f = flows_[d.flow];
    advance(f, now_ps);
    for (uint32_t i = 0; i < f.use_count; ++i) {
      const FlowUse& u = uses_[f.use_begin + i];
      std::vector<uint32_t>& lst = on_[u.resource];
      const uint32_t moved = lst.back();
      lst[u.pos] = moved;
      lst.pop_back();
      if (moved != d.flow) {
        Flow& m = flows_[moved];
        for (uint32_t j = 0; j < m.use_count; ++j)
          if (uses_[m.use_begin + j].resource == u.resource) {
            uses_[m.use_begin + j].pos = u.pos;
            break;
          }
      }
      mark(u.resource);
    }
    if (free_uses_.size() <= f.use_count) free_uses_.resize(f.use_count + 1);
    free_uses_[f.use_count].push_back(f.use_begin);
    f.live = false;
    ++f.version;
    --live_;
    free_flows_.push_back(d.flow);
    done.push_back(f.cookie);
  }
}

}  // namespace fabricsim
