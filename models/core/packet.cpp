#include "models/core/packet.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

namespace fabricsim {

void transport_line_missing() {
  // A model read a packet's transport fields in a run whose pool has no transport lines:
  // a model that uses them must call PacketPool::global().enable_transport() when built.
  std::fputs("fabricsim: internal error: a packet's transport line was used, but no model "
             "enabled transport lines (PacketPool::enable_transport)\n",
             stderr);
  std::abort();
}

PacketPool::~PacketPool() {
  for (void* s : slabs_) ::operator delete(s, std::align_val_t(alignof(Packet)));
}

void PacketPool::enable_transport() {
  if (transport_) return;
  if (!slabs_.empty())
    throw std::logic_error(
        "PacketPool::enable_transport: packets without transport lines exist already; "
        "enable it when the model is built, before the simulation starts");
  transport_ = true;
}

void PacketPool::grow() {
  const size_t stride = sizeof(Packet) + (transport_ ? sizeof(PacketTransport) : 0);
  void* slab = ::operator new(kSlab * stride, std::align_val_t(alignof(Packet)));
  slabs_.push_back(slab);
  // Transport lines are zeroed, so that their recycled values are never garbage (the
  // packets' own lines are initialised by acquire()). Without them nothing is written
  // here: the first acquire of a packet is its first touch.
  if (transport_) std::memset(slab, 0, kSlab * stride);
  // Room for every packet there is, so that release() never allocates.
  // (Doubling: a run that grows to many slabs copies the stack O(log) times.)
  if (free_.capacity() < slabs_.size() * kSlab)
    free_.reserve(std::max(2 * free_.capacity(), slabs_.size() * kSlab));
  char* base = static_cast<char*>(slab);
  for (size_t i = 0; i < kSlab; ++i)
    free_.push_back(reinterpret_cast<Packet*>(base + i * stride));  // the last on top
}

PacketPool& PacketPool::global() {
  static PacketPool pool;
  return pool;
}

}  // namespace fabricsim
