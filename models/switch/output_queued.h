// The output-queued switch frame (SwitchParams::input_queues "output"; the Ethernet switch
// is built on it): the Switch's routing, features and statistics without input queues or
// a crossbar. A transaction's head enters its egress queue once past the ingress pipeline
// (through the egress-admission hooks: a shared buffer decides there), its ingress buffer
// frees when its tail is in, so buffering and its limits belong to the admission features;
// its ports are credit-free (Port::set_credit_free_rx): the kinds on this frame check
// that every link's buffer covers its credit loop, so credits would never bind.
//
// Egress: with traffic_classes n > 0, every port has n data queues (Packet::tc, clamped to
// n - 1) and a control queue (kUrgent packets) served first; the data classes share the
// port by strict priority (higher class first) or deficit-weighted round robin. A class
// whose head's priority the link partner has paused (PFC, Port::pause) is skipped; when
// every waiting class is paused the frame wakes itself when the first pause ends. After a
// transaction leaves its queue the egress-departure hooks see it (ECN marking on dequeue).
// A derived class, so that the switch frame's own per-packet path does not change.
#pragma once
#include <vector>

#include "models/switch/switch.h"

namespace fabricsim {

class OutputQueuedSwitch final : public Switch {
 public:
  OutputQueuedSwitch(sc_core::sc_module_name n, std::string display_name, const SwitchParams& p,
                     const std::vector<int>& used_ports, Features features = {});

  Packet* tx_peek(int port) override;
  void tx_pop(int port, Packet* p) override;
  void rx_arrive(int port, Packet* p) override;
  void wake(uint32_t what) override;
  // The frame's reset, and the egress scheduler's: DWRR pointers and deficits, pause
  // wake-ups.
  void reset_dynamic_state() override;

 private:
  int queue_of(const Packet& p) const override {
    return (p.flags & kUrgent) ? ncls_ : std::min<int>(p.tc, ncls_ - 1);
  }
  uint64_t queue_bytes(int out, int queue) const override {
    return qbytes_[size_t(out) * nq_ + size_t(queue)];
  }
  void emit(int out, Packet* p) override;
  void push(int out, Packet* p, uint64_t t);

  // Faults (output_queued_faults.cpp): a lossy switch drops what is queued for a port whose
  // link fails and what arrives for it until routes change, and what has no route at all
  // (a packet-ledger drop its NIC transport recovers from); a failed switch drops
  // everything. (Transactions a link-level replay kept come back through tx_recover.)
 public:
  void link_changed(int port, bool down) override;
  void tx_recover(int port, Packet* p) override;
  void fail(LossHandler& loss) override;

 private:
  void reroute() override {}  // nothing queued waits for a failed port
  // Takes `p` (admitted into egress queue `out`, or not yet if !admitted) out of the
  // switch's accounting and hands it to the port's loss handler.
  void discard(int out, Packet* p, bool admitted, LossCause cause);
  [[gnu::cold]] void push_down(int out, Packet* p);
  [[gnu::cold]] void drop_queued(int port, LossCause cause);

  enum : uint32_t { kResume = 1 };  // wake-up of port `what >> 1` after a pause
  int nq_;                       // queues per port: ncls_ + 1, control last
  bool dwrr_;
  std::vector<Fifo<Packet*>> q_;     // [port * nq_ + queue]
  std::vector<uint64_t> qbytes_;     // [port * nq_ + queue] payload bytes
  std::vector<int> sel_;             // [port] queue of the transaction tx_peek offered
  std::vector<int> cur_;             // [port] DWRR pointer (a data class)
  std::vector<int64_t> deficit_;     // [port * nq_ + queue] DWRR deficit, payload bytes
  std::vector<int64_t> quantum_;     // [class] DWRR quantum, payload bytes
  std::vector<uint32_t> nonempty_;   // [port] bit c: data class c has packets
  std::vector<Alarm> resume_;        // [port] wake-up at the end of a pause
};

}  // namespace fabricsim
