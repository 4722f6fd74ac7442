// Device kinds: the plug-in seam for everything a config can instantiate under
// `device_types:` (an accelerator's fabric interface, a switch, a PCIe root complex; a NIC
// or an optical circuit switch next). A kind declares itself from its own folder
// (models/<family>/<kind>_kind.cpp) and is added to device_kinds() by one line in
// fabrics/plugins.cpp. The rest of the simulator never asks "is it a switch": it asks the
// kind what it does (forwards, terminal), what ports a device type of it has and in which
// roles, whether a built system suits it (check), and to build its model (create).
//
// This header is plain C++ (no SystemC, no YAML): the config layer reads kinds through it.
// The model a kind creates is a DeviceModel (models/core/device_model.h, SystemC).
#pragma once
#include <any>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/core/param_spec.h"
#include "models/core/registry.h"
#include "models/core/types.h"

namespace fabricsim {

class DeviceModel;
struct LinkParams;

// Ports of one role, numbered after the groups before it (an endpoint: `fabric` ports
// 0..ports-1, then its `NIC` ports).
struct PortGroup {
  std::string role;      // "fabric", "NIC": the word error messages use
  int count = 0;
  std::string protocol;  // what a link on these ports must carry
};

struct DeviceKind;

// A device type: one entry under `device_types:`, a kind with its parameters resolved.
struct DeviceType {
  std::string name;                 // its key under device_types ("nvswitch3")
  const DeviceKind* kind = nullptr;
  std::vector<std::any> params;     // one params object per block of kind->params
  std::vector<PortGroup> port_groups;
  int ports = 0;                    // all ports, every group

  // Params object of block `block` (0: the kind's own).
  template <class T>
  const T& get(size_t block = 0) const {
    return std::any_cast<const T&>(params.at(block));
  }
  // Params object of the block called `block_name` (a feature's: "nvls", "host_path"), or
  // nullptr if the kind takes no such block.
  template <class T>
  const T* find(const std::string& block_name) const {
    const int i = block_index(block_name);
    return i < 0 ? nullptr : &get<T>(size_t(i));
  }
  int block_index(const std::string& block_name) const;
  // The group port `port` belongs to, and its index there.
  const PortGroup& group_of(int port) const;
  const std::string& port_protocol(int port) const { return group_of(port).protocol; }
  // Ports of the given role (0 if the kind has no such group).
  int ports_with_role(const std::string& role) const;
};

// Run-wide settings a model may need when it is built (the `simulation:` section and the
// seed).
struct RunSettings {
  uint64_t seed = 0;
  uint64_t aggregate_bytes = 0;
  uint64_t aggregate_min_message = 0;
  uint64_t aggregate_min_group_message = UINT64_MAX;  // in-switch group messages
  PacketTurns aggregate_round_robin_packets = PacketTurns::kNone;  // shared turns of a packet
  bool aggregate_fair_completion = false;  // last packets at their processor-sharing finish
};

// One device of a built system, as a kind's check sees it: its links and their peers,
// and the two ways to report a problem at its source.
class DeviceCheck {
 public:
  struct Attached {
    int port;                      // this device's port
    const std::string& link_type;  // its link type's name
    const LinkParams& link;
    const std::string& peer;       // the device at the other end
    const DeviceType& peer_type;
  };
  virtual ~DeviceCheck() = default;
  virtual const std::string& device() const = 0;  // instance name ("sw0")
  // The topology generator's coordinates of the device (DeviceBuild::coords), or none.
  virtual const std::vector<int>& coords() const = 0;
  virtual const DeviceType& type() const = 0;
  virtual const std::vector<Attached>& links() const = 0;
  // At `key` of the device type (device_types.NAME.key).
  [[noreturn]] virtual void fail_param(const std::string& key, const std::string& problem,
                                       const std::string& hint) const = 0;
  // Where links()[i] was declared (key path "topology").
  [[noreturn]] virtual void fail_link(size_t i, const std::string& problem,
                                      const std::string& hint) const = 0;
};

// What a kind's factory gets to build one device's model.
struct DeviceBuild {
  const std::string& name;            // instance name ("gpu3"), also its sc_module name
  const DeviceType& type;
  int endpoint_id;                    // terminal kinds: its endpoint id; else -1
  const std::vector<int>& used_ports;  // the ports that will be bound
  const RunSettings& run;
  const std::vector<int>& coords;     // the topology generator's coordinates (or none)
};

// A device's power for the energy of a row (docs/optical.md, "Energy"): static watts
// while the system runs, and picojoules per wire bit it sends out of its ports.
struct DevicePower {
  double static_w = 0;
  double pj_per_bit = 0;
};

// The `power` block that forwarding and NIC kinds take (keys static_power, energy_per_bit).
struct PowerParams {
  double static_power_w = 0;
  double energy_pj_per_bit = 0;
};
const ParamBlock& power_params();
// The power of a device type whose kind takes the `power` block (else zero).
DevicePower power_from_block(const DeviceType& t);

struct DeviceKind {
  std::string name;     // the `type:` written under device_types
  std::string summary;  // one line for `fabricsim describe`
  // Relays traffic between its ports: routes pass through devices of forwarding kinds only.
  bool forwards = false;
  // Sources and sinks traffic: gets an endpoint id (declaration order) and may be a rank;
  // its model's rank_interface() drives collectives.
  bool terminal = false;
  // Its parameter blocks, in order: its own, then those of the features it takes. A
  // device type holds one params object per block; `fabricsim describe` lists the keys
  // of every block in this order.
  std::vector<ParamBlock> params;
  // The port groups of a device type (params resolved, port_groups still empty).
  std::function<std::vector<PortGroup>(const DeviceType&)> ports;
  // Checks one device of a built system (optional): links, peers, class limits.
  std::function<void(const DeviceCheck&)> check = {};
  // Circuit devices only (an optical circuit switch; empty for every other kind): the
  // device's circuit map from its type and the generator's coordinates, map[p] = the port
  // that port p is joined to by light, or -1 (dark). Such a device neither forwards nor
  // terminates: routes, peers and path walks see the device at the far end of a circuit
  // (topo::Graph::peer), its links are bound as usual and its model passes light through.
  std::function<std::vector<int>(const DeviceType&, const std::vector<int>& coords)> circuits =
      {};
  // Its power (optional; none: no energy), for the energy of each row.
  std::function<DevicePower(const DeviceType&)> power = {};
  // Builds the device's model (SystemC).
  std::function<std::unique_ptr<DeviceModel>(const DeviceBuild&)> create;
  // Its devices can fail as a whole (a switch_down fault): its model implements
  // DeviceModel::fail and recover.
  bool can_fail = false;
  // Memory its model holds beyond its ports, in bytes, for the estimate made before a run
  // (fabrics/systems/estimate.h; e.g. a switch's virtual output queues grow as ports^2).
  // Optional: a few KiB per device otherwise.
  std::function<double(const DeviceType&)> model_bytes = {};
};

Registry<DeviceKind>& device_kinds();

}  // namespace fabricsim
