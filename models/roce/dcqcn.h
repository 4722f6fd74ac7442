// DCQCN's reaction point (Zhu et al., SIGCOMM 2015): the rate limiter of one RoCEv2 queue
// pair, driven by CNPs from the receiver (the notification point). Plain C++ (unit-tested
// without SystemC). Rules:
//  * a CNP: alpha = (1 - g) x alpha + g, and a rate decrease (target rate Rt = current rate
//    Rc, Rc = Rc x (1 - alpha / 2)), at most one per rate_decrease_interval (a CNP within
//    it decreases when it ends); a decrease restarts the stage counters and the timers;
//  * every alpha_timer without a CNP: alpha = (1 - g) x alpha;
//  * a rate-increase event every rate_timer (T) and every byte_counter bytes sent (B):
//    fast recovery Rc = (Rt + Rc) / 2 while both stages are below F; additive increase
//    Rt += R_AI, Rc = (Rt + Rc) / 2 once one stage reaches F; hyper increase Rt += i x R_HAI
//    (i = the smaller stage - F) once both exceed F; rates capped at the line rate and kept
//    above min_rate.
// Timers are evaluated lazily (advance(now) replays every expiry up to now in time order),
// which gives the same rates as events at the expiries without costing one.
#pragma once
#include <cstdint>

namespace fabricsim {

// Defaults (models/roce/roce_nic_kind.cpp): the DCQCN row of the HPCC reference ns-3
// configuration (g, T, R_AI, R_HAI, the minimum rate, and its alpha interval 1 us, decrease
// interval 4 us, F = 1); the byte counter from the DCQCN paper (10 MB).
struct DcqcnParams {
  uint64_t line_rate_bps = 0;
  double g = 1.0 / 256;
  uint64_t alpha_timer_ps = 0;
  uint64_t rate_timer_ps = 0;
  uint64_t rate_decrease_interval_ps = 0;
  uint64_t byte_counter_bytes = 0;
  uint32_t fast_recovery_steps = 5;  // F
  uint64_t ai_bps = 0, hai_bps = 0, min_rate_bps = 0;
};

class Dcqcn {
 public:
  explicit Dcqcn(const DcqcnParams& p);

  void on_cnp(uint64_t now);
  void on_sent(uint64_t bytes, uint64_t now);
  // Replays the timers' expiries up to `now`.
  void advance(uint64_t now);

  uint64_t rate_bps() const { return uint64_t(rc_); }
  uint64_t target_bps() const { return uint64_t(rt_); }
  double alpha() const { return alpha_; }
  uint32_t timer_stage() const { return t_; }
  uint32_t byte_stage() const { return b_; }
  uint64_t cnps() const { return cnps_; }
  uint64_t increases() const { return increases_; }

 private:
  void increase();
  void decrease(uint64_t at);

  DcqcnParams p_;
  double rc_, rt_, alpha_ = 1.0;
  uint32_t t_ = 0, b_ = 0;
  uint64_t bytes_ = 0;
  bool active_ = false;  // timers run from the first CNP on (before it: line rate)
  uint64_t next_alpha_ = 0, next_rate_ = 0;
  uint64_t next_decrease_ = 0;  // no decrease before this
  bool decrease_pending_ = false;  // a CNP came within the decrease interval
  uint64_t cnps_ = 0, increases_ = 0;
};

}  // namespace fabricsim
