#include "models/uec/nscc.h"

#include <algorithm>

#include "models/core/types.h"

namespace fabricsim {

namespace {

constexpr double kReferenceBdp = 150000.0;         // bytes: 100 Gb/s x 12 us
constexpr double kReferenceRttPs = 12000000.0;     // 12 us

uint64_t bdp_of(uint64_t rtt_ps, uint64_t rate_bps) {
  return uint64_t(u128(rtt_ps) * rate_bps / 8 / 1000000000000ull);
}

}  // namespace

Nscc::Nscc(const NsccParams& p) : p_(p) {
  const uint64_t net = p.network_rtt_ps;
  base_rtt_ = p.base_rtt_ps ? p.base_rtt_ps : net;
  bdp_ = bdp_of(base_rtt_, p.line_rate_bps);
  target_ = p.target_delay_ps ? p.target_delay_ps : (p.trimming ? net * 3 / 4 : net);
  // The scaling factors are fixed by the configured network (not by the connection's path
  // or later RTT samples).
  a_ = double(bdp_of(net, p.line_rate_bps)) / kReferenceBdp;
  b_ = double(target_) / kReferenceRttPs;
  alpha_ = p.prop_mtus * p.mtu * a_ * b_ / double(target_);  // bytes / ps
  fi_ = p.fair_mtus * p.mtu * a_;
  eta_ = p.eta_mtus * p.mtu * a_;
  fi_scale_ = p.fast_gain * a_;
  minwnd_ = p.mtu;
  maxwnd_ = std::max<uint64_t>(uint64_t(p.max_window_bdp * double(bdp_)), minwnd_);
  cwnd_ = maxwnd_;
}

void Nscc::bound() {
  cwnd_ = std::clamp(cwnd_, minwnd_, maxwnd_);
}

// The average queueing delay: an EWMA of the samples. An unmarked sample above target
// (a queue that is not this flow's bottleneck) pulls the average towards base RTT / 4
// instead of up, as in the public htsim model; samples beyond 5 base RTTs (after a loss)
// weigh the same.
void Nscc::update_delay(uint64_t delay, bool ecn) {
  const double w = p_.delay_ewma;
  if (!ecn && delay > target_)
    avg_delay_ = w * double(base_rtt_) * 0.25 + (1 - w) * avg_delay_;
  else
    avg_delay_ = w * double(delay) + (1 - w) * avg_delay_;
}

void Nscc::receiver_penalty(uint64_t newly, uint8_t pend) {
  const uint64_t cut = (newly * pend) >> 7;
  cwnd_ = cwnd_ > minwnd_ + cut ? cwnd_ - cut : minwnd_;
  ++counts_.penalties;
}

void Nscc::multiplicative_decrease(uint64_t now) {
  increasing_ = false;
  fi_count_ = 0;
  const double avg = avg_delay_;
  if (avg <= double(target_)) return;
  if (decreased_ && now - last_dec_ <= base_rtt_) return;  // one decrease per base RTT
  const double factor = std::max(1.0 - p_.md_gain * (avg - double(target_)) / avg, p_.md_floor);
  cwnd_ = std::max(uint64_t(double(cwnd_) * factor), minwnd_);
  last_dec_ = now;
  decreased_ = true;
  ++counts_.md;
}

bool Nscc::quick_adapt(uint64_t now, bool loss, bool ecn, uint64_t delay, uint64_t inflight) {
  bool done = false;
  if (bytes_ignored_ < bytes_to_ignore_ && ecn) {
    done = true;  // the window's worth after a QuickAdapt: its signals are old news
  } else if (now > qa_end_) {
    if (qa_end_ != 0 && (trigger_qa_ || loss || delay > 4 * target_) &&
        achieved_bytes_ < (maxwnd_ >> p_.qa_gate)) {
      cwnd_ = std::max(achieved_bytes_, minwnd_);
      bytes_to_ignore_ = inflight;
      bytes_ignored_ = 0;
      trigger_qa_ = false;
      done = true;
      ++counts_.quick_adapt;
    }
    achieved_bytes_ = 0;
    qa_end_ = now + base_rtt_ + target_;
  }
  if (done) {
    inc_bytes_ = 0;
    received_bytes_ = 0;
  }
  return done;
}

void Nscc::fast_or_proportional(uint64_t newly, uint64_t delay) {
  if (delay < p_.fast_delay_ps) {
    fi_count_ += newly;
    if (fi_count_ > cwnd_ || increasing_) {
      cwnd_ += uint64_t(double(newly) * fi_scale_);
      increasing_ = true;
      ++counts_.fast;
      return;
    }
  } else {
    fi_count_ = 0;
  }
  increasing_ = false;
  inc_bytes_ += alpha_ * double(newly) * double(target_ - delay);
  ++counts_.proportional;
}

void Nscc::fulfill(uint64_t now) {
  cwnd_ += uint64_t(inc_bytes_ / double(cwnd_));
  if (now - last_adjust_ >= base_rtt_) {
    cwnd_ += uint64_t(eta_);
    last_adjust_ = now;
  }
  inc_bytes_ = 0;
  received_bytes_ = 0;
  ++counts_.adjustments;
}

void Nscc::on_ack(uint64_t now, uint64_t newly, uint64_t rtt_ps, bool ecn, uint8_t pend,
                  uint64_t inflight) {
  if (pend) receiver_penalty(newly, pend);
  uint64_t delay;
  if (rtt_ps) {
    if (rtt_ps < base_rtt_) {  // a shorter path than configured: the base RTT follows
      base_rtt_ = rtt_ps;
      bdp_ = bdp_of(base_rtt_, p_.line_rate_bps);
      maxwnd_ = std::max<uint64_t>(uint64_t(p_.max_window_bdp * double(bdp_)), minwnd_);
    }
    delay = rtt_ps - base_rtt_;
    update_delay(delay, ecn);
  } else {
    delay = uint64_t(avg_delay_);
  }
  achieved_bytes_ += newly;
  received_bytes_ += newly;
  bytes_ignored_ += newly;
  if (quick_adapt(now, false, ecn, delay, inflight)) return;
  if (!ecn && delay >= target_) {
    inc_bytes_ += fi_ * double(newly);
    ++counts_.fair;
  } else if (!ecn) {
    fast_or_proportional(newly, delay);
  } else if (delay >= target_) {
    multiplicative_decrease(now);
  }
  bound();
  if (received_bytes_ > uint64_t(p_.adjust_mtus) * p_.mtu || now - last_adjust_ > base_rtt_)
    fulfill(now);
  bound();
}

void Nscc::on_nack(uint64_t now, uint64_t bytes, uint64_t inflight) {
  bytes_ignored_ += bytes;
  ++counts_.nack;
  // A trim means a full queue: a delay sample of one base RTT (the trimming threshold's
  // estimate), counted as marked.
  update_delay(base_rtt_, true);
  trigger_qa_ = true;
  if (quick_adapt(now, true, true, 0, inflight)) return;
  cwnd_ = cwnd_ > minwnd_ + bytes ? cwnd_ - bytes : minwnd_;
  bound();
}

void Nscc::on_timeout(uint64_t bytes) {
  cwnd_ = cwnd_ > minwnd_ + bytes ? cwnd_ - bytes : minwnd_;
}

}  // namespace fabricsim
