// The Ethernet switch's memory management unit, a switch feature (models/switch/feature.h)
// on an output-queued frame with traffic classes:
//  * shared buffer with dynamic thresholds (egress admission): a packet that would take
//    its queue past alpha x free buffer, or past a static queue_limit, is dropped with a
//    counted reason (or trimmed);
//  * packet trimming (optional): such a data packet of a transport that handles trims
//    (kTrimOk) loses its payload but trim_bytes and goes on in the strict-priority control
//    queue, marked kTrimmed;
//  * ECN (optional): RED/WRED marking of ECN-capable packets when they leave their queue
//    (egress departure), on the instantaneous queue length, with a random stream of its
//    own (Rng(seed, "<switch>.ecn"));
//  * PFC (optional): per ingress port and priority, bytes in the buffer above pfc_xoff send
//    a pause frame (kPause, a real frame in the control queue) back out of that port; it
//    is refreshed every half pause time while above pfc_xon, and a resume frame (quanta 0)
//    goes out at pfc_xon. Paused data is never dropped by the thresholds (lossless). Pause
//    frames received from a link partner pause this switch's transmitter on that port
//    (ingress claim of kPause).
// Every drop, trim, mark and pause is counted per switch and per port (add_stats).
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "models/core/rng.h"
#include "models/ethernet/shared_buffer.h"
#include "models/switch/feature.h"

namespace fabricsim {

class EthernetMmu final : public SwitchFeature {
 public:
  explicit EthernetMmu(const EthernetMmuParams& p);

  const char* name() const override { return "ethernet"; }
  std::vector<PacketKind> claims() const override { return {PacketKind::kPause}; }
  unsigned hooks() const override { return kEgressAdmission | kEgressDeparture; }
  void attached() override;
  void arrive(int in, Packet* p) override;
  Admission admit(int out, Packet& p) override;
  void departed(int out, Packet& p) override;
  void wake(uint32_t port) override;
  void reset_dynamic_state() override;
  void add_stats(nlohmann::json& j, uint64_t now_ps) const override;
  uint64_t payload_absorbed() const override { return absorbed_; }
  void add_losses(PacketLedger& l) const override;

  uint64_t drops(SharedBuffer::Verdict v) const { return drops_[size_t(v)]; }
  uint64_t trims() const { return trims_; }
  uint64_t ecn_marks() const { return marks_; }
  uint64_t pauses_sent() const { return pauses_sent_; }

 private:
  struct PortCounters {
    uint64_t drops = 0, trims = 0, marks = 0, pauses_sent = 0, xoff_events = 0;
  };
  void send_pause(int port, uint8_t prio, uint16_t quanta);
  // A data packet of a PFC priority: lossless (never dropped or trimmed by the thresholds).
  bool lossless_of(const Packet& p) const {
    return !(p.flags & kUrgent) && (p_.pfc_mask >> (p.tc & 7) & 1);
  }
  uint64_t pause_ps(int port, uint16_t quanta) const;

  EthernetMmuParams p_;
  SharedBuffer buffer_;
  Rng rng_{0, ""};
  std::vector<PfcIngress> pfc_;         // [in port * 8 + priority]
  std::vector<uint64_t> refresh_at_;    // [in port * 8 + priority]: next pause refresh
  std::vector<Alarm> refresh_alarm_;    // [in port]
  std::vector<PortCounters> port_;      // [port]: egress drops/trims/marks, ingress pauses
  std::array<uint64_t, SharedBuffer::kVerdicts> drops_{};
  uint64_t drop_bytes_ = 0, trims_ = 0, trimmed_bytes_ = 0, marks_ = 0;
  uint64_t pauses_sent_ = 0, resumes_sent_ = 0, xoff_events_ = 0;
  uint64_t absorbed_ = 0;  // payload dropped or trimmed off
};

}  // namespace fabricsim
