// The switch frame shared by every switched fabric (NVSwitch first; UALink and Ethernet
// switches plug into the same frame). Pipeline, in order:
//   ingress port (credits to upstream, pipeline latency added to arrival)
//   -> [ingress claims: packet kinds a feature takes instead of the crossbar]
//   -> routing lookup (equal-cost set; adaptive or hash selection)
//   -> input queue: virtual output queues, or one FIFO per input (head-of-line blocking)
//   -> crossbar: an arbiter matches free inputs to free outputs; a transfer takes
//      wire bytes / (output rate x speedup); upstream credits return when its tail has
//      crossed
//   -> [after the crossbar: features that hold a transaction until it may leave, e.g.
//      a root complex's host path, models/pcie/root_complex.h: up, host memory, down]
//   -> [egress admission: features that see every transaction entering an egress queue]
//   -> egress queue (bounded, bytes) -> egress port (serialiser, downstream credits).
// The output-queued frame (output_queued.h: input_queues "output", the Ethernet switch)
// derives from this one: no input queues or crossbar, egress queues per traffic class,
// and an egress-departure hook.
// The crossbar is event driven: it runs when work arrives or a transfer ends, never on a
// free-running clock. With equal-size packets it is exactly a slotted crossbar.
//
// Features (feature.h) are the bracketed steps: policies the switch is built with, each
// called only at the hooks it declared. Packets no feature claims cost one table look-up
// at ingress; hooks no feature uses cost an empty-list test.
#pragma once
#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "models/core/device_model.h"
#include "models/core/fifo.h"
#include "models/core/packet_queue.h"
#include "models/link/port.h"
#include "models/core/stats.h"
#include "models/switch/arbiter.h"
#include "models/switch/feature.h"
#include "models/switch/switch_params.h"

namespace fabricsim {

class Switch : public sc_core::sc_module, public PortOwner, public Wakeable, public DeviceModel {
 public:
  using Features = std::vector<std::unique_ptr<SwitchFeature>>;
  // `used_ports`: indices that will be bound; the others exist but are unconnected.
  // `features` are attached in order (SwitchFeature::attach).
  Switch(sc_core::sc_module_name n, std::string display_name, const SwitchParams& p,
         const std::vector<int>& used_ports, Features features = {});

  Port& port(int i) override { return *ports_.at(i); }
  const std::string& display_name() const override { return display_name_; }
  // routes[dst endpoint id] = egress ports on a shortest path to it. Set again after a
  // fault: queued traffic for a failed port moves to the new routes (switch_faults.cpp).
  void set_routes(const std::vector<std::vector<int>>& routes) override;
  // Elaboration, once links are bound: the features learn every port's far end
  // (set_peers) and answer whether a port offers in-network collectives.
  void connected(const std::vector<Peer>& peers) override;
  bool in_network_collectives(int port) const override { return offers_collectives(port); }
  uint64_t payload_sourced() const override { return payload_emitted(); }
  uint64_t payload_sunk() const override { return payload_absorbed(); }
  void add_to_ledger(PacketLedger& l) const override {
    for (const std::unique_ptr<SwitchFeature>& f : features_) f->add_losses(l);
  }
  // Elaboration, once links are bound: peers[port] is the far end of every port; the
  // features learn it (SwitchFeature::peers_known).
  void set_peers(const std::vector<SwitchPeer>& peers);
  // Does `port` offer in-network collectives? (Asked after set_peers; its features answer.)
  bool offers_collectives(int port) const;
  // Payload bytes the features absorbed and emitted, summed: endpoints' sent + emitted
  // == endpoints' received + absorbed.
  uint64_t payload_absorbed() const;
  uint64_t payload_emitted() const;
  nlohmann::json stats_json(uint64_t now_ps) const override;
  // Between independent measurements: every port idle; then fresh arbiter pointers and
  // adaptive-routing rotations, and the ports' credits and remainders restored.
  uint64_t idle_at() const override;
  void reset_dynamic_state() override;

  Packet* tx_peek(int port) override;
  // The egress queue's first transaction if it is a packet of one that goes_between (a
  // control packet, or the last packet of a message): it may go between the packets of the transaction on the wire
  // (after those queued before it).
  Packet* tx_peek_between(int port, uint32_t* skip) override;
  void tx_pop(int port, Packet* p) override;
  void rx_arrive(int port, Packet* p) override;
  void wake(uint32_t what) override;

  // Faults (switch_faults.cpp).
  void tx_recover(int port, Packet* p) override;
  void fail(LossHandler& loss) override;
  void recover() override { failed_ = false; }
  uint64_t stranded() const override { return parked_in_.size() + parked_out_.size(); }

 protected:
  friend class SwitchFrame;
  // What SwitchFrame reports of the egress queues: one queue per port here; the
  // output-queued frame has one per traffic class plus a control queue.
  int traffic_classes() const { return ncls_; }  // valid from construction (features' attach)
  virtual int queue_of(const Packet&) const { return 0; }
  virtual uint64_t queue_bytes(int out, int queue) const {
    (void)queue;
    return egress_bytes_[out];
  }
  void end_of_elaboration() override;
  void xbar_method();
  void transfer(int in, int out, uint64_t t);
  uint64_t xbar_ps(int out, uint64_t bytes) const;
  int select_route(int in, const Packet& p);
  void enqueue(int in, Packet* p);
  // A control packet of one that arrives while its input or output is crossing a
  // transaction of several packets crosses between that transaction's packets, as per
  // packet (docs/architecture.md, "Control packets between a transaction's packets").
  bool cross_between(int in, Packet* p, uint64_t t);
  // Puts a transaction whose crossing ends at `end` into its egress queue (the rest of
  // transfer() and of cross_between()).
  void to_egress(int in, int out, Packet* p, uint64_t t, uint64_t end);
  enum : uint32_t { kXbar };
  // A feature's transaction into egress queue `out` (SwitchFrame::emit).
  virtual void emit(int out, Packet* p);
  bool admit(int out, Packet* p, bool routed);
  // Faults: puts a transaction that has crossed the crossbar into the egress queue of a
  // route to its destination, or parks it; moves traffic queued for failed ports (new
  // routes: the output-queued frame drops such traffic instead, when its port fails).
  void push_egress(int from, Packet* p);
  virtual void reroute();

  std::string display_name_;
  SwitchParams params_;
  int n_;
  std::vector<std::unique_ptr<Port>> ports_;
  // The routing table (set_routes), flat: the egress ports to endpoint d are the
  // route_span_[d].count ports from route_ports_[route_span_[d].first] (one array, not a
  // vector per destination whose header and data are two cache misses on a large fabric,
  // nor a second copy of the table as vectors: 260k of them on NVL576). Destinations with
  // the same list share one copy of it: a leaf switch of a two-tier fabric sends every
  // remote destination over the same uplinks, so NVL576's tables shrink from ~24 MiB of
  // mostly repeated uplink lists, which compete with the packets for the caches, to
  // ~1 MiB (docs/performance.md).
  struct RouteSpan {
    uint32_t first;
    uint32_t count;
  };
  std::vector<RouteSpan> route_span_;
  std::vector<int> route_ports_;
  SwitchFrame::PortList routes_to(uint32_t dst) const {
    FABRICSIM_ASSERT(size_t(dst) < route_span_.size(),
                     display_name_ + ": no route to endpoint " + std::to_string(dst));
    const RouteSpan s = route_span_[dst];
    return {route_ports_.data() + s.first, route_ports_.data() + s.first + s.count};
  }
  std::unique_ptr<Arbiter> arbiter_;
  bool voq_mode_;
  bool adaptive_;
  uint64_t hash_salt_ = 0;  // 0 unless salted_hash: XORed into the ECMP hash
  int ncls_ = 0;            // data traffic classes of the output-queued frame (0: none)
  std::vector<PacketQueue> voq_;   // [in * n + out] (voq mode)
  std::vector<PacketQueue> inq_;   // [in] (fifo mode)
  std::vector<PortSet> rows_, cols_;
  PortSet free_in_, free_out_;
  PortSet pending_in_;     // inputs with queued traffic
  PortSet requested_out_;  // outputs that queued traffic waits for
  std::vector<int> match_;
  std::vector<int> matched_in_;  // one arbitration's matched inputs, in input order
  void transfer_matched(uint64_t t);
  // Routed arrivals not yet in their input queues, in arrival order: rx_arrive routes a
  // transaction and prefetches its queue; the crossbar's wake-up, which every arrival
  // sets for the same instant, queues them all first (flush_arrivals). Only the crossbar
  // and the fault handlers read the queues, and they flush first: the queues they see are
  // those of an immediate enqueue. On a large fabric a switch takes tens of arrivals per
  // instant, each to a cold queue (NVL576: 37 MB of VOQ heads); their misses now overlap.
  struct Arrival {
    int in;
    int out;  // p->route_port, here so that finding the queue reads no packet
    Packet* p;
  };
  std::vector<Arrival> arrived_;
  void flush_arrivals();
  std::vector<uint64_t> in_busy_, out_busy_, xbar_rate_bps_;
  // A crossing of several packets that holds an input or output (cold: written only for
  // such crossings and read only by cross_between): it started at `start`, one packet
  // crosses in `step`, and it holds the side until `end` (== in_busy_/out_busy_ while this
  // crossing, and the control packets between its packets, hold it).
  struct Hold {
    uint64_t start = 0, step = 0, end = UINT64_MAX;
  };
  std::vector<Hold> in_hold_, out_hold_;
  // Control packets may cross between a transaction's packets: a plain crossbar (no gate,
  // no feature after it or at the egress admission).
  bool between_ok_ = false;
  std::vector<uint64_t> xbar_ps_per_byte_;  // 8e12 / xbar_rate_bps_ when exact, else 0
  // ports_[i]->link().framing, here: the port's link parameters are in its cold part, a
  // likely cache miss per crossbar transfer on a large fabric.
  std::vector<const Framing*> in_framing_;
  // Egress queues, linked through the packets as the VOQs (a packet is in one at a time):
  // the transmitter's tx_peek reads the 16-byte queue and the head packet it reads anyway,
  // not a 40-byte Fifo header and then a separate ring-buffer line. Each shares its line
  // with the port's egress level (the statistic of egress_bytes_ over time), which every
  // push and pop sets: in the port it was a line of its own, one more line per switch hop
  // (NVL576 all-to-all: 1.6% fewer modelled last-level misses, 2.8% fewer L1 misses with
  // it here; docs/performance.md). The output-queued frame keeps its queues elsewhere and
  // uses only `level` here.
  struct alignas(64) Egress {
    PacketQueue q;
    LevelStat level;  // the port's queue_stat (Port::keep_level_at)
  };
  static_assert(sizeof(PacketQueue) + sizeof(LevelStat) == 64, "Egress: one cache line");
  std::vector<Egress> egress_;
  std::vector<uint64_t> egress_bytes_;  // dense, for the crossbar's scan of the outputs
  // The egress level of `o` is now egress_bytes_[o] (after every change of it).
  void set_level(int o, uint64_t t) {
    LevelStat& l = egress_[size_t(o)].level;
    if (__builtin_expect(level_probes_ != 0, 0))
      set_observed(l, level_probe_[size_t(o)], t, egress_bytes_[size_t(o)]);
    else
      l.set(t, egress_bytes_[size_t(o)]);
  }
  void level_probe(int port, LevelProbe* probe) override;
  std::vector<LevelProbe*> level_probe_;  // [port]: the observer of its egress level
  size_t level_probes_ = 0;               // how many of them are set
  std::vector<uint64_t> out_load_;    // payload bytes routed to an output, not yet sent
  std::vector<uint32_t> rr_;          // per input: tie-break rotation for adaptive routing
  std::vector<uint64_t> rx_freed_;    // per input: when its last transaction's buffer frees
  uint64_t pending_ = 0;              // transactions in input queues
  uint64_t transfers_ = 0, arbitrations_ = 0;
  uint64_t crossed_between_ = 0;  // control packets that crossed between (cross_between)
  Alarm xbar_alarm_;

  // Faults (cold): traffic with no route to its destination, waiting for one: still in
  // its ingress buffer (holding its credits) or already past the crossbar.
  struct Parked {
    int in;
    Packet* p;
  };
  std::vector<Parked> parked_in_;
  std::vector<Packet*> parked_out_;
  bool failed_ = false;

  Features features_;
  std::array<SwitchFeature*, kPacketKinds> claim_{};  // [kind] -> the feature that takes it
  std::vector<SwitchFeature*> after_xbar_;            // features with kAfterCrossbar
  std::vector<SwitchFeature*> admission_;             // features with kEgressAdmission
  std::vector<SwitchFeature*> departure_;             // with kEgressDeparture (output-queued)
  SwitchFeature* router_ = nullptr;                   // with kRoute
  SwitchFeature* gate_ = nullptr;                     // with kCrossbarGate
  std::vector<PortSet> gated_rows_, gated_cols_;      // requests the gate let through
};

}  // namespace fabricsim
