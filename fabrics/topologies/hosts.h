// Scale-out hosts, shared by the generators of Ethernet and InfiniBand clusters (fat_tree,
// dragonfly): an endpoint, optionally behind a NIC device. Plain C++.
#pragma once
#include <string>

#include "fabrics/topologies/builder.h"

namespace fabricsim::topo {

// How a generator builds its hosts, from its parameters endpoint_type, nic_type (a NIC
// device kind, or "none": the endpoint's own port goes to the network) and host_link_type
// (endpoint - NIC).
struct HostSpec {
  std::string endpoint_type, nic_type, host_link_type;
  bool with_nic() const { return nic_type != "none"; }
};

// The host parameters a generator declares.
std::vector<ParamSpec> host_params();
// Reads and checks them: the endpoint has exactly one port (its link to the NIC or the
// network), the NIC kind has one host port in use.
HostSpec host_spec(const cfg::Params& p, Builder& b);
// Adds host `i` (h<i>, and nic<i> with a NIC); returns the port that faces the network.
LinkEnd add_host(Builder& b, const HostSpec& h, int i, const LinkSite& site);

}  // namespace fabricsim::topo
