#include "models/uec/spraying.h"

#include "models/core/errors.h"

namespace fabricsim {

SprayMode spray_mode(const std::string& name) {
  if (name == "ecmp") return SprayMode::kEcmp;
  if (name == "oblivious") return SprayMode::kOblivious;
  if (name == "reps") return SprayMode::kReps;
  throw InternalError("unknown spraying mode '" + name + "'");
}

EntropyPolicy::EntropyPolicy(SprayMode mode, uint16_t entropies, uint16_t buffer,
                             uint64_t freeze_ps, Rng rng)
    : mode_(mode), n_(entropies), rng_(rng), rng0_(rng), ring_(buffer), freeze_ps_(freeze_ps) {
  FABRICSIM_ASSERT(entropies > 0 && buffer > 0, "entropy policy: empty");
  fixed_ = uint16_t(rng_.below(n_));
}

void EntropyPolicy::reset() {
  rng_ = rng0_;
  fixed_ = uint16_t(rng_.below(n_));
  for (Slot& s : ring_) s = Slot();
  head_ = count_ = fresh_ = frozen_next_ = 0;
  explore_ = 0;
  frozen_ = false;
  thaw_at_ = 0;
  bad_until_.clear();  // empty: no loss yet
}

uint16_t EntropyPolicy::explore(uint64_t now) {
  ++explored_;
  uint16_t e = uint16_t(rng_.below(n_));
  // Draw again over a bad one (a handful of tries: bad ones are few, and if nearly all
  // are bad, one of them is as good as another).
  for (int tries = 0; tries < 8 && bad(e, now); ++tries) e = uint16_t(rng_.below(n_));
  return e;
}

uint16_t EntropyPolicy::next(uint64_t now) {
  switch (mode_) {
    case SprayMode::kEcmp: return fixed_;
    case SprayMode::kOblivious: {
      const uint16_t e = fixed_;
      fixed_ = uint16_t((fixed_ + 1) % n_);
      return e;
    }
    case SprayMode::kReps: break;
  }
  if (frozen_ && now >= thaw_at_) {  // thaw: forget the ring, explore afresh
    frozen_ = false;
    for (Slot& s : ring_) s = Slot();
    head_ = count_ = fresh_ = 0;
    explore_ = 16;
  }
  if (explore_ > 0) {
    --explore_;
    return explore(now);
  }
  const uint16_t size = uint16_t(ring_.size());
  if (frozen_ && count_ > 0) {
    // Frozen: reuse the known entropies in turn, fresh or not, but not a bad one.
    for (uint16_t k = 0; k < count_; ++k) {
      Slot& s = ring_[frozen_next_ % count_];
      frozen_next_ = uint16_t((frozen_next_ + 1) % count_);
      if (s.fresh) {
        s.fresh = false;
        --fresh_;
      }
      if (bad(s.entropy, now)) continue;
      ++recycled_;
      return s.entropy;
    }
    return explore(now);  // every known one is bad
  }
  while (fresh_ > 0) {
    // The oldest fresh entry: fresh ones are the last `fresh_` written before head_.
    const uint16_t i = uint16_t((head_ + size - fresh_) % size);
    ring_[i].fresh = false;
    --fresh_;
    if (bad(ring_[i].entropy, now)) continue;
    ++recycled_;
    return ring_[i].entropy;
  }
  return explore(now);
}

void EntropyPolicy::on_ack(uint16_t entropy, bool ecn, uint64_t) {
  if (mode_ != SprayMode::kReps || ecn) return;  // marked: not recycled
  if (!bad_until_.empty()) bad_until_[entropy] = 0;  // it made it: the path works
  const uint16_t size = uint16_t(ring_.size());
  Slot& s = ring_[head_];
  if (!s.fresh && fresh_ < size) ++fresh_;
  s.entropy = entropy;
  s.fresh = true;
  head_ = uint16_t((head_ + 1) % size);
  if (count_ < size) ++count_;
}

void EntropyPolicy::on_loss(uint16_t entropy, uint64_t now) {
  if (mode_ != SprayMode::kReps) return;
  if (bad_until_.empty()) bad_until_.assign(n_, 0);
  bad_until_[entropy] = now + freeze_ps_;
  if (frozen_ || explore_ > 0) return;
  frozen_ = true;
  ++freezes_;
  thaw_at_ = now + freeze_ps_;
  frozen_next_ = 0;
}

}  // namespace fabricsim
