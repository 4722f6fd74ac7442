// Per-packet entropy selection (the value switches hash with the flow's addresses to pick
// among equal-cost paths). Plain C++ (unit-tested without SystemC).
//  * ecmp: one entropy per connection, drawn once: a single path, as a flow hashed by ECMP.
//  * oblivious: round robin over `entropies` values from a random start.
//  * reps (Bonato et al., arXiv 2407.21625): recycle the entropies of packets that were
//    acknowledged without an ECN mark (a ring of `buffer` entries, oldest fresh first);
//    entropies that met a mark or a trim are simply not recycled; when none is fresh,
//    explore a random one. A loss (a SACK gap or a timeout: the packet vanished, unlike a
//    trimmed one whose header proved its path alive) marks its entropy bad and freezes
//    the ring: until `freeze_ps` later its entries are reused in turn whether fresh or not
//    (no exploration onto a failed path), then the ring is cleared and 16 packets explore.
//    A bad entropy is neither recycled nor explored until `freeze_ps` after its loss or an
//    unmarked ack of it (a copy sent before the loss that made it).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "models/core/rng.h"

namespace fabricsim {

enum class SprayMode : uint8_t { kEcmp, kOblivious, kReps };

class EntropyPolicy {
 public:
  EntropyPolicy(SprayMode mode, uint16_t entropies, uint16_t buffer, uint64_t freeze_ps,
                Rng rng);

  // The entropy of the next packet sent (new or retransmitted).
  uint16_t next(uint64_t now);
  // Feedback from an ack: the packet that carried `entropy` arrived, marked or not.
  void on_ack(uint16_t entropy, bool ecn, uint64_t now);
  // The packet that carried `entropy` was lost (SACK gap or timeout): REPS marks the
  // entropy bad and freezes.
  void on_loss(uint16_t entropy, uint64_t now);

  // Back to the state it was built in (its random stream from its start), keeping the
  // recycled / explored / freezes counts (statistics). Independent rows.
  void reset();

  SprayMode mode() const { return mode_; }
  bool frozen() const { return frozen_; }
  uint64_t recycled() const { return recycled_; }
  uint64_t explored() const { return explored_; }
  uint64_t freezes() const { return freezes_; }
  bool bad(uint16_t entropy, uint64_t now) const {
    return !bad_until_.empty() && bad_until_[entropy] > now;
  }
  uint16_t fresh() const { return fresh_; }

 private:
  struct Slot {
    uint16_t entropy = 0;
    bool fresh = false;
  };
  SprayMode mode_;
  uint16_t n_;
  Rng rng_;
  Rng rng0_;               // the stream as built (reset)
  uint16_t fixed_ = 0;     // ecmp; oblivious: the next value
  // REPS ring: `head_` is where the next good entropy is written; `count_` entries valid.
  std::vector<Slot> ring_;
  uint16_t head_ = 0, count_ = 0, fresh_ = 0, frozen_next_ = 0;
  uint16_t explore_ = 0;
  bool frozen_ = false;
  uint64_t freeze_ps_, thaw_at_ = 0;
  uint64_t recycled_ = 0, explored_ = 0, freezes_ = 0;
  std::vector<uint64_t> bad_until_;  // per entropy; empty until the first loss
  uint16_t explore(uint64_t now);    // a random entropy, not a bad one if it can
};

SprayMode spray_mode(const std::string& name);

}  // namespace fabricsim
