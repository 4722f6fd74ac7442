// The seam between the NIC frame (models/nic/nic.h: host ports, segmentation into MTU
// packets, the network port's control queue, pause frames, statistics) and a scale-out
// transport (Ultra Ethernet PDS + NSCC in models/uec/, RoCEv2 + DCQCN in models/roce/).
// Plain C++: a transport is tested without SystemC against a fake NicServices.
//
// Packets: data packets are pool packets the NIC cut from accelerator messages (src, dst
// endpoint ids, message identity, payload, traffic class, ECT); the transport sequences
// them, keeps a copy of each until it is acknowledged and re-creates lost ones from the
// copy. Control packets (acks, NACKs, CNPs, credits) it acquires itself and hands to
// send_control(); they travel with kUrgent set. Everything it receives it either delivers
// (data, once) or releases (absorb() for payload it discards).
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "models/core/ledger.h"
#include "models/core/packet.h"
#include "models/nic/nic_params.h"

namespace fabricsim {

// What a transport may ask of its NIC (implemented by Nic; by a fake in unit tests).
class NicServices {
 public:
  virtual ~NicServices() = default;
  virtual uint64_t now() const = 0;
  virtual const NicParams& params() const = 0;
  virtual const std::string& name() const = 0;
  virtual uint64_t line_rate_bps() const = 0;  // of the network port
  virtual uint32_t endpoints() const = 0;      // endpoint ids are 0 .. endpoints() - 1
  // Unloaded RTT of a full packet to endpoint `dst` and its ack back (the forward path's
  // latencies twice, serialisation of one data and one header-only packet per hop); 0 if
  // unknown.
  virtual uint64_t path_rtt_ps(uint32_t dst) const = 0;
  // A data packet for a local accelerator: the NIC writes it to host memory.
  virtual void deliver(Packet* p) = 0;
  // Payload waiting in the host queue towards local endpoint `dst` (the receiver's own
  // congestion: NSCC's receiver penalty).
  virtual uint64_t host_backlog(uint32_t dst) const = 0;
  // A packet whose payload leaves the fabric here (a duplicate, a trimmed header).
  virtual void absorb(Packet* p) = 0;
  // A control packet for the network port, sent ahead of data.
  virtual void send_control(Packet* p) = 0;
  // A new control packet from the pool, fields zeroed (transport line included).
  virtual Packet* acquire() = 0;
  // A retransmission: a pool packet copied from `copy`; its payload enters the fabric again.
  virtual Packet* recreate(const PacketWithTransport& copy) = 0;
  // A data packet went on the wire for the first time: its payload leaves the send buffer.
  virtual void first_sent(uint32_t payload_bytes) = 0;
  // Data may be sendable now (an ack opened the window, new data arrived).
  virtual void kick() = 0;
  // Calls Transport::on_timer() at t_ps (the earliest asked for wins; spurious calls are
  // allowed: the transport checks its own deadlines).
  virtual void wake_at(uint64_t t_ps) = 0;
};

class Transport {
 public:
  // Its packets carry PSNs, acknowledgements and echoes in their transport lines.
  Transport() { PacketPool::global().enable_transport(); }
  virtual ~Transport() = default;
  // A new data packet (one MTU or less) for endpoint `dst`, in message order.
  virtual void enqueue(uint32_t dst, Packet* p) = 0;
  // The next data packet for the wire, or nullptr. When nothing may go now but something
  // may later without another event (pacing), sets *retry_at to that time.
  virtual Packet* next(uint64_t* retry_at) = 0;
  // The packet next() returned has started on the wire now (its tx_ps is set).
  virtual void sent(Packet* p) = 0;
  // A transport packet from the network: data, ack, NACK, CNP or credit.
  virtual void receive(Packet* p) = 0;
  virtual void on_timer() = 0;
  virtual void add_stats(nlohmann::json& j) const = 0;
  virtual void add_to_ledger(PacketLedger& l) const = 0;
  // Data packets queued or not yet acknowledged (the deadlock report).
  virtual uint64_t in_flight() const = 0;

  // Independent measurements (DeviceModel::idle_at, reset_dynamic_state), asked once no
  // packet is in flight and in_flight() is 0. idle_at: the time by which every timer
  // whose expiry still does something has fired (0: none; a retransmission timer of a
  // packet already acknowledged does nothing and does not count). reset: the transport
  // as it was built (its connections, congestion control, sequence numbers, entropy
  // streams and timers), keeping its statistics and ledger counts; the NIC withdraws its
  // timer wake-ups.
  virtual uint64_t idle_at() const { return 0; }
  virtual void reset() = 0;
};

}  // namespace fabricsim
