#include "models/core/packet.h"

#include <algorithm>
#include <memory>

namespace fabricsim {

void PacketPool::grow() {
  slabs_.emplace_back(new Packet[kSlab]());  // zeroed: recycled values are never garbage
  Packet* slab = slabs_.back().get();
  // Room for every packet there is, so that release() never allocates.
  // (Doubling: a run that grows to many slabs copies the stack O(log) times.)
  if (free_.capacity() < slabs_.size() * kSlab)
    free_.reserve(std::max(2 * free_.capacity(), slabs_.size() * kSlab));
  for (size_t i = 0; i < kSlab; ++i) free_.push_back(&slab[i]);  // the last on top
}

PacketPool& PacketPool::global() {
  static PacketPool pool;
  return pool;
}

}  // namespace fabricsim
