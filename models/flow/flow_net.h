// The flow level's network: resources (one direction of a link each, a capacity in wire
// bytes per ps) and flows (a payload still to move and the resources it loads), whose rates
// are the weighted max-min fair allocation (progressive filling): every flow f gets rate
// x_f (payload bytes per ps) such that, on every resource r, sum_f w_fr x_f <= c_r, and no
// flow's rate can grow without lowering that of a flow whose rate is no larger. w_fr is
// the wire bytes f puts on r per payload byte: the fraction of f that crosses r (a flow
// spread over equal-cost paths crosses each with a fraction) times the link's framing
// overhead (wire bytes per payload byte) times, at a folded (symmetric) run, how many
// physical flows of f's orbit load each physical resource of r's orbit.
//
// Incremental: start() and finish() only mark the resources they touch; settle(now)
// recomputes the rates of the flows connected to a marked resource (through shared
// resources, transitively) and nothing else, so changes on one part of the fabric cost
// nothing elsewhere, and many starts at one instant cost one recomputation.
// Plain C++, no SystemC: the flow level's SystemC side (fabrics/sim/flow_system.h) calls it.
// Memory: O(resources + flows in flight x resources per flow).
#pragma once
#include <cstddef>
#include <cstdint>
#include <queue>
#include <vector>

namespace fabricsim {

class FlowNet {
 public:
  struct Use {
    uint32_t resource;
    double weight;  // wire bytes on the resource per payload byte of the flow (> 0)
  };

  // A resource of `capacity` wire bytes per ps; returns its index.
  uint32_t add_resource(double capacity_per_ps);
  size_t resources() const { return cap_.size(); }

  // Starts a flow of `bytes` payload bytes at `now_ps` over `uses` (its rate is 0 until the
  // next settle); `cookie` is handed back when it completes. Returns its id.
  uint32_t start(uint64_t now_ps, double bytes, const std::vector<Use>& uses, uint64_t cookie);
  // Recomputes the rates of the flows touched since the last settle (see above) and their
  // completion times. Call after the starts and finishes of one instant.
  void settle(uint64_t now_ps);
  bool dirty() const { return !dirty_.empty(); }
  // The earliest completion time of a flow (UINT64_MAX if none is moving).
  uint64_t next_finish();
  // Removes every flow that completes at or before now_ps (marking its resources) and
  // appends their cookies to `done` in completion order (ties: start order).
  void finish_due(uint64_t now_ps, std::vector<uint64_t>& done);

  size_t flows_in_flight() const { return live_; }
  uint64_t flows_started() const { return started_; }
  uint64_t recomputed_flows() const { return recomputed_; }  // flows re-rated, summed
  // Current rate of flow `id` (payload bytes per ps); for tests.
  double rate(uint32_t id) const { return flows_[id].rate; }
  // Payload bytes moved over resource r so far (as of the last settle), per weight unit.
  double carried(uint32_t r) const { return carried_[r]; }

 private:
  struct FlowUse {
    uint32_t resource;
    uint32_t pos;  // index of this flow in the resource's list
    double weight;
  };
  struct Flow {
    uint32_t use_begin = 0, use_count = 0;  // into uses_ (a slab per flow)
    double remaining = 0;                   // payload bytes still to move
    double rate = 0;                        // payload bytes per ps
    uint64_t since_ps = 0;                  // remaining is as of this time
    uint64_t cookie = 0, seq = 0;
    uint32_t version = 0;
    bool live = false;
  };
  struct Due {
    uint64_t at_ps, seq;
    uint32_t flow, version;
    bool operator>(const Due& o) const { return at_ps != o.at_ps ? at_ps > o.at_ps : seq > o.seq; }
  };
  void mark(uint32_t r);
  void advance(Flow& f, uint64_t now_ps);
  uint32_t alloc_uses(uint32_t n);

  std::vector<double> cap_;
  std::vector<std::vector<uint32_t>> on_;  // flows on each resource
  std::vector<double> carried_;
  std::vector<Flow> flows_;
  std::vector<uint32_t> free_flows_;
  std::vector<FlowUse> uses_;
  std::vector<std::vector<uint32_t>> free_uses_;  // by slab size: free slab starts
  std::priority_queue<Due, std::vector<Due>, std::greater<Due>> due_;
  std::vector<uint32_t> dirty_;
  std::vector<uint8_t> res_mark_, flow_mark_;
  // Scratch of settle().
  std::vector<double> rem_, wsum_;
  std::vector<uint32_t> res_ver_;
  std::vector<uint32_t> comp_res_, comp_flows_;
  size_t live_ = 0;
  uint64_t started_ = 0, seq_ = 0, recomputed_ = 0;
};

}  // namespace fabricsim
