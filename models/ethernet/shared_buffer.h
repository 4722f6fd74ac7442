// The arithmetic of an Ethernet switch's memory management unit, as plain C++ (tested
// without SystemC): admission into a shared buffer with dynamic thresholds, RED/WRED
// marking probability, and the PFC XOFF/XON hysteresis of one ingress priority.
#pragma once
#include <cstdint>

namespace fabricsim {

// Declared in models/ethernet/mmu.cpp (ethernet_mmu_feature(); defaults there). Sizes are
// payload bytes: the buffer accounts what packets carry, not their headers.
struct EthernetMmuParams {
  uint64_t buffer_bytes = 0;       // shared by every egress queue of the switch
  double dt_alpha = 0;             // dynamic threshold: queue limit = alpha x free buffer
  uint64_t queue_limit_bytes = 0;  // static cap per egress queue (0: none)
  bool ecn = false;                // RED/WRED marking of ECN-capable packets on dequeue
  uint64_t ecn_kmin_bytes = 0, ecn_kmax_bytes = 0;
  double ecn_pmax = 0;
  bool pfc = false;                // priority flow control on the pfc_classes
  uint8_t pfc_mask = 0;            // bit p: priority p is lossless (from pfc_classes)
  uint64_t pfc_ecn_kmin_bytes = 0, pfc_ecn_kmax_bytes = 0;  // lossless classes' ECN profile
  double pfc_ecn_pmax = 0;
  uint64_t pfc_xoff_bytes = 0;     // per ingress port and priority
  uint64_t pfc_xon_bytes = 0;
  uint32_t pfc_quanta = 0;         // pause time of one frame, 512-bit times
  bool trimming = false;           // cut a packet that would be dropped to its header
  uint32_t trim_bytes = 0;         // payload a trimmed packet keeps
  uint64_t trim_threshold_bytes = 0;  // trim trimmable packets above this queue length (0: only
                                      // where they would be dropped)
};

// Dynamic thresholds (Choudhury and Hahne): an egress queue may grow while its length stays
// within alpha x (buffer - used). Lossless traffic (PFC priorities) is held back by pause
// frames instead, so only a full buffer stops it; control packets likewise.
class SharedBuffer {
 public:
  enum class Verdict : uint8_t { kAccept, kDtThreshold, kBufferFull, kQueueLimit };
  static constexpr int kVerdicts = 4;

  SharedBuffer(uint64_t total_bytes, double alpha, uint64_t queue_limit_bytes)
      : total_(total_bytes), alpha_(alpha), queue_limit_(queue_limit_bytes) {}

  // May `bytes` join an egress queue that holds `queue_bytes`? `threshold_free`: the
  // packet is exempt from the queue's thresholds (lossless or control traffic).
  Verdict admit(uint64_t queue_bytes, uint64_t bytes, bool threshold_free) const {
    if (used_ + bytes > total_) return Verdict::kBufferFull;
    if (threshold_free) return Verdict::kAccept;
    if (queue_limit_ && queue_bytes + bytes > queue_limit_) return Verdict::kQueueLimit;
    // Compared before the packet is added: alpha x free as the queue found it.
    if (double(queue_bytes + bytes) > alpha_ * double(total_ - used_)) return Verdict::kDtThreshold;
    return Verdict::kAccept;
  }
  void add(uint64_t bytes) {
    used_ += bytes;
    if (used_ > peak_) peak_ = used_;
  }
  void remove(uint64_t bytes) { used_ -= bytes; }
  uint64_t used() const { return used_; }
  uint64_t peak() const { return peak_; }
  uint64_t total() const { return total_; }

 private:
  uint64_t total_;
  double alpha_;
  uint64_t queue_limit_;
  uint64_t used_ = 0, peak_ = 0;
};

// RED/WRED marking probability on the instantaneous queue length q (bytes): 0 below kmin,
// rising linearly to pmax at kmax, 1 from kmax on.
inline double red_probability(uint64_t q, uint64_t kmin, uint64_t kmax, double pmax) {
  if (q < kmin) return 0.0;
  if (q >= kmax) return 1.0;
  return pmax * double(q - kmin) / double(kmax - kmin);
}

// One ingress priority's PFC state: XOFF when the bytes it has in the buffer exceed xoff,
// XON once they fall to xon or below.
class PfcIngress {
 public:
  // Returns true when this addition crosses into XOFF (a pause frame must go out).
  bool add(uint64_t bytes, uint64_t xoff) {
    bytes_ += bytes;
    if (!xoff_ && bytes_ > xoff) return xoff_ = true;
    return false;
  }
  // Returns true when this removal crosses back to XON (a resume frame must go out).
  bool remove(uint64_t bytes, uint64_t xon) {
    bytes_ -= bytes;
    if (xoff_ && bytes_ <= xon) {
      xoff_ = false;
      return true;
    }
    return false;
  }
  bool xoff() const { return xoff_; }
  uint64_t bytes() const { return bytes_; }

 private:
  uint64_t bytes_ = 0;
  bool xoff_ = false;
};

}  // namespace fabricsim
