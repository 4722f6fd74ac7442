// NSCC, the Ultra Ethernet network-signal congestion control (UEC 1.0.3 section 3.6.13), as a
// window of bytes per connection. Plain C++ (unit-tested without SystemC).
//
// Inputs per acknowledgement: the bytes it newly acknowledged, the queueing delay of the
// packet that triggered it (its RTT - the base RTT), whether that packet was ECN-marked,
// and the receiver's penalty; per NACK (a trimmed packet) its bytes. The rules and their
// defaults (docs/models.md "NSCC"; REFERENCE: UEC 1.0.3 3.6.13 as in the public ns-3 NSCC
// model; the rules' order follows the public UEC htsim, commit 86de118):
//  * scaling: a = BDP / 150,000 B (BDP = network RTT x line rate; 150,000 B = 100 Gb/s x
//    12 us), b = target / 12 us; target delay = 0.75 x network RTT (trimming) else the
//    network RTT;
//  * window in [1 MTU, 1.5 x the connection's BDP] (its base RTT x line rate), starting at
//    the maximum; queueing delay = RTT - the connection's base RTT;
//  * not marked, delay >= target: fair increase, 5 MTU x a per acked byte (accumulated);
//  * not marked, delay < target: fast increase (cwnd += 0.25 x a per acked byte) while the
//    delay stays under 1 us for a window, else proportional increase 4 MTU x a x b /
//    target x (target - delay) per acked byte (accumulated);
//  * marked, delay >= target: multiplicative decrease on the average delay,
//    cwnd x max(1 - 0.8 x (avg - target) / avg, 0.5), at most once per base RTT;
//  * marked, delay < target: nothing (the packet's path is changed instead);
//  * accumulated increases are applied every 8 MTU of acked bytes or one base RTT
//    (cwnd += accumulated / cwnd), plus an additive 0.15 MTU x a once per base RTT;
//  * QuickAdapt: once per base RTT + target, after a loss or a delay above 4 x target, if
//    the bytes delivered in that period are below max window >> 3, cwnd = those bytes;
//  * a NACK takes its bytes off the window (unless QuickAdapt just ran);
//  * receiver penalty: cwnd -= (newly acknowledged x pend) >> 7.
#pragma once
#include <cstdint>

namespace fabricsim {

struct NsccParams {
  uint32_t mtu = 0;              // bytes of payload per full packet (the NIC's MSS)
  uint64_t line_rate_bps = 0;
  uint64_t network_rtt_ps = 0;   // configured network base RTT: scaling (a, b), target
  uint64_t base_rtt_ps = 0;      // this connection's base RTT (0: network_rtt_ps); lowered
                                 // by shorter measured RTTs
  uint64_t target_delay_ps = 0;  // 0: 0.75 x network RTT with trimming, else network RTT
  bool trimming = true;
  double max_window_bdp = 1.5;
  double md_gain = 0.8;
  double md_floor = 0.5;
  double fair_mtus = 5;          // x a, per acked byte (accumulated)
  double fast_gain = 0.25;       // x a, per acked byte
  double eta_mtus = 0.15;        // x a, once per adjust period
  double prop_mtus = 4;          // x a x b
  int qa_gate = 3;               // QuickAdapt if delivered < max window >> qa_gate
  uint32_t adjust_mtus = 8;      // apply increases every this many MTU acked
  double delay_ewma = 0.0125;    // weight of a new delay sample in the average
  uint64_t fast_delay_ps = 1000000;  // fast increase while the delay is below this (1 us)
};

class Nscc {
 public:
  explicit Nscc(const NsccParams& p);

  // An ack newly acknowledging `newly` bytes (`inflight` left unacknowledged). `rtt_ps`: the
  // RTT of the packet that triggered it, 0 if none is valid; `ecn`: that packet was marked;
  // `pend`: the receiver's penalty.
  void on_ack(uint64_t now, uint64_t newly, uint64_t rtt_ps, bool ecn, uint8_t pend,
              uint64_t inflight);
  // A NACK for a trimmed packet of `bytes`.
  void on_nack(uint64_t now, uint64_t bytes, uint64_t inflight);
  // A retransmission timeout of a packet of `bytes`.
  void on_timeout(uint64_t bytes);

  uint64_t cwnd() const { return cwnd_; }
  uint64_t max_window() const { return maxwnd_; }
  uint64_t base_rtt_ps() const { return base_rtt_; }
  uint64_t target_ps() const { return target_; }
  uint64_t avg_delay_ps() const { return uint64_t(avg_delay_); }
  double a() const { return a_; }
  double b() const { return b_; }
  // Rules applied so far (statistics).
  struct Counts {
    uint64_t fair = 0, proportional = 0, fast = 0, md = 0, quick_adapt = 0, nack = 0,
             adjustments = 0, penalties = 0;
  };
  const Counts& counts() const { return counts_; }
  // Back to the state it was built in (window at the maximum, nothing learned), keeping
  // the rule counts (statistics). Independent rows.
  void reset() {
    const Counts k = counts_;
    *this = Nscc(p_);
    counts_ = k;
  }

  // The rules on their own (public for the unit tests of their arithmetic).
  // Multiplicative decrease on the average delay, at most once per base RTT.
  void multiplicative_decrease(uint64_t now);
  // The receiver penalty: cwnd -= (newly x pend) >> 7 (not below one MTU).
  void receiver_penalty(uint64_t newly, uint8_t pend);
  void set_avg_delay(uint64_t ps) { avg_delay_ = double(ps); }
  void set_cwnd(uint64_t bytes) { cwnd_ = bytes; }

 private:
  void update_delay(uint64_t delay, bool ecn);
  bool quick_adapt(uint64_t now, bool loss, bool ecn, uint64_t delay, uint64_t inflight);
  void fast_or_proportional(uint64_t newly, uint64_t delay);
  void fulfill(uint64_t now);
  void bound();

  NsccParams p_;
  double a_ = 0, b_ = 0;
  uint64_t target_ = 0;
  uint64_t base_rtt_ = 0, bdp_ = 0, maxwnd_ = 0, minwnd_ = 0;
  double alpha_ = 0, fi_ = 0, eta_ = 0, fi_scale_ = 0;
  uint64_t cwnd_ = 0;
  double avg_delay_ = 0;
  double inc_bytes_ = 0;            // accumulated fair + proportional increase (bytes^2)
  uint64_t received_bytes_ = 0;     // acked since the last adjustment
  uint64_t achieved_bytes_ = 0;     // acked in the current QuickAdapt period
  uint64_t bytes_to_ignore_ = 0, bytes_ignored_ = 0;
  uint64_t fi_count_ = 0;
  bool increasing_ = false;
  bool trigger_qa_ = false;
  uint64_t qa_end_ = 0, last_adjust_ = 0, last_dec_ = 0;
  bool decreased_ = false;
  Counts counts_;
};

}  // namespace fabricsim
