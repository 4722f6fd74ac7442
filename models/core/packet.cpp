#include "models/core/packet.h"

#include <memory>

namespace fabricsim {

void PacketPool::grow() {
  slabs_.emplace_back(new Packet[kSlab]());  // zeroed: recycled values are never garbage
  Packet* slab = slabs_.back().get();
  for (size_t i = 0; i < kSlab; ++i) {
    slab[i].next_free_ = free_;
    free_ = &slab[i];
  }
}

PacketPool& PacketPool::global() {
  static PacketPool pool;
  return pool;
}

}  // namespace fabricsim
