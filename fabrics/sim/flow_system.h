// The flow level (simulation.fidelity: flow): the same graph, routes, collective schedules,
// compute and overlap as the packet level, with every message a flow whose rate is the
// max-min fair share of the links it crosses (models/flow/flow_net.h), recomputed on
// every flow start and finish for the flows that share links with it.
//
//  * No model per device or port: one FlowNet resource per link direction (capacity =
//    the link type's rate in wire bytes), one sc_module for the whole fabric (its
//    wake-ups: flow completions and deliveries), a RankIo per rank for the engine.
//  * Paths on demand: for a (source, destination) pair the shortest paths through
//    forwarding devices (as topo::compute_routes) are found by a breadth-first search
//    from the destination that stops at the source's distance, and cached per pair; the
//    flow is split equally over a device's equal-cost ports at every hop (the packet
//    level's striping and adaptive routing, in the fluid limit). No routes[device][endpoint]
//    table: memory O(devices + links + pairs used + flows in flight).
//  * Framing: a flow of B payload bytes puts wire(B)/B wire bytes on each link (every
//    packet framed as on the link: Framing::packet_wire_bytes).
//  * Latency: after its last byte has left, a message is delivered after the sum over
//    its hops of link latency + the receiver's pipeline_latency, plus one packet's
//    serialisation per hop after the first (cut-through at packet granularity).
//  * The DMA: a rank's data messages over the same first-hop ports are served oldest
//    first, at most simulation.flow_window of them moving at once (the endpoint's DMA
//    serves one message at a time, but the switches' buffers let it start the next while
//    the last drains towards a busy receiver); control messages (acks, flags of the
//    fence_flag protocol) take latency + their packets' serialisation and share no
//    bandwidth.
//  * Folding (simulation.flow_fold): when the topology is invariant under shifting the
//    nodes by t (a device map checked link by link) and so is the schedule (rank m = t x
//    ranks per node checked against rank 0), only ranks [0, m) run; each of their flows
//    stands for its n/m images, and a link class (an orbit of links under the shift)
//    carries (images crossing one link of it) x its rate. Max-min fairness is invariant
//    under the fabric's symmetries, so the folded run gives the same times as the whole.
#pragma once
#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <systemc>

#include "fabrics/systems/system_spec.h"
#include "models/collectives/engine.h"
#include "models/collectives/rank_io.h"
#include "models/core/scheduler.h"
#include "models/flow/flow_net.h"

namespace fabricsim {

class FlowSystem;

// One rank as the engine sees it. Folded runs have inert ranks (their programs are empty)
// whose only use is their id, the engine's name for a message's source.
class FlowRank final : public RankIo {
 public:
  FlowRank(FlowSystem* sys, uint32_t rank, const EndpointParams* params)
      : sys_(sys), rank_(rank), params_(params), memory_Bps_(params->memory_bandwidth_Bps) {}
  uint32_t id() const override { return rank_; }
  // `not_before`: the message is delivered no earlier than that plus its path's latency
  // (its `sent` still fires when its flow finishes); `packet_cap`: its wire bytes per
  // payload byte and its serialisation are those of packets of at most that payload.
  uint64_t send(uint32_t dst, uint64_t bytes, uint64_t tag, PacketKind kind = PacketKind::kData,
                uint8_t vc = 0, uint64_t not_before = 0, uint32_t packet_cap = 0) override;
  const EndpointParams& params() const override { return *params_; }
  bool via_nic(uint32_t dst) const override;
  uint64_t send_group(PacketKind kind, uint64_t bytes, uint64_t tag) override;
  // On (the engine's protocol model: thread blocks store at once, as Endpoint's round
  // robin): every data message moves as soon as it is sent, none waits for
  // simulation.flow_window.
  void set_interleave(bool on) override { interleave_ = on; }
  uint64_t reduce(uint64_t bytes) override;
  void on_delivery(DeliveryFn fn) override { on_delivery_ = std::move(fn); }
  void on_sent(SentFn fn) override { on_sent_ = std::move(fn); }

 private:
  friend class FlowSystem;
  struct Queue {
    uint64_t signature;
    std::deque<uint32_t> waiting;  // message slots not yet moving, oldest first
    uint32_t active = 0;           // messages moving
  };
  FlowSystem* sys_;
  uint32_t rank_;
  const EndpointParams* params_;
  uint64_t memory_Bps_;
  uint64_t reduce_busy_ps_ = 0;
  bool interleave_ = false;
  std::vector<Queue> queues_;
  DeliveryFn on_delivery_;
  SentFn on_sent_;
};

class FlowSystem : public sc_core::sc_module, public Wakeable {
 public:
  FlowSystem(sc_core::sc_module_name n, const SystemSpec& spec);
  ~FlowSystem() override;

  CollectiveEngine& engine() { return *engine_; }
  // Ranks the engine runs programs on (== ranks unless folded).
  int active_ranks() const { return m_; }
  int fold_nodes() const { return fold_t_; }   // t: nodes per period (0: not folded)
  // Checks that `s` (programs for at least ranks [0, m], see fold_schedule) is invariant
  // under the fold's rank shift; drops the programs of ranks >= m. Throws InputError with
  // what differs otherwise.
  void fold_schedule(coll::Schedule& s) const;
  // Summary numbers of the run.
  uint64_t flows_started() const { return net_.flows_started(); }
  uint64_t flows_recomputed() const { return net_.recomputed_flows(); }
  uint64_t messages() const { return messages_; }
  uint64_t control_messages() const { return control_; }
  uint64_t paths_computed() const { return paths_.size(); }
  uint64_t messages_in_flight() const { return live_msgs_; }
  // When every rank's reduction engine is idle (ps); nothing else of a rank outlives its
  // messages.
  uint64_t idle_at() const {
    uint64_t t = 0;
    for (const auto& r : ranks_) t = std::max(t, r->reduce_busy_ps_);
    return t;
  }
  size_t link_classes() const { return net_.resources(); }
  // Payload bytes sent and delivered (equal at the end), as the whole fabric (images included).
  double payload_sent() const { return sent_bytes_; }
  double payload_delivered() const { return delivered_bytes_; }
  nlohmann::json stats_json() const;

 private:
  friend class FlowRank;
  struct Path {
    std::vector<FlowNet::Use> uses;   // weight here = fraction x images / orbit (no framing)
    std::vector<uint16_t> use_link;   // link type index of each use
    uint64_t fixed_ps = 0;            // sum of link latency + receiver pipeline
    std::vector<uint16_t> hops;       // link type index per hop of the latency path
    uint64_t signature = 0;           // first-hop ports
    int first_port_max = -1;          // the highest first-hop port (NIC ports come last)
  };
  struct Msg {
    uint32_t src, dst_rank;  // sending rank; receiving rank (folded)
    uint32_t from;           // the source the receiver sees (folded)
    PacketKind kind;
    uint64_t bytes, tag, id;
    uint64_t not_before;     // ps, 0: none (RankIo::send)
    uint32_t packet_cap;     // bytes, 0: none (RankIo::send)
    const Path* path;
    uint32_t queue;
  };
  struct Delivery {
    uint64_t at_ps, seq;
    uint32_t msg;
    bool operator>(const Delivery& o) const {
      return at_ps != o.at_ps ? at_ps > o.at_ps : seq > o.seq;
    }
  };
  void wake(uint32_t) override;
  void poke();  // run settle/finish/deliveries at the current time
  const Path& path(uint32_t src_rank, uint32_t dst_rank);
  uint64_t send(FlowRank& r, uint32_t dst, uint64_t bytes, uint64_t tag, PacketKind kind,
                uint64_t not_before, uint32_t packet_cap);
  void start_flow(uint32_t slot);
  void deliver_at(uint32_t slot, uint64_t at_ps);
  uint64_t serialisation_ps(const Path& p, uint64_t bytes, bool first_hop, uint32_t cap) const;
  double wire_ratio(uint16_t link, uint64_t bytes, uint32_t cap) const;
  void plan_fold();

  const SystemSpec& spec_;
  const topo::Graph& g_;
  int n_ = 0, m_ = 0, fold_t_ = 0, L_ = 0;
  FlowNet net_;
  Alarm alarm_;
  std::vector<const LinkParams*> link_types_;   // by index
  std::vector<uint16_t> link_type_of_;          // per graph link
  std::vector<uint32_t> port_base_;             // per device: index of its port 0 in port_link_
  std::vector<int32_t> port_link_;              // (device, port) -> 2 * link + dir, -1 unbound
  std::vector<uint64_t> rx_ps_;                 // per device: pipeline latency of arrivals
  std::vector<int32_t> res_class_;              // directed link -> FlowNet resource (-1: none yet)
  std::vector<uint32_t> class_of_;              // directed link -> orbit representative
  std::vector<uint32_t> orbit_size_;            // per representative
  std::vector<std::unique_ptr<FlowRank>> ranks_;
  std::unique_ptr<CollectiveEngine> engine_;
  std::unordered_map<uint64_t, Path> paths_;
  std::vector<Msg> msgs_;
  std::vector<uint32_t> free_msgs_;
  std::vector<Delivery> deliveries_;  // min-heap
  std::vector<uint64_t> done_;        // scratch
  // Scratch of path(): the shortest-path search (shared with the cost model) and the
  // share of the flow at each device.
  topo::PathSearch search_;
  std::vector<double> frac_;
  uint64_t next_msg_ = 0, dseq_ = 0, messages_ = 0, control_ = 0, live_msgs_ = 0;
  double sent_bytes_ = 0, delivered_bytes_ = 0;
  bool in_wake_ = false;
  uint32_t dma_window_ = 1;
};

}  // namespace fabricsim
