#include "fabrics/sim/faults.h"

#include <cstdio>

#include "fabrics/sim/system.h"
#include "models/core/errors.h"
#include "models/core/units.h"
#include "models/endpoint/endpoint.h"

namespace fabricsim {

namespace {

std::string us_text(uint64_t ps) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f us", double(ps) * 1e-6);
  return buf;
}

}  // namespace

FaultManager::FaultManager(sc_core::sc_module_name n, System& sys, const SystemSpec& spec)
    : sc_module(n),
      sys_(sys),
      spec_(spec),
      plan_(spec.faults),
      down_count_(spec.graph.links.size(), 0),
      routed_down_(spec.graph.links.size(), 0),
      down_by_event_(spec.graph.links.size(), -1) {
  action_alarm_ = Alarm{this, kAction};
  detect_alarm_ = Alarm{this, kDetect};
  retransmit_ = std::make_unique<TimerQueue>("retransmit", [this](uint64_t) {
    Packet* p = retransmit_q_.pop();
    ++retransmitted_;
    sys_.endpoint(p->src)->retransmit(p);
  });
  if (!plan_.actions.empty()) Scheduler::instance().set(action_alarm_, plan_.actions[0].at_ps);
}

void FaultManager::wake(uint32_t what) {
  ++g_kernel_events;
  const uint64_t t = Scheduler::now();
  if (done_ && done_()) return;  // the workload is over: nothing left to disturb
  if (what == kDetect) {
    detect();
    return;
  }
  while (next_ < plan_.actions.size() && plan_.actions[next_].at_ps <= t) apply(plan_.actions[next_++]);
  if (next_ < plan_.actions.size())
    Scheduler::instance().set(action_alarm_, plan_.actions[next_].at_ps);
}

void FaultManager::set_link(int link, bool down) {
  int& c = down_count_[size_t(link)];
  const bool was = c > 0;
  c += down ? 1 : -1;
  FABRICSIM_ASSERT(c >= 0, "faults: a link came up more often than it went down");
  if ((c > 0) == was) return;
  Port& a = sys_.link_port(link, 0);
  Port& b = sys_.link_port(link, 1);
  if (down) {
    a.link_down();
    b.link_down();
  } else {
    a.link_up();
    b.link_up();
  }
  const uint64_t at = Scheduler::now() + plan_.detection_ps;
  detections_.push(Detection{at, link, down});
  Scheduler::instance().set(detect_alarm_, detections_.front().at_ps);
}

void FaultManager::apply(const FaultAction& a) {
  switch (a.kind) {
    case FaultAction::kLinkDown:
      down_by_event_[size_t(a.target)] = a.event;
      set_link(a.target, true);
      break;
    case FaultAction::kLinkUp:
      set_link(a.target, false);
      break;
    case FaultAction::kDeviceDown: {
      for (int l : sys_.links_of(a.target)) {
        down_by_event_[size_t(l)] = a.event;
        set_link(l, true);
      }
      sys_.devices()[size_t(a.target)]->fail(*this);
      break;
    }
    case FaultAction::kDeviceUp:
      sys_.devices()[size_t(a.target)]->recover();
      for (int l : sys_.links_of(a.target)) set_link(l, false);
      break;
    case FaultAction::kBer:
      sys_.link_port(a.target, 0).set_ber(a.ber);
      sys_.link_port(a.target, 1).set_ber(a.ber);
      break;
  }
}

// The changes detected by now become the routes' view; every device gets new routes, then
// what failed links still hold goes back to their devices, which now know other ways.
void FaultManager::detect() {
  const uint64_t t = Scheduler::now();
  while (!detections_.empty() && detections_.front().at_ps <= t) {
    const Detection d = detections_.pop();
    routed_down_[size_t(d.link)] = d.down;
  }
  sys_.install_routes(routed_down_);
  if (recomputed_ps_.size() < 1000) recomputed_ps_.push_back(t);
  for (size_t l = 0; l < routed_down_.size(); ++l) {
    if (!routed_down_[l]) continue;
    for (int side = 0; side < 2; ++side) {
      Port& p = sys_.link_port(int(l), side);
      if (p.link_is_down() && p.held()) p.recover_held();
    }
  }
  if (!detections_.empty()) Scheduler::instance().set(detect_alarm_, detections_.front().at_ps);
}

void FaultManager::lost(const std::string& where, LossRecovery recovery, Packet* p) {
  ++lost_;
  lost_payload_ += p->payload_bytes;
  if (recovery == LossRecovery::kEndToEnd && sys_.endpoint(p->src)) {
    retransmit_q_.push(p);
    retransmit_->at(Scheduler::now() + plan_.retransmit_ps, 0);
    return;
  }
  if (unrecovered_ == 0)
    first_unrecovered_ = where + " at " + us_text(Scheduler::now()) + ": " +
                         std::to_string(p->payload_bytes) + " B of a message from endpoint " +
                         std::to_string(p->src) + " to endpoint " + std::to_string(p->dst);
  ++unrecovered_;
  unrecovered_payload_ += p->payload_bytes;
  PacketPool::global().release(p);
}

nlohmann::json FaultManager::json() const {
  nlohmann::json j;
  j["detection_time_ps"] = plan_.detection_ps;
  j["retransmit_timeout_ps"] = plan_.retransmit_ps;
  j["events"] = plan_.events;
  j["route_recomputations_ps"] = recomputed_ps_;
  uint64_t cut = 0, replayed = 0, recovered = 0, dropped = 0;
  for (const Port* p : sys_.ports()) {
    const Port::FaultCounters& f = p->fault_counters();
    cut += f.cut_transactions;
    replayed += f.replayed;
    recovered += f.recovered;
    dropped += f.dropped_arrivals;
  }
  j["cut_transactions"] = cut;
  j["replayed_after_link_up"] = replayed;
  j["rerouted_after_detection"] = recovered;
  j["dropped_at_failed_devices"] = dropped;
  j["lost_transactions"] = lost_;
  j["lost_payload_bytes"] = lost_payload_;
  j["retransmitted_end_to_end"] = retransmitted_;
  j["lost_for_good"] = unrecovered_;
  j["lost_for_good_payload_bytes"] = unrecovered_payload_;
  return j;
}

std::vector<std::string> FaultManager::summary() const {
  std::vector<std::string> out;
  for (const std::string& e : plan_.events) out.push_back("# fault: " + e);
  const nlohmann::json j = json();
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "# faults: %zu route recomputations (detection %s), %llu transactions cut, "
                "%llu replayed after link up, %llu rerouted after detection, %llu lost and "
                "retransmitted end to end (timeout %s), %llu lost for good",
                recomputed_ps_.size(), format_time_ps(plan_.detection_ps).c_str(),
                (unsigned long long)j["cut_transactions"].get<uint64_t>(),
                (unsigned long long)j["replayed_after_link_up"].get<uint64_t>(),
                (unsigned long long)j["rerouted_after_detection"].get<uint64_t>(),
                (unsigned long long)retransmitted_, format_time_ps(plan_.retransmit_ps).c_str(),
                (unsigned long long)unrecovered_);
  out.push_back(buf);
  return out;
}

std::string FaultManager::unfinished_reason() const {
  // The event to blame: the one that took down a link still down, else the first.
  int blame = -1;
  std::string down;
  for (size_t l = 0; l < down_count_.size(); ++l) {
    if (down_count_[l] == 0) continue;
    if (blame < 0) blame = down_by_event_[l];
    if (down.size() < 300) down += (down.empty() ? "" : ", ") + sys_.link_name(int(l));
  }
  if (unrecovered_ > 0) {
    const int e = blame >= 0 ? blame : plan_.actions.empty() ? 0 : plan_.actions[0].event;
    return plan_.where.at(size_t(e)) + ": the workload cannot finish: " +
           std::to_string(unrecovered_) + " transactions (" +
           std::to_string(unrecovered_payload_) + " B) were lost for good, the first at " +
           first_unrecovered_ + " (its protocol has no end-to-end retransmission, and what a "
           "failed switch held is gone); " + plan_.events.at(size_t(e)) +
           "; use a protocol that retransmits end to end, or a fault the link recovers from";
  }
  if (blame < 0) return "";
  const std::string cut_off = sys_.unreachable_ranks(routed_down_);
  return plan_.where.at(size_t(blame)) + ": the workload cannot finish: " +
         (cut_off.empty() ? std::string("traffic waits for links that stay down")
                          : cut_off) +
         " after " + plan_.events.at(size_t(blame)) + " (links down at the end: " + down +
         "); give it an up_at, or a system with another path";
}

}  // namespace fabricsim
