// Elaboration: SystemSpec (plain data) -> one model per device, built by its kind, with
// bound sockets, routing tables and statistics registered under the names the user wrote.
#pragma once
#include <memory>
#include <vector>

#include "fabrics/systems/system_spec.h"
#include "models/collectives/engine.h"
#include "models/core/device_model.h"
#include "models/core/stats.h"
#include "models/link/port.h"

namespace fabricsim {

class FaultManager;

class System {
 public:
  explicit System(const SystemSpec& spec);
  ~System();

  std::vector<Endpoint*> ranks() const;   // rank interfaces in rank order
  // Every device's model, in graph order.
  const std::vector<std::unique_ptr<DeviceModel>>& devices() const { return devices_; }
  CollectiveEngine& engine() { return *engine_; }
  // {name: counters} for every port ("sw0.port[3]") and device.
  nlohmann::json stats(uint64_t now_ps) const { return stats_.dump(now_ps); }
  // The same, one name at a time (StatsRegistry::find).
  const StatsRegistry& stats_registry() const { return stats_; }
  // Totals over every port: transactions and packets that crossed a link.
  uint64_t transaction_hops() const;
  uint64_t packet_hops() const;
  uint64_t payload_bytes_moved() const;
  // Link-level retry counters summed over every port (crc_errors, replays, ...).
  Port::Counters retry_totals() const;
  // Payload bytes put into / taken out of the fabric, summed over every device (equal at
  // the end of a run), and messages still in flight.
  uint64_t payload_sourced() const;
  uint64_t payload_sunk() const;
  uint64_t messages_in_flight() const;
  // Independent measurements (DeviceModel::idle_at, reset_dynamic_state): when every
  // device is idle once no packet is in flight, and the reset of them all.
  uint64_t idle_at() const;
  void reset_dynamic_state();
  // Lossy fabrics: what every device injected, received, dropped, trimmed, retransmitted.
  PacketLedger ledger() const;
  // Ports whose transmitter waits for credits, oldest wait first (at most `max`), as
  // "gpu0.port[3] (since 1.2us)": for the deadlock report.
  std::vector<std::string> credit_waits(size_t max) const;
  // End of a finished run: "" if every port has all its credits and an empty replay
  // buffer (Port::credits_check), else the first port that has not.
  std::string credits_check() const;

  // Faults (fabrics/sim/faults.h; nullptr without a `faults:` section).
  FaultManager* faults() { return faults_.get(); }
  const FaultManager* faults() const { return faults_.get(); }
  // Port `side` (0: a, 1: b) of graph link `link`; the links of a device; every port.
  Port& link_port(int link, int side) { return *(side ? link_ports_[size_t(link)].second
                                                      : link_ports_[size_t(link)].first); }
  const std::vector<int>& links_of(int device) const { return links_of_.at(size_t(device)); }
  const std::vector<Port*>& ports() const { return all_ports_; }
  Endpoint* endpoint(uint32_t id) const {
    return id < by_endpoint_id_.size() ? by_endpoint_id_[id] : nullptr;
  }
  std::string link_name(int link) const;  // "gpu0.port[3]-sw0.port[3]"
  // Routes computed without the links marked in `down` (per graph link), given to every
  // device.
  void install_routes(const std::vector<char>& down);
  // "gpu0 (rank 0) has no path to gpu5 (rank 5)" for the first pair of ranks the links
  // marked in `down` separate, or "".
  std::string unreachable_ranks(const std::vector<char>& down) const;
  // An optical circuit switch's new circuit map (a reconfiguration, docs/optical.md): the
  // graph routes are computed on sees through the new circuits from now on.
  void set_circuit(int device, std::vector<int> map);
  // The graph as it is now: the config's, or with the circuit maps reconfigurations set.
  const topo::Graph& graph() const { return live_graph_ ? *live_graph_ : spec_.graph; }

 private:
  void set_path_latencies(const topo::Routes& routes);

  const SystemSpec& spec_;
  std::vector<std::unique_ptr<DeviceModel>> devices_;  // by graph device index
  std::vector<Endpoint*> by_endpoint_id_;
  std::vector<Port*> all_ports_;
  StatsRegistry stats_;  // every port and device under its user-facing name
  std::unique_ptr<CollectiveEngine> engine_;
  std::vector<std::pair<Port*, Port*>> link_ports_;  // by graph link index
  std::vector<std::vector<int>> links_of_;          // by device: its graph links
  std::unique_ptr<FaultManager> faults_;
  std::unique_ptr<topo::Graph> live_graph_;  // set by the first set_circuit
};

}  // namespace fabricsim
