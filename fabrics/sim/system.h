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

class System {
 public:
  explicit System(const SystemSpec& spec);

  std::vector<Endpoint*> ranks() const;   // rank interfaces in rank order
  // Every device's model, in graph order.
  const std::vector<std::unique_ptr<DeviceModel>>& devices() const { return devices_; }
  CollectiveEngine& engine() { return *engine_; }
  // {name: counters} for every port ("sw0.port[3]") and device.
  nlohmann::json stats(uint64_t now_ps) const { return stats_.dump(now_ps); }
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

 private:
  void set_path_latencies(const topo::Routes& routes);

  const SystemSpec& spec_;
  std::vector<std::unique_ptr<DeviceModel>> devices_;  // by graph device index
  std::vector<Endpoint*> by_endpoint_id_;
  std::vector<Port*> all_ports_;
  StatsRegistry stats_;  // every port and device under its user-facing name
  std::unique_ptr<CollectiveEngine> engine_;
};

}  // namespace fabricsim
