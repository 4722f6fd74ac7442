// The fault manager: plays a config's FaultPlan (fabrics/systems/system_spec.h) on the
// elaborated system, through the seams every device kind shares (docs/architecture.md,
// "Faults"):
//   * a link goes down or up: Port::link_down/link_up on both of its ports, at the same
//     instant; a switch fails: its links go down, then DeviceModel::fail loses what it holds;
//   * detection_time after every change, routes are recomputed from the links known to be
//     down (System::install_routes -> DeviceModel::set_routes on every device), and the
//     transactions a still-failed link cut and kept for replay go back to their devices
//     (Port::recover_held -> PortOwner::tx_recover), which send them on the new routes;
//   * a lost transaction (LossHandler) is sent again by its source after retransmit_timeout
//     where the protocol retransmits end to end (infiniband), is a packet-ledger drop its
//     NIC transport recovers (ethernet), and is otherwise counted lost for good.
// It keeps the accounting per event (what each cut, replayed, rerouted, lost; how long the
// traffic on its links waited; the busbw ceiling with its links down) that explains a
// row's extra time, and explains a run the faults left unable to finish.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

#include "fabrics/systems/system_spec.h"
#include "models/core/fifo.h"
#include "models/core/ledger.h"
#include "models/core/scheduler.h"
#include "models/core/timer.h"
#include "models/link/port.h"
#include "models/optics/ocs_controller.h"

namespace fabricsim {

class System;

// A stretch of the workload a fault may fall into: a size of a sweep, a job.
struct FaultWindow {
  std::string label;  // "the 16MiB all_reduce", "job 3"
  uint64_t start_ps = 0, end_ps = 0;
};

class FaultManager : public sc_core::sc_module,
                     public Wakeable,
                     public LossHandler,
                     public OcsController {
 public:
  FaultManager(sc_core::sc_module_name n, System& sys, const SystemSpec& spec);

  // The workload has finished: later faults are not played (they would only move the
  // end of the run).
  void set_done(std::function<bool()> done) { done_ = std::move(done); }
  // Called when the workload finishes: links and switches still down come back up now
  // (with routes through them at once), so that what is still in flight (a transport's
  // last acknowledgements, retransmissions) drains; no later fault is played.
  void workload_done();
  // The busbw ceiling (GB/s) of the workload on the fabric without the links marked in
  // `down` (per graph link), for the reports; unset: not reported.
  void set_ceiling(std::function<double(const std::vector<char>& down)> f) {
    ceiling_ = std::move(f);
  }

  // The OCS controller (models/optics/ocs_controller.h): the config's circuit maps
  // (faults.circuit_maps), each switch's part played as an ocs_reconfigure.
  bool has_circuit_map(const std::string& map) const override;
  void request_circuit_map(const std::string& map, std::function<void()> ready) override;
  // A workload phase starts (JobRunner's hook): with an ocs_phase_map for `phase` the
  // switches take its map first and `go` runs once it is lit; otherwise `go` runs now.
  void phase_starts(const std::string& phase, std::function<void()> go);

  void lost(const Port& at, LossRecovery recovery, Packet* p, LossCause cause) override;
  // Packets the NIC transports sent that faults dropped, by cause, for the packet ledger.
  void add_to_ledger(PacketLedger& l) const;

  // Payload bytes of every transaction copy lost (retransmitted ones included): the
  // end-of-run balance is sent = delivered + absorbed + lost.
  uint64_t lost_payload() const { return lost_payload_; }
  uint64_t lost_for_good() const { return unrecovered_; }
  // Links down now (at the end of a run: never brought back up).
  bool links_down() const;
  // The links down now separate two ranks.
  bool cut_off() const;
  // results.json's "faults": the plan, every event's accounting, the totals. `windows`:
  // the rows or jobs, to name the one each event fell into.
  nlohmann::json json(const std::vector<FaultWindow>& windows) const;
  // The "# fault ..." lines printed under the table.
  std::vector<std::string> summary(const std::vector<FaultWindow>& windows) const;
  // Why the faults leave the workload unable to finish ("" if they do not explain it):
  // data lost for good, or ranks with no path, naming the events in effect. Starts with
  // the location of the event to blame ("file:line:col: faults.events[i]: ").
  std::string unfinished_reason() const;

 private:
  enum : uint32_t { kAction, kDetect, kReconfigured, kBypass };
  // What one event of the plan did (an event may be several actions: a flap).
  struct EventStats {
    uint64_t first_ps = UINT64_MAX;  // when its first action was played (MAX: never)
    int actions = 0;                 // of its actions, how many were played
    uint64_t cut = 0, cut_bytes = 0;  // transactions its links cut on the wire
    uint64_t replayed = 0;            // kept ones sent again on the link once up
    uint64_t rerouted = 0;            // kept ones handed back at detection
    uint64_t lost = 0, lost_bytes = 0;       // every copy lost (any recovery)
    uint64_t retransmitted = 0;              // of those, sent again end to end
    uint64_t transport_drops = 0;            // of those, packet-ledger drops (NICs recover)
    uint64_t lost_for_good = 0;
    uint64_t wait_ps = 0;        // its outages: down until routes avoid it or it is up
    uint64_t open_since = UINT64_MAX;  // an outage whose wait is still running
    double ceiling_GBps = -1;    // busbw ceiling with its links down (-1: not computed)
    uint64_t up_ps = UINT64_MAX;  // when its last link came back up (MAX: not yet)
    uint64_t crc_errors = 0, replays = 0, retry_ps = 0;  // ber_burst: during the burst
    bool in_burst = false;  // ber_burst: started, not ended (counters from the start:)
    uint64_t crc0 = 0, replays0 = 0, retry0 = 0;
    int ber_link = -1;
    // Data packets its links dropped for the NIC transports (ethernet), per flow (source,
    // destination endpoint): how many, the first and last drop times and the first and
    // last lost packets' send times at their NIC (docs/scaleout.md, "Failure").
    struct FlowLoss {
      uint64_t packets = 0;
      uint64_t first_ps = UINT64_MAX, last_ps = 0;
      uint64_t first_sent_ps = UINT64_MAX, last_sent_ps = 0;
    };
    std::map<std::pair<uint32_t, uint32_t>, FlowLoss> flow_losses;
    // ocs_reconfigure: circuits changed, when the mirrors started moving (after the
    // drain) and when the new map was lit, and the light the unchanged circuits passed
    // meanwhile.
    int reconfig = -1;  // index in FaultPlan::reconfigs
    int changed_ports = 0;
    uint64_t drain_ps = 0, dark_from_ps = UINT64_MAX, dark_until_ps = UINT64_MAX;
    uint64_t unchanged_bytes = 0, unchanged_bytes0 = 0;
    std::vector<int> changed;  // the switch's ports whose circuit changed
    // ocs_phase_map (the OCS controller's requests for its phase), added up: requests,
    // switches that changed, the job's wait (request to the last switch lit), the dark
    // times and drains of the switches' reconfigurations.
    uint64_t requests = 0, switches = 0, ctl_changed = 0;
    bool timed = false;  // ocs_circuit_map (a time), not ocs_phase_map (phase boundaries)
    uint64_t ctl_wait_ps = 0, ctl_dark_ps = 0, ctl_drain_ps = 0;
    uint64_t ctl_first_wait_ps = 0, ctl_first_dark_from_ps = 0, ctl_first_dark_until_ps = 0;
  };
  // A burst's retry counters: those gained since its start, added to `e` (at its end or at
  // the end of the run).
  void burst_counts(const EventStats& e, uint64_t& crc, uint64_t& replays, uint64_t& retry) const;
  void wake(uint32_t what) override;
  void apply(const FaultAction& a);
  void set_link(int link, bool down, int event);  // one more (or one less) reason to be down
  void detect();
  void close_wait(int event, uint64_t t);
  int event_of(const Port& at, LossCause cause) const;
  const FaultWindow* window_of(uint64_t t, const std::vector<FaultWindow>& windows) const;
  // The time the rest of window `w` after event `e` lost to the capacity its links took
  // away: (end - at) x (1 - ceiling after / ceiling before), if they stayed down to its
  // end; 0 otherwise or without ceilings.
  uint64_t capacity_extra_ps(const EventStats& e, const FaultWindow* w) const;
  std::vector<char> down_now() const;
  // ocs_reconfigure (docs/optical.md): the changed circuits' transmitters stop and the
  // routes avoid them now; once drained the mirrors move; reconfigured() lights the map.
  void reconfigure(int event, int r);
  void reconfigured(int event);
  uint64_t unchanged_passed(const EventStats& e) const;
  // cube_fail (docs/optical.md, "Failure bypass"): at the failure the job stops; after the
  // detection time, once nothing is in flight, every switch of the pod takes its new map;
  // restart_time after the last is lit the ranks of the failed cube run on the spare's
  // chips and the collective starts again.
  void cube_fail(int event, int b);
  void bypass_step(int b);   // detected (or still draining): reconfigure when quiet
  void bypass_lit(int b);    // one more switch lit
  void bypass_resume(int b);
  bool quiet() const;        // nothing of the stopped job in flight
  nlohmann::json bypass_json(int b) const;
  struct Bypass {
    int event = -1;
    int sub_base = 0;              // ev_ index of its first switch's reconfiguration
    int pending = 0;               // switches not lit yet
    int step = 0;                  // 0: failed, 1: reconfiguring, 2: restarting, 3: resumed
    bool halted_a_collective = false;
    uint64_t failed_ps = UINT64_MAX, detected_ps = 0, quiet_ps = 0, lit_ps = 0;
    uint64_t resumed_ps = UINT64_MAX;
    uint64_t abandoned_bytes = 0, sunk0 = 0, drained_bytes = 0, partial_bytes = 0;
    uint64_t ignored0 = 0, ignored_msgs = 0;
  };
  // The OCS controller: per circuit map, its first EventStats slot (one per switch of the
  // map, after the plan's events and the bypasses', reused by every request); the request
  // being played.
  std::map<std::string, int> map_sub_base_;
  std::vector<int> ctl_of_sub_;  // per ev_ index: 1 if a controller slot
  struct Request {
    bool active = false;
    int event = -1;  // the ocs_phase_map event it is for (-1: a direct request)
    uint64_t at_ps = 0;
    int pending = 0;
    std::vector<int> subs;  // the slots of the switches that changed
    std::function<void()> ready;
  };
  Request req_;
  uint64_t ctl_requests_ = 0;
  void ctl_lit(int sub);
  // ocs_circuit_map: requests the map now, or after the request in progress.
  void timed_map(int event, const std::string& map);
  std::deque<std::pair<int, std::string>> timed_queue_;
  std::vector<Bypass> bypass_;               // per FaultPlan::bypasses
  std::vector<int> bypass_of_sub_;           // per ev_ index: its bypass, or -1
  std::multimap<uint64_t, int> bypass_due_;  // time -> bypass to step
  Alarm bypass_alarm_;

  System& sys_;
  const FaultPlan& plan_;
  std::function<bool()> done_;
  std::function<double(const std::vector<char>&)> ceiling_;
  double ceiling0_ = -1;            // the ceiling with every link up
  size_t next_ = 0;                 // next action of the plan
  bool over_ = false;               // workload_done() ran
  uint64_t healed_ps_ = UINT64_MAX; // when it brought links back (MAX: none were down)
  std::vector<char> device_down_;   // per graph device: failed now
  int current_ = -1;                // the event whose action is being played
  int last_down_ = -1;              // the last event that took something down
  Alarm action_alarm_, detect_alarm_, reconf_alarm_;
  std::multimap<uint64_t, int> reconf_due_;      // new maps to light: time -> event
  std::map<int, std::vector<std::pair<int, int>>> reconf_wait_;  // per switch: (event, reconfig) waiting for its mirrors
  std::vector<int> port_link_base_;              // per device: first index in port_link_
  std::vector<int> port_link_;                   // per (device, port): graph link or -1
  struct Detection {
    uint64_t at_ps;
    int link;
    bool down;
  };
  Fifo<Detection> detections_;      // times never decrease: now + detection_ps
  std::vector<int> down_count_;     // per link: how many events hold it down now
  std::vector<char> routed_down_;   // per link: down as far as routes know
  std::vector<int> down_by_event_;  // per link: the event that last took it down
  std::unordered_map<const Port*, int> link_of_port_;
  std::vector<EventStats> ev_;      // per event of the plan
  std::unique_ptr<TimerQueue> retransmit_;
  Fifo<Packet*> retransmit_q_;
  std::vector<uint64_t> recomputed_ps_;  // times routes were recomputed (the first 1000)
  uint64_t recomputations_ = 0;
  bool has_transport_ = false;      // NICs with a transport (kTransport losses are drops)
  std::map<std::string, uint64_t> ledger_drops_;  // by cause
  uint64_t control_frames_lost_ = 0;  // link-level control frames (pause) lost with a link
  uint64_t transport_drops_ = 0;    // kTransport losses: in the ledger, recovered by NICs
  uint64_t lost_ = 0, lost_payload_ = 0, retransmitted_ = 0, unrecovered_ = 0;
  uint64_t unrecovered_payload_ = 0;
  std::string first_unrecovered_;   // "where at T: src -> dst, B bytes"
};

}  // namespace fabricsim
