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
    : mode_(mode), n_(entropies), rng_(rng), ring_(buffer), freeze_ps_(freeze_ps) {
  FABRICSIM_ASSERT(entropies > 0 && buffer > 0, "entropy policy: empty");
  fixed_ = uint16_t(rng_.below(n_));
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
    ++explored_;
    return uint16_t(rng_.below(n_));
  }
  const uint16_t size = uint16_t(ring_.size());
  if (frozen_ && count_ > 0) {
    // Frozen: reuse the known entropies in turn, fresh or not.
    Slot& s = ring_[frozen_next_ % count_];
    frozen_next_ = uint16_t((frozen_next_ + 1) % count_);
    if (s.fresh) {
      s.fresh = false;
      --fresh_;
    }
    ++recycled_;
    return s.entropy;
  }
  if (fresh_ > 0) {
    // The oldest fresh entry: fresh ones are the last `fresh_` written before head_.
    const uint16_t i = uint16_t((head_ + size - fresh_) % size);
    ring_[i].fresh = false;
    --fresh_;
    ++recycled_;
    return ring_[i].entropy;
  }
  ++explored_;
  return uint16_t(rng_.below(n_));
}

void EntropyPolicy::on_ack(uint16_t entropy, bool ecn, uint64_t) {
  if (mode_ != SprayMode::kReps || ecn) return;  // marked: not recycled
  const uint16_t size = uint16_t(ring_.size());
  Slot& s = ring_[head_];
  if (!s.fresh && fresh_ < size) ++fresh_;
  s.entropy = entropy;
  s.fresh = true;
  head_ = uint16_t((head_ + 1) % size);
  if (count_ < size) ++count_;
}

void EntropyPolicy::on_timeout(uint64_t now) {
  if (mode_ != SprayMode::kReps || frozen_ || explore_ > 0) return;
  frozen_ = true;
  thaw_at_ = now + freeze_ps_;
  frozen_next_ = 0;
}

}  // namespace fabricsim
