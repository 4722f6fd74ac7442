// A FIFO of packets linked through the packets themselves (Packet::queue_next): 16 bytes
// per queue and no buffer of its own. A switch keeps one per (input, output) pair (its
// virtual output queues: 72 x 72 per NVSwitch chip, 2.3 million on the 576-GPU domain),
// where a Fifo<Packet*> cost a 40-byte header plus a separate ring buffer per queue that
// ever held a packet. Pushing writes the queue and the previous tail packet's first
// cache line; popping reads the head packet's first line, which the caller reads anyway.
// A packet is in at most one PacketQueue at a time.
#pragma once
#include <cstddef>

#include "models/core/packet.h"

namespace fabricsim {

class PacketQueue {
 public:
  bool empty() const { return head_ == nullptr; }
  Packet* front() const { return head_; }
  Packet* back() const { return head_ ? tail_ : nullptr; }
  void push(Packet* p) {
    p->queue_next = nullptr;
    if (head_)
      tail_->queue_next = p;
    else
      head_ = p;
    tail_ = p;
  }
  Packet* pop() {
    Packet* p = head_;
    head_ = p->queue_next;
    p->queue_next = nullptr;
    return p;
  }
  // Walks the queue: for cold paths (faults, statistics).
  size_t size() const {
    size_t n = 0;
    for (const Packet* p = head_; p; p = p->queue_next) ++n;
    return n;
  }

 private:
  Packet* head_ = nullptr;
  Packet* tail_ = nullptr;
};

}  // namespace fabricsim
