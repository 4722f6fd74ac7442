// A switched node's wiring, shared by the generators that build nodes (switched_node,
// multi_node).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "fabrics/topologies/builder.h"

namespace fabricsim::topo {

// Links endpoint g's ports, in order, lps[s] of them to switch s, at that switch's ports
// g * lps[s] .. g * lps[s] + lps[s] - 1.
void wire_switched_node(Builder& b, const std::vector<int>& endpoints,
                        const std::vector<int>& switches, const std::vector<int64_t>& lps,
                        const std::string& link_type, const LinkSite& site);

}  // namespace fabricsim::topo
