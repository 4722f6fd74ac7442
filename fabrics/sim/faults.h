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
//     where the protocol retransmits end to end, and is otherwise counted lost for good.
// It keeps the accounting (lost, retransmitted, replayed, recovered) and explains a run the
// faults left unable to finish.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

#include "fabrics/systems/system_spec.h"
#include "models/core/fifo.h"
#include "models/core/scheduler.h"
#include "models/core/timer.h"
#include "models/link/port.h"

namespace fabricsim {

class System;

class FaultManager : public sc_core::sc_module, public Wakeable, public LossHandler {
 public:
  FaultManager(sc_core::sc_module_name n, System& sys, const SystemSpec& spec);

  // The workload has finished: later faults are not played (they would only move the
  // end of the run).
  void set_done(std::function<bool()> done) { done_ = std::move(done); }

  void lost(const std::string& where, LossRecovery recovery, Packet* p) override;

  // Payload bytes of every transaction copy lost (retransmitted ones included): the
  // end-of-run balance is sent = delivered + absorbed + lost.
  uint64_t lost_payload() const { return lost_payload_; }
  uint64_t lost_for_good() const { return unrecovered_; }
  nlohmann::json json() const;
  // The "# faults:" lines printed under the table.
  std::vector<std::string> summary() const;
  // Why the faults leave the workload unable to finish ("" if they do not explain it):
  // data lost for good, or ranks with no path, naming the events in effect. Starts with
  // the location of the event to blame ("file:line:col: faults.events[i]: ").
  std::string unfinished_reason() const;

 private:
  enum : uint32_t { kAction, kDetect };
  void wake(uint32_t what) override;
  void apply(const FaultAction& a);
  void set_link(int link, bool down);  // one more (or one less) reason for it to be down
  void detect();

  System& sys_;
  const SystemSpec& spec_;
  const FaultPlan& plan_;
  std::function<bool()> done_;
  size_t next_ = 0;                 // next action of the plan
  Alarm action_alarm_, detect_alarm_;
  struct Detection {
    uint64_t at_ps;
    int link;
    bool down;
  };
  Fifo<Detection> detections_;      // times never decrease: now + detection_ps
  std::vector<int> down_count_;     // per link: how many events hold it down now
  std::vector<char> routed_down_;   // per link: down as far as routes know
  std::vector<int> down_by_event_;  // per link: the event that last took it down
  std::unique_ptr<TimerQueue> retransmit_;
  Fifo<Packet*> retransmit_q_;
  std::vector<uint64_t> recomputed_ps_;  // times routes were recomputed
  uint64_t lost_ = 0, lost_payload_ = 0, retransmitted_ = 0, unrecovered_ = 0;
  uint64_t unrecovered_payload_ = 0;
  std::string first_unrecovered_;   // "where at T: src -> dst, B bytes"
};

}  // namespace fabricsim
