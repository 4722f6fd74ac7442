#include "models/roce/dcqcn.h"

#include <algorithm>

namespace fabricsim {

Dcqcn::Dcqcn(const DcqcnParams& p)
    : p_(p), rc_(double(p.line_rate_bps)), rt_(double(p.line_rate_bps)) {}

void Dcqcn::advance(uint64_t now) {
  if (!active_) return;
  for (;;) {
    const uint64_t dec = decrease_pending_ ? next_decrease_ : UINT64_MAX;
    const uint64_t t = std::min({next_alpha_, next_rate_, dec});
    if (t > now) break;
    if (t == dec) {
      decrease(t);
    } else if (t == next_alpha_) {
      alpha_ *= 1 - p_.g;
      next_alpha_ += p_.alpha_timer_ps;
    } else {
      ++t_;
      increase();
      next_rate_ += p_.rate_timer_ps;
    }
  }
}

void Dcqcn::decrease(uint64_t at) {
  decrease_pending_ = false;
  rt_ = rc_;
  rc_ = std::max(rc_ * (1 - alpha_ / 2), double(p_.min_rate_bps));
  t_ = b_ = 0;
  bytes_ = 0;
  next_rate_ = at + p_.rate_timer_ps;
  next_decrease_ = at + p_.rate_decrease_interval_ps;
}

void Dcqcn::on_cnp(uint64_t now) {
  if (!active_) {  // the first CNP starts the timers
    active_ = true;
    next_decrease_ = now;
    next_alpha_ = now + p_.alpha_timer_ps;
    next_rate_ = now + p_.rate_timer_ps;
  } else {
    advance(now);
  }
  ++cnps_;
  alpha_ = (1 - p_.g) * alpha_ + p_.g;
  next_alpha_ = now + p_.alpha_timer_ps;  // alpha decays only in periods without a CNP
  if (now >= next_decrease_)
    decrease(now);
  else
    decrease_pending_ = true;
}

void Dcqcn::on_sent(uint64_t bytes, uint64_t now) {
  if (!active_) return;
  advance(now);
  bytes_ += bytes;
  while (bytes_ >= p_.byte_counter_bytes) {
    bytes_ -= p_.byte_counter_bytes;
    ++b_;
    increase();
  }
}

void Dcqcn::increase() {
  ++increases_;
  const uint32_t f = p_.fast_recovery_steps;
  if (t_ > f && b_ > f)
    rt_ += double(std::min(t_, b_) - f) * double(p_.hai_bps);  // hyper increase
  else if (t_ >= f || b_ >= f)
    rt_ += double(p_.ai_bps);  // additive increase
  // (both below F: fast recovery, the target stays)
  const double line = double(p_.line_rate_bps);
  rt_ = std::min(rt_, line);
  rc_ = std::min((rt_ + rc_) / 2, line);
}

}  // namespace fabricsim
