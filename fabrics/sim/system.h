// Elaboration: SystemSpec (plain data) -> sc_modules with bound sockets, routing tables
// and statistics registered under the names the user wrote.
#pragma once
#include <memory>
#include <vector>

#include "fabrics/systems/system_spec.h"
#include "models/collectives/engine.h"
#include "models/core/stats.h"
#include "models/endpoint/endpoint.h"
#include "models/switch/switch.h"

namespace fabricsim {

class System {
 public:
  explicit System(const SystemSpec& spec);

  std::vector<Endpoint*> ranks() const;   // endpoints in rank order
  const std::vector<std::unique_ptr<Endpoint>>& endpoints() const { return endpoints_; }
  const std::vector<std::unique_ptr<Switch>>& switches() const { return switches_; }
  CollectiveEngine& engine() { return *engine_; }
  // {name: counters} for every port ("sw0.port[3]"), endpoint and switch.
  nlohmann::json stats(uint64_t now_ps) const { return stats_.dump(now_ps); }
  // Totals over every port: transactions and packets that crossed a link.
  uint64_t transaction_hops() const;
  uint64_t packet_hops() const;
  uint64_t payload_bytes_moved() const;
  // Link-level retry counters summed over every port (crc_errors, replays, ...).
  Port::Counters retry_totals() const;

 private:
  const SystemSpec& spec_;
  std::vector<std::unique_ptr<Endpoint>> endpoints_;   // by endpoint id
  std::vector<std::unique_ptr<Switch>> switches_;
  std::vector<Port*> all_ports_;
  StatsRegistry stats_;  // every port, endpoint and switch under its user-facing name
  std::unique_ptr<CollectiveEngine> engine_;
};

}  // namespace fabricsim
