// The scale-out NIC frame: a device between accelerators (its host ports: a PCIe-like link
// from each GPU) and the network (its one network port), running a transport
// (models/nic/transport.h) on the network side.
//
// Send side: an accelerator's DMA writes a message's transactions to the host port (the
// NIC reads the message from GPU memory); the NIC takes them into its send buffer, whose
// space returns the host link's credits (a full buffer backpressures the GPU), and cuts
// each message's contiguous bytes into packets of one MSS (MTU - L3 headers) for the
// transport, which sequences, paces and retransmits them.
// Receive side: data the transport delivers goes to the destination's host port as one
// host-link transaction per network packet; control packets the transport sends go out of
// a control queue ahead of data. A link partner's pause frame pauses the NIC's data class.
// Devices of this kind forward (routes pass through them) but are not endpoints: packets
// are addressed to accelerators, and the NIC serving the destination takes them.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "models/core/device_model.h"
#include "models/core/fifo.h"
#include "models/core/stats.h"
#include "models/link/port.h"
#include "models/nic/nic_params.h"
#include "models/nic/transport.h"

namespace fabricsim {

class Nic : public sc_core::sc_module,
            public PortOwner,
            public DeviceModel,
            public Wakeable,
            public NicServices {
 public:
  using MakeTransport = std::function<std::unique_ptr<Transport>(NicServices&)>;
  Nic(sc_core::sc_module_name n, std::string display_name, const NicParams& p,
      const std::vector<int>& used_ports, const MakeTransport& make);

  // DeviceModel
  const std::string& display_name() const override { return display_name_; }
  Port& port(int i) override { return *ports_.at(size_t(i)); }
  void set_routes(const std::vector<std::vector<int>>& routes) override;
  nlohmann::json stats_json(uint64_t now_ps) const override;
  uint64_t payload_sourced() const override { return emitted_; }
  uint64_t payload_sunk() const override { return absorbed_; }
  void add_to_ledger(PacketLedger& l) const override;
  bool wants_path_latencies() const override { return true; }
  void set_path_latencies(const std::vector<PathLatency>& to_endpoint) override {
    path_ = to_endpoint;
  }
  uint64_t messages_in_flight() const override {
    return (transport_ ? transport_->in_flight() : 0) + held_.size();
  }
  // Independent measurements: idle once every port is (its transmitter free, every credit
  // back) and no transport timer still matters; the reset restores the ports and the
  // transport as built and withdraws the NIC's wake-ups, keeping statistics and the
  // packet ledger's counts (nic.cpp says what is kept).
  uint64_t idle_at() const override;
  void reset_dynamic_state() override;

  // PortOwner
  Packet* tx_peek(int port) override;
  void tx_pop(int port, Packet* p) override;
  void rx_arrive(int port, Packet* p) override;
  void wake(uint32_t what) override;
  // Faults: a transaction a failed host link cut and its replay kept goes out on that port
  // again once it is up (the NIC has no other way to its accelerator); on the network port
  // (a link with replay) it goes out again ahead of the transport's traffic.
  void tx_recover(int port, Packet* p) override;

  // NicServices
  uint64_t now() const override { return Scheduler::now(); }
  const NicParams& params() const override { return p_; }
  const std::string& name() const override { return display_name_; }
  uint64_t line_rate_bps() const override { return ports_[size_t(net_)]->link().rate_bps; }
  uint32_t endpoints() const override { return uint32_t(host_route_.size()); }
  uint64_t path_rtt_ps(uint32_t dst) const override {
    return dst < path_.size() ? path_[dst].data_ps + path_[dst].control_ps : 0;
  }
  void deliver(Packet* p) override;
  uint64_t host_backlog(uint32_t dst) const override;
  void absorb(Packet* p) override;
  void send_control(Packet* p) override;
  Packet* acquire() override;
  Packet* recreate(const PacketWithTransport& copy) override;
  void first_sent(uint32_t payload_bytes) override;
  void kick() override { ports_[size_t(net_)]->kick(); }
  void wake_at(uint64_t t_ps) override { Scheduler::instance().set(timer_, t_ps); }

  Transport& transport() { return *transport_; }

 private:
  enum : uint32_t { kTimer, kResume };
  // A message being cut into packets: bytes [next, end) arrived and are not cut yet.
  struct Partial {
    Packet proto;  // identity fields of the message (from its first transaction)
    uint64_t next = 0, end = 0;
  };
  void end_of_elaboration() override;
  void host_arrive(int port, Packet* p);
  bool accept(Packet* p);
  void cut(Partial& s, bool flush);
  void net_arrive(Packet* p);

  std::string display_name_;
  NicParams p_;
  int net_;  // the network port: host_ports
  std::vector<std::unique_ptr<Port>> ports_;
  MakeTransport make_;
  std::unique_ptr<Transport> transport_;  // made at the end of elaboration
  std::vector<int> host_route_;         // [dst endpoint] -> host port, -1: over the network
  std::vector<PathLatency> path_;       // [dst endpoint] unloaded one-way latencies
  std::vector<uint32_t> host_payload_;  // [host port] packet payload of its link
  std::vector<Fifo<Packet*>> host_q_;   // [host port] transactions to the accelerator
  std::vector<uint64_t> host_q_bytes_;  // [host port] their payload
  Fifo<Packet*> ctl_;                   // control packets for the network port
  Fifo<Packet*> recovered_;             // faults: network transactions to send again
  Packet* staged_ = nullptr;            // data packet the network port was offered
  Fifo<std::pair<int, Packet*>> held_;  // host transactions waiting for send-buffer space
  std::vector<Partial> partials_;
  uint64_t buffered_ = 0;               // payload in the send buffer (cut, not sent once)
  Alarm timer_, resume_;
  LevelStat send_buffer_;
  uint64_t emitted_ = 0, absorbed_ = 0;
  uint64_t host_rx_bytes_ = 0, host_tx_bytes_ = 0;
  uint64_t injected_ = 0, received_ = 0, data_sent_ = 0, control_sent_ = 0;
};

}  // namespace fabricsim
