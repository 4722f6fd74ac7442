// What every NIC device kind shares: the NIC frame's parameter block and a kind built from
// it plus a transport's own block and factory (models/uec/uec_nic_kind.cpp,
// models/roce/roce_nic_kind.cpp). Plain C++ (the model is built through a factory).
#pragma once
#include <any>
#include <functional>
#include <memory>
#include <string>

#include "models/core/device_kind.h"
#include "models/nic/nic_params.h"

namespace fabricsim {

class Transport;
class NicServices;

// The NIC frame's keys with the transport's defaults: its retransmission timeout and its
// data's traffic class.
ParamBlock nic_params_block(const std::string& rto_default, const std::string& tc_default);

// The transport of a device type: built per NIC from its own params object (`block` of
// the device type: DeviceType::params[1]) and the NIC's services.
using TransportFactory =
    std::function<std::unique_ptr<Transport>(const std::any& params, NicServices& nic)>;

// A NIC kind: host ports (role "host") + one network port (role "network"); forwards (routes
// to the accelerators behind it pass through it), not terminal. Its check: the network
// port is linked, and the network link frames the NIC's packets (header_bytes holds the
// L3 headers plus Ethernet's, packet_payload is the MSS).
DeviceKind nic_device_kind(std::string name, std::string summary, ParamBlock transport_block,
                           TransportFactory make, const std::string& rto_default,
                           const std::string& tc_default);

}  // namespace fabricsim
