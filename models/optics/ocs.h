// A MEMS optical circuit switch (OCS): N x N duplex ports joined in pairs by a circuit map
// (port a <-> port b), no buffering, no packet processing. Light entering port a leaves
// port b after a fixed pass latency (mirror path): a transaction keeps its head and tail
// times, so a circuit behaves as one longer link (fibre + pass + fibre) between the two
// devices it joins, with end-to-end credit flow: the credits the receiver returns travel
// back through the circuit to the sender (the OCS holds no buffer of its own). A port
// without a circuit is dark. docs/optical.md.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "models/core/device_model.h"
#include "models/core/fifo.h"
#include "models/link/port.h"

namespace fabricsim {

struct OcsParams {
  std::string protocol;
  int ports = 0;
  uint64_t pass_latency_ps = 0;
  std::vector<int64_t> circuits;  // pairs: [a0, b0, a1, b1, ...]
  double insertion_loss_db = 0, connector_loss_db = 0;
  int connectors = 0;
  double fibre_loss_db_per_km = 0, fibre_length_m = 0;
  double launch_power_dbm = 0, rx_sensitivity_dbm = 0, margin_db = 0;
  double power_per_port_w = 0;
  uint64_t reconfiguration_ps = 0;  // a changed circuit's dark time while mirrors move
  std::string reconfiguration_mode;  // drain | immediate (no drain; cut what is in flight)
  bool immediate() const { return reconfiguration_mode == "immediate"; }
  std::vector<int> map;  // derived from circuits: map[p] = joined port or -1

  // Optical loss of one circuit, transmitter to receiver (dB): one OCS pass, the
  // connectors and two fibre runs.
  double path_loss_db() const {
    return insertion_loss_db + connectors * connector_loss_db +
           2.0 * fibre_length_m / 1000.0 * fibre_loss_db_per_km;
  }
  double received_dbm() const { return launch_power_dbm - path_loss_db(); }
  double power_w() const { return power_per_port_w * ports; }
};

// Circuit map from pairs: map[p] = q for every pair (p, q), -1 elsewhere. Returns the index
// in `pairs` of the first element that names a port already named (or out of range), or
// -1 if the map is good.
int circuit_map(const std::vector<int64_t>& pairs, int ports, std::vector<int>& map);

class Ocs : public sc_core::sc_module, public PortOwner, public DeviceModel {
 public:
  Ocs(sc_core::sc_module_name n, std::string name, const OcsParams& p,
      const std::vector<int>& used, std::vector<int> map);

  const std::string& display_name() const override { return name_; }
  Port& port(int i) override { return *ports_.at(size_t(i)); }
  void set_routes(const std::vector<std::vector<int>>&) override {}  // light goes where it is sent
  void connected(const std::vector<Peer>& peers) override;
  nlohmann::json stats_json(uint64_t now_ps) const override;

  // No port ever transmits or receives on its own: LightPort passes what arrives.
  Packet* tx_peek(int) override { return nullptr; }
  void tx_pop(int, Packet*) override {}
  void rx_arrive(int, Packet*) override {}

  const std::vector<int>& circuit_map() const { return map_; }
  int lit_circuits() const;
  uint64_t reconfiguration_ps() const { return params_.reconfiguration_ps; }
  uint64_t pass_latency_ps() const { return params_.pass_latency_ps; }

  // Reconfiguration (docs/optical.md; played by the fault manager, fabrics/sim/faults.h).
  // When the last light sent into port `p` has passed the mirrors (its tail at the sender
  // plus the fibre; 0: none yet).
  uint64_t last_light_ps(int p) const { return last_light_[size_t(p)]; }
  // The mirrors of `ports` start moving now: those ports are dark (light into them is an
  // internal error) until set_map() lights the new map. Credits of transactions that went
  // through their old circuits still travel back to the senders that sent them.
  void go_dark(const std::vector<int>& ports);
  // The new map is lit (its ports, changed or not, as in `map`).
  void set_map(const std::vector<int>& map);
  // Immediate switch: `n` transactions that left by port `out` were cut before reaching
  // its receiver, which will return no credits for them (the newest ones).
  void forget_owed(int out, uint64_t n);
  // Light that passed the switch, per input port (payload bytes).
  uint64_t passed_bytes(int p) const { return passed_[size_t(p)].bytes; }

 private:
  // An OCS port: a Port whose receive side passes light on instead of queuing it.
  class LightPort : public Port {
   public:
    LightPort(sc_core::sc_module_name n, std::string display, Ocs* ocs, int index)
        : Port(n, std::move(display), ocs, index, /*rx_at_head=*/true), ocs_(ocs), index_(index) {}
    tlm::tlm_sync_enum nb_transport_fw(Packet& p, Phase& ph, sc_core::sc_time& d) override {
      ocs_->pass(index_, p, ph, d);
      return tlm::TLM_ACCEPTED;
    }
    tlm::tlm_sync_enum nb_transport_bw(Packet& p, Phase& ph, sc_core::sc_time& d) override {
      ocs_->relay_credit(index_, p, ph, d);
      return tlm::TLM_ACCEPTED;
    }

   private:
    Ocs* ocs_;
    int index_;
  };

  void pass(int in, Packet& p, tlm::tlm_phase& ph, sc_core::sc_time& d);
  void relay_credit(int out, Packet& p, tlm::tlm_phase& ph, sc_core::sc_time& d);

  std::string name_;
  OcsParams params_;
  std::vector<int> map_;
  std::vector<std::unique_ptr<LightPort>> ports_;  // by port number (nullptr: unused)
  std::vector<char> far_credit_free_;  // the device behind port p returns no credits
  struct Passed {
    uint64_t bytes = 0, packets = 0;
  };
  std::vector<Passed> passed_;  // per input port
  std::vector<uint64_t> last_light_;  // per input port: its last light's tail at the mirrors
  // Per output port: the input ports of the transactions that left by it and whose credits
  // have not come back yet, as runs (credits return in order): a receiver's credits go
  // back to the sender of the transaction, even after the circuit changed.
  struct Run {
    int in;
    uint64_t count;
  };
  std::vector<Fifo<Run>> owed_;
  int reconfigurations_ = 0;
};

}  // namespace fabricsim
