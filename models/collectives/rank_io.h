// What the CollectiveEngine needs of a rank: send messages, reduce arrived data, and be
// told of deliveries and of messages that have left. The packet and transaction levels
// implement it with the accelerator's fabric interface (models/endpoint/endpoint.h); the
// flow level (models/flow/flow_rank.h) with flows whose rates are max-min fair shares.
#pragma once
#include <cstdint>
#include <functional>

#include "models/core/packet.h"
#include "models/endpoint/endpoint_params.h"

namespace fabricsim {

class RankIo {
 public:
  struct Delivery {
    uint32_t src;       // source endpoint id
    PacketKind kind;
    uint64_t tag;
    uint64_t bytes;
    uint64_t msg_id;
  };
  using DeliveryFn = std::function<void(const Delivery&)>;
  using SentFn = std::function<void(uint64_t msg_id, PacketKind kind)>;

  virtual ~RankIo() = default;
  virtual uint32_t id() const = 0;  // endpoint id
  // Queue a message to endpoint `dst`; returns its id. on_sent fires when its last byte
  // has left, on_delivery (at `dst`) when it has fully arrived.
  // `not_before` (ps, 0: none): its last byte may not leave before then; `packet_cap`
  // (bytes, 0: none): its packets carry at most this much payload (Endpoint::send).
  virtual uint64_t send(uint32_t dst, uint64_t bytes, uint64_t tag,
                        PacketKind kind = PacketKind::kData, uint8_t vc = 0,
                        uint64_t not_before = 0, uint32_t packet_cap = 0) = 0;
  // The accelerator's parameters (the protocol model reads its channel rates and store sizes).
  virtual const EndpointParams& params() const = 0;
  // Does its route to endpoint `dst` leave through a scale-out NIC port?
  virtual bool via_nic(uint32_t dst) const = 0;
  // Concurrent senders share a port round robin (Endpoint::set_interleave); no-op where
  // there are no packets.
  virtual void set_interleave(bool on) { (void)on; }
  // In-switch reduction and multicast (NVLS): see Endpoint::send_group.
  virtual uint64_t send_group(PacketKind kind, uint64_t bytes, uint64_t tag) = 0;
  // Reserve the reduction engine for `bytes` of reduced output; returns when it is done (ps).
  virtual uint64_t reduce(uint64_t bytes) = 0;
  virtual void on_delivery(DeliveryFn fn) = 0;
  virtual void on_sent(SentFn fn) = 0;
};

}  // namespace fabricsim
