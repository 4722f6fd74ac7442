// Switch features: policies plugged into the one switch frame (switch.h). The frame is
// the pipeline every switched fabric shares (ingress, routing, input queues, crossbar,
// egress queues); what makes one switch an NVSwitch with in-switch reduction, another a
// PCIe root complex, or later an Ethernet switch with a shared buffer, ECN marking, PFC
// or trimming, or an optical circuit switch, is a feature. A switch is built with its
// frame parameters plus its features (Switch's constructor), and the frame calls each
// feature only at the hooks it declared at attach, so a hook no feature uses costs the
// frame nothing but an empty-list test.
//
// Plugging in a new feature: derive from SwitchFeature, declare its hooks (claims(),
// hooks()), and declare a SwitchFeatureKind beside it (models/switch/switch_kind.h: its
// parameters, checks and factory), registered by one line in fabrics/plugins.cpp; a device
// kind built on the frame names it and builds it from the device type (a model test can
// hand one to the Switch constructor directly). The frame itself does not change.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/core/errors.h"
#include "models/core/ledger.h"
#include "models/core/packet.h"
#include "models/core/scheduler.h"

namespace fabricsim {

class Switch;

// The far end of one of a switch's ports, as the elaborator knows it.
struct SwitchPeer {
  int device = -1;    // device index in the system; -1: the port is not connected
  int endpoint = -1;  // endpoint id when the peer is an endpoint, else -1
  int port = -1;      // the peer's port number
};

// The narrow part of the frame a feature may use. Calls are direct (no virtual call);
// `now()` and alarms are the shared wake-up calendar's (models/core/scheduler.h).
class SwitchFrame {
 public:
  SwitchFrame() = default;
  explicit SwitchFrame(Switch& sw) : sw_(&sw) {}

  int ports() const;               // the switch's port count (bound or not)
  bool connected(int port) const;  // is `port` bound to a link?
  const std::string& display_name() const;
  static uint64_t now() { return Scheduler::now(); }
  // Wakes the feature's alarm `a` (one per feature resource: Alarm{feature, what}) at
  // absolute time t_ps; the calendar calls feature->wake(what) then.
  static void wake_at(Alarm& a, uint64_t t_ps) { Scheduler::instance().set(a, t_ps); }

  // Puts `p` at the back of egress queue `out` now, through the egress admission hooks;
  // it leaves at p.head_ps if the feature set that later than now (a pipeline latency of
  // its own: the port waits for it), else at once. A feature's packets may overshoot
  // egress_buffer; the crossbar keeps arbitrating other traffic.
  void emit(int out, Packet* p) const;
  // Frees the ingress buffer `p` holds on port `in` after `after_ps`: its credits go back
  // upstream (in arrival order per port, see Port::release_rx).
  void release_rx(int in, Packet* p, uint64_t after_ps = 0) const;
  // Payload bytes in egress queue `out`, not yet taken by its transmitter (all its
  // classes).
  uint64_t egress_bytes(int out) const;

  // Traffic classes (SwitchParams::traffic_classes; 0: one queue per port).
  int traffic_classes() const;
  // The egress queue of `out` that `p` enters (0 without classes; traffic_classes() for
  // the control queue) and its payload bytes now.
  int queue_of(const Packet& p) const;
  uint64_t queue_bytes(int out, int queue) const;
  // The rate of the link on `port` (bits/s), and the global seed (a feature's random
  // stream is Rng(seed(), display_name() + "." + its name)).
  uint64_t port_rate_bps(int port) const;
  uint64_t seed() const;
  // Pauses the transmitter of `port` for priority `prio` until `until_ps` (a PFC pause
  // frame received on it; until_ps = now resumes).
  void pause_port(int port, uint8_t prio, uint64_t until_ps) const;
  // The topology generator's coordinates of this switch (empty if it gave none).
  const std::vector<int>& coords() const;
  // The egress ports on a shortest path to endpoint `dst` (the frame's routing table).
  struct PortList {
    const int* first;
    const int* last;
    const int* begin() const { return first; }
    const int* end() const { return last; }
    size_t size() const { return size_t(last - first); }
    bool empty() const { return first == last; }
    int operator[](size_t i) const { return first[i]; }
  };
  PortList routes(uint32_t dst) const;
  // The egress queue's bound (SwitchParams::egress_buffer_bytes), payload bytes.
  uint64_t egress_buffer() const;

 private:
  Switch* sw_ = nullptr;
};

class SwitchFeature : public Wakeable {
 public:
  // Hooks other than ingress claims, as bits of hooks().
  enum Hook : unsigned {
    kAfterCrossbar = 1u << 0,
    kEgressAdmission = 1u << 1,
    kEgressDeparture = 1u << 2,
    kRoute = 1u << 3,
    kCrossbarGate = 1u << 4
  };
  enum class Admission { kAccept, kDrop };

  ~SwitchFeature() override = default;

  // Called once by the Switch constructor, in the order the features were given, before
  // the frame reads claims() and hooks(). `attached()` may size per-port state.
  void attach(const SwitchFrame& f) {
    frame_ = f;
    attached();
  }
  virtual void attached() {}
  virtual const char* name() const = 0;
  // Packet kinds this feature takes off the ingress pipeline instead of the crossbar
  // (read once, at attach; two features may not claim one kind).
  virtual std::vector<PacketKind> claims() const { return {}; }
  // The other hooks this feature uses (read once, at attach): a bit set of Hook.
  virtual unsigned hooks() const { return 0; }

  // Ingress claim: a packet of a claimed kind has arrived on port `in` (after the ingress
  // pipeline, at its head). The feature owns it from now on: it returns its ingress
  // credits (frame().release_rx) and either emits it or releases it to the PacketPool.
  virtual void arrive(int in, Packet* p) {
    (void)in, (void)p;
    throw InternalError(frame_.display_name() + ": " + name() + " claims no packets");
  }

  // After the crossbar (kAfterCrossbar): the crossbar started moving `p` from `in` to
  // `out` at `t_ps`; p.head_ps/p.tail_ps are when its first/last packet has crossed.
  // Returns the earliest time `p` may leave on `out`; the frame then sends it whole
  // (store and forward) at max(p.tail_ps, that time). The crossbar itself is free at its
  // own time: the egress queue, bounded by egress_buffer, holds `p` meanwhile. Features
  // on this hook are asked in attach order, each seeing the previous one's time.
  virtual uint64_t ready_ps(int in, int out, const Packet& p, uint64_t t_ps) {
    (void)in, (void)out, (void)t_ps;
    return p.tail_ps;
  }

  // Egress admission (kEgressAdmission): `p` is entering egress queue `out` (from the
  // crossbar, its ingress credits already on their way back; or from a feature's emit).
  // frame().egress_bytes(out) is the queue before it. The feature may rewrite `p`'s
  // header fields or shrink its payload (trimming; the frame accounts the bytes after
  // the hook), or return kDrop: the frame releases `p` to the PacketPool. Payload it
  // trims or drops counts in its payload_absorbed(). Default: accept.
  virtual Admission admit(int out, Packet& p) {
    (void)out, (void)p;
    return Admission::kAccept;
  }

  // Routing (kRoute; one feature at most): the egress port for `p`, which arrived on `in`
  // (its head is here), or -1 for the frame's own choice among the routes to p.dst. The
  // feature may rewrite header fields (a Valiant intermediate destination).
  virtual int route(int in, Packet& p) {
    (void)in, (void)p;
    return -1;
  }

  // Crossbar gate (kCrossbarGate; the crossbar frame, one feature at most): may `p`, at
  // the head of input `in`'s queue for `out`, cross now? Asked for every such head at each
  // arbitration while `out` is free and its egress queue below egress_buffer; a refused
  // head waits (for egress space: the frame arbitrates again whenever a transmitter
  // takes from an egress queue). Flow control beyond the frame's own (bubble flow control
  // on a torus ring). Default: yes.
  virtual bool may_cross(int in, int out, const Packet& p) {
    (void)in, (void)out, (void)p;
    return true;
  }

  // Egress departure (kEgressDeparture): the transmitter of `out` has taken `p` from its
  // egress queue and starts sending it now (frame().queue_bytes() no longer counts it).
  // The feature may still rewrite header fields (an ECN mark on dequeue).
  virtual void departed(int out, Packet& p) { (void)out, (void)p; }

  // Elaboration, once links are bound: peers[port] is the far end of each of the
  // switch's ports (device -1 where unconnected).
  virtual void peers_known(const std::vector<SwitchPeer>& peers) { (void)peers; }
  // Does `port` offer in-network collectives (group reductions and multicast)? Asked by
  // the elaborator after peers_known(), to tell endpoints where to send group traffic.
  virtual bool offers_collectives(int port) const {
    (void)port;
    return false;
  }

  // Statistics: adds this feature's keys to the switch's stats JSON.
  virtual void add_stats(nlohmann::json& j, uint64_t now_ps) const { (void)j, (void)now_ps; }
  // Payload accounting for the end-of-run conservation check: bytes the feature took out
  // of the fabric (reduced, replicated, dropped) and bytes it put in (results, replicas):
  // endpoints' sent + emitted == endpoints' received + absorbed.
  virtual uint64_t payload_absorbed() const { return 0; }
  virtual uint64_t payload_emitted() const { return 0; }
  // Packets it dropped and trimmed, by reason, for the end-of-run ledger (ledger.h).
  virtual void add_losses(PacketLedger& l) const { (void)l; }

  // Independent measurements (DeviceModel::reset_dynamic_state): the switch is idle (no
  // packet in it or on its links); the feature returns its dynamic state (random streams,
  // round-robin turns, flow-control state, its pending alarms) to what it was at attach,
  // keeping its statistics and ledger counts. Default: nothing to reset.
  virtual void reset_dynamic_state() {}

  // Alarms set with frame().wake_at(Alarm{this, what}, t) arrive here.
  void wake(uint32_t what) override {
    (void)what;
    throw InternalError(frame_.display_name() + ": " + name() + " has no alarms");
  }

 protected:
  const SwitchFrame& frame() const { return frame_; }

 private:
  SwitchFrame frame_;
};

}  // namespace fabricsim
