// The running model of one device, as the elaborator (fabrics/sim/system.h) and the
// end-of-run accounting see it: whatever its kind (models/core/device_kind.h) built. The
// model is an sc_module of its own; this interface is what the generic code may ask.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/core/ledger.h"

namespace fabricsim {

class Endpoint;
class LossHandler;
class Port;

class DeviceModel {
 public:
  virtual ~DeviceModel() = default;

  virtual const std::string& display_name() const = 0;
  // Port `i` (one of the used ports it was built with).
  virtual Port& port(int i) = 0;
  // routes[dst endpoint id] = its ports on a shortest path to that endpoint.
  virtual void set_routes(const std::vector<std::vector<int>>& routes) = 0;

  // The device at the other end of one of its ports, once every link is bound.
  struct Peer {
    int port = -1;                 // this device's port
    DeviceModel* model = nullptr;  // the peer
    int device = -1;               // the peer's index in the system graph
    int peer_port = -1;            // the peer's port
    int endpoint_id = -1;          // the peer's endpoint id, -1 if not terminal
  };
  // Elaboration hook, called once per device after every link is bound and every route is
  // set, with its peers in port order (e.g. in-switch collectives find their members).
  // Devices learn here; a question to a peer about what it learned belongs in
  // end_of_elaboration, when every device has been connected.
  virtual void connected(const std::vector<Peer>& peers) { (void)peers; }
  // True if traffic entering this device on `port` can use in-network collectives (an
  // NVLS switch: reduction and multicast); an endpoint sends its group operations there.
  // Valid once this device has been connected.
  virtual bool in_network_collectives(int port) const {
    (void)port;
    return false;
  }

  // Devices whose policy scales with their paths (a NIC's congestion control): true to be
  // told, once connected, the unloaded one-way latency to every endpoint along their
  // routes (set_path_latencies: link latencies, ingress pipelines and the serialisation of
  // a full packet, `data_ps`, or of a header-only one, `control_ps`, at every hop).
  virtual bool wants_path_latencies() const { return false; }
  struct PathLatency {
    uint64_t data_ps = 0, control_ps = 0;
  };
  virtual void set_path_latencies(const std::vector<PathLatency>& to_endpoint) {
    (void)to_endpoint;
  }

  // Its statistics: the device's own counters (ports are registered separately).
  virtual nlohmann::json stats_json(uint64_t now_ps) const = 0;
  // Payload bytes it put into the fabric and took out of it: at the end of a run the sums
  // over every device must be equal (every byte sent was delivered or absorbed).
  virtual uint64_t payload_sourced() const { return 0; }
  virtual uint64_t payload_sunk() const { return 0; }
  // Lossy fabrics: adds what it injected, received, dropped, trimmed and retransmitted to
  // the end-of-run packet ledger (models/core/ledger.h). Lossless devices add nothing.
  virtual void add_to_ledger(PacketLedger& l) const { (void)l; }
  // Messages it is still sending or receiving (for the deadlock report).
  virtual uint64_t messages_in_flight() const { return 0; }
  // Terminal kinds: the fabric interface that collective programs drive.
  virtual Endpoint* rank_interface() { return nullptr; }

  // Independent measurements (the rows of a size sweep). Once no packet is in flight:
  // the time by which everything the device owes has happened (every credit and ack
  // returned, every transmitter free), and then, at or after that time, a reset of its
  // dynamic state (credits, carried serialisation remainders, arbiter pointers, routing
  // rotations, protocol turns) to what it was when built, so that the next row runs as
  // it would alone. Bit-error streams (ber > 0) are not reset: they continue.
  virtual uint64_t idle_at() const { return 0; }
  virtual void reset_dynamic_state() {}
  // Faults (docs/architecture.md, "Faults"), for kinds whose DeviceKind::can_fail is set:
  // the device fails now (its links are already down): every transaction it holds is
  // lost, each handed to `loss` with the recovery of the port it came in on; recover():
  // it works again, empty (its links come up separately).
  virtual void fail(LossHandler& loss) { (void)loss; }
  virtual void recover() {}
  // Transactions it holds because no route leads to their destination (after a fault),
  // for the report of a run that cannot finish.
  virtual uint64_t stranded() const { return 0; }
};

}  // namespace fabricsim
