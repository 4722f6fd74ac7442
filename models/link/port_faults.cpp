// The Port's fault API (port.h, "Faults"): a link failing and coming back, the transactions
// it cuts, and a failed device's arrivals. Nothing here runs in a run without faults.
#include "models/core/errors.h"
#include "models/link/port.h"

namespace fabricsim {

void Port::tx_faulted(uint64_t t) {
  if (down_) return;  // link_up() kicks the transmitter
  if (cold_->held_.empty()) {
    fault_state_ = false;
    tx_step<false>(t);
    return;
  }
  tx_step<true>(t);
}

std::vector<Packet*> Port::cut_arrivals(uint64_t t) {
  // The peer sends one transaction after another (a stream link layer may overlap their
  // tails), so the ones whose last bit was still to go at `t` are the newest arrivals. A
  // transaction this port has already handed to its owner (a cut-through switch takes an
  // aggregated transaction at its head) is not cut: it is delivered whole.
  const uint64_t delay = latency_.value() + rx_latency_ps_;
  const std::vector<Packet*> in = arrival_list();
  size_t keep = in.size();
  while (keep > 0 && in[keep - 1]->tail_ps - delay > t) {
    Packet* p = in[--keep];
    rx_payload_bytes_ -= p->payload_bytes;
    rx_packets_ -= p->npackets;
    --rx_transactions_;
  }
  keep_arrivals(keep);
  std::vector<Packet*> cut(in.begin() + std::ptrdiff_t(keep), in.end());
  for (Packet* p : cut) p->queue_next = nullptr;
  return cut;
}

std::vector<Packet*> Port::arrival_list() const {
  std::vector<Packet*> v;
  for (Packet* p = arr_head_; p; p = p->queue_next) v.push_back(p);
  return v;
}

void Port::keep_arrivals(size_t n) {
  if (n == 0) {
    // The pending wake-up finds nothing and sets none (rx_method), as with an empty FIFO.
    arr_head_ = arr_tail_ = nullptr;
    return;
  }
  Packet* p = arr_head_;
  uint64_t due = arr_head_due_;
  for (size_t i = 1; i < n; ++i) {
    const uint32_t d = p->next_due_delta;
    p = p->queue_next;
    due = d != kFarDue ? due + d : due_of(p);
  }
  FABRICSIM_ASSERT(due == due_of(p), cold_->display_name_ + ": arrival times out of step");
  p->queue_next = nullptr;
  arr_tail_ = p;
  arr_tail_due_ = due;
}

void Port::link_down() {
  FABRICSIM_ASSERT(attached_ && peer_ && loss_,
                   cold_->display_name_ + ": link_down before elaboration");
  if (down_) return;
  const uint64_t t = now();
  down_ = true;
  fault_state_ = true;
  cold_->f_.down_since = t;
  // The transmitter stops: what it was serialising is cut, and no wait of its continues.
  if (busy_until_ > t) busy_until_ = t;
  if (stall_since_ != UINT64_MAX) {
    credit_stall_ps_ += t - stall_since_;
    set_stall(UINT64_MAX);
  }
  if (replay_stall_since_ != UINT64_MAX) {
    replay_stall_ps_ += t - replay_stall_since_;
    replay_stall_since_ = UINT64_MAX;
  }
  for (Packet* p : peer_->cut_arrivals(t)) {
    // It never reached the peer's buffer: its credits are this transmitter's again. (Its
    // replay-buffer share frees at its ack time, as if acknowledged.)
    credit(p->vc) += p->link_bytes;
    ++cold_->f_.cut_transactions;
    cold_->f_.cut_payload_bytes += p->payload_bytes;
    if (cold_->link_.recovery == LossRecovery::kLinkReplay)
      cold_->held_.push(p);
    else
      loss_->lost(*this, cold_->link_.recovery, p, LossCause::kLinkDown);
  }
  owner_->link_changed(index_, true);
}

uint64_t Port::cut_circuit(Port& far, uint64_t pass_ps) {
  FABRICSIM_ASSERT(down_ && loss_, cold_->display_name_ + ": cut_circuit on a link that is up");
  uint64_t n = 0;
  // A transaction's tail reaches `far` pass_ps (the mirrors) + far's fibre after it passed
  // the mirrors: those still to pass them now are the cut ones (the newest arrivals).
  for (Packet* p : far.cut_arrivals(now() + pass_ps)) {
    credit(p->vc) += p->link_bytes;
    ++cold_->f_.cut_transactions;
    cold_->f_.cut_payload_bytes += p->payload_bytes;
    ++n;
    if (cold_->link_.recovery == LossRecovery::kLinkReplay)
      cold_->held_.push(p);
    else
      loss_->lost(*this, cold_->link_.recovery, p, LossCause::kLinkDown);
  }
  return n;
}

void Port::link_up() {
  if (!down_) return;
  down_ = false;
  cold_->f_.down_ps += now() - cold_->f_.down_since;
  cold_->f_.down_since = UINT64_MAX;
  fault_state_ = !cold_->held_.empty();
  // Credits returned while the link was down are absorbed as usual when it next looks.
  Scheduler::instance().set(tx_alarm_, now());
  owner_->link_changed(index_, false);
}

void Port::recover_held() {
  while (!cold_->held_.empty()) {
    Packet* p = cold_->held_.pop();
    ++cold_->f_.recovered;
    owner_->tx_recover(index_, p);
  }
  fault_state_ = down_;
}

// Inside a failed device a transaction is gone for every protocol but one with end-to-end
// retransmission: link-level replay had already handed it over.
void Port::drop_arrivals() {
  const LossRecovery r = after_device_failure(cold_->peer_link_.recovery);
  const std::vector<Packet*> in = arrival_list();
  keep_arrivals(0);
  for (auto it = in.rbegin(); it != in.rend(); ++it) {  // the newest first, as before
    Packet* p = *it;
    p->queue_next = nullptr;
    ++cold_->f_.dropped_arrivals;
    // The failed device will never free its buffer: the credits go back upstream as if it
    // had, so that the link starts with full credits when the device is up again. (A
    // credit-free receiver returns none.)
    if (!credit_free_rx_) release_rx(p, 0);
    loss_->lost(*this, r, p, LossCause::kDeviceDown);
  }
}

void Port::drop_held() {
  const LossRecovery r = after_device_failure(cold_->link_.recovery);
  while (!cold_->held_.empty())
    loss_->lost(*this, r, cold_->held_.pop(), LossCause::kDeviceDown);
  fault_state_ = down_;
}

std::string Port::credits_check() const {
  if (!attached_) return "";
  if (!peer_ || !peer_->credit_free_rx_) {
    std::vector<uint64_t> c(vcs_);
    for (uint32_t vc = 0; vc < vcs_; ++vc) c[vc] = credit(vc);
    const Fifo<CreditReturn>& q = *credit_q_;
    for (size_t i = 0; i < q.size(); ++i) c[q.at(i).vc] += q.at(i).bytes;
    for (size_t vc = 0; vc < c.size(); ++vc)
      if (c[vc] != cold_->peer_link_.rx_buffer_bytes)
        return cold_->display_name_ + ": " + std::to_string(c[vc]) + " B of credits on vc " +
               std::to_string(vc) + ", the peer's buffer holds " +
               std::to_string(cold_->peer_link_.rx_buffer_bytes) + " B";
  }
  uint64_t acked = 0;
  for (size_t i = 0; i < acks_.size(); ++i) acked += acks_.at(i).bytes;
  if (replay_used_ != acked)
    return cold_->display_name_ + ": " + std::to_string(replay_used_ - acked) +
           " B left in the replay buffer";
  if (!cold_->held_.empty())
    return cold_->display_name_ + ": " + std::to_string(cold_->held_.size()) +
           " transactions held";
  return "";
}

void Port::lose(Packet* p, LossCause cause) {
  FABRICSIM_ASSERT(loss_, cold_->display_name_ + ": a transaction lost in a run without faults");
  const LossRecovery r =
      cause == LossCause::kDeviceDown ? after_device_failure(cold_->link_.recovery)
                                      : cold_->link_.recovery;
  loss_->lost(*this, r == LossRecovery::kLinkReplay ? LossRecovery::kNone : r, p, cause);
}

}  // namespace fabricsim
