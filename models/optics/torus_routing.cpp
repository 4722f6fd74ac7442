// Torus routing as a switch feature (kRoute, kCrossbarGate) of the torus routers of
// tpu_pod (fabrics/topologies/tpu_pod.cpp: ports 0..5 = +x, -x, +y, -y, +z, -z, a link
// from a router's +d port ending at its neighbour's -d port; then the local links).
//  * shortest (default): off; the frame's shortest paths, adaptive among equal ones.
//  * dimension_order: x, then y, then z. The route is the lowest-numbered of the frame's
//    shortest-path ports to the destination: on the torus these are the ports of every
//    dimension in which the destination differs (a shortest path may correct any of them
//    first), in the direction(s) that shorten that ring, so the lowest one corrects x
//    first, then y, then z; a tie across a ring (half way round) takes +. No packet
//    turns back to a lower dimension, so the dimensions' channel dependencies are acyclic
//    (x -> y -> z -> the chip, which always takes what arrives).
//    Within a ring, bubble flow control keeps the ring's own credit cycle from closing:
//    a packet entering a ring (from the chip, or turning from a lower dimension) may
//    cross into the ring's egress queue only if that queue, after it, still has room for
//    another transaction as large (egress_buffer - queued >= 2 x its payload); a packet
//    going straight on along the ring (in on -d, out on +d, or in on +d, out on -d) needs
//    only the frame's own condition. Every ring therefore always keeps a free transaction
//    slot that only packets already on it can fill, and one of them can always move
//    (Carrion, Izu, Puente et al., "bubble flow control", HiPC 1997 / IEEE TPDS 2001). It
//    is the dateline-free alternative to two virtual channels per ring: the crossbar
//    frame has one egress queue and one input buffer per port (no per-VC queues), so
//    datelines would need a VC-aware frame (docs/optical.md, "Routing on the torus").
//    On a twisted torus (tpu_pod twisted: true) the same rule is a minimal dimension-order
//    route (the frame's shortest paths see through the twisted circuits) and each
//    dimension's links still form rings, of 2q: the argument holds unchanged
//    (docs/optical.md, "Twisted tori").
#include <algorithm>
#include <memory>
#include <string>

#include "models/core/device_kind.h"
#include "models/switch/feature.h"
#include "models/switch/switch_params.h"
#include "models/switch/switch_kind.h"

namespace fabricsim {

namespace {

struct TorusRoutingParams {
  std::string routing;  // "shortest" | "dimension_order"
};

class TorusDimensionOrder final : public SwitchFeature {
 public:
  const char* name() const override { return "torus_routing"; }
  unsigned hooks() const override { return kRoute | kCrossbarGate; }

  int route(int in, Packet& p) override {
    (void)in;
    const SwitchFrame::PortList c = frame().routes(p.dst);
    if (c.empty() || c[0] >= 6) return -1;  // to the chip (or no route): the frame's choice
    int best = c[0];
    for (int o : c) best = std::min(best, o);
    ++routed_;
    return best;
  }

  bool may_cross(int in, int out, const Packet& p) override {
    if (out >= 6) return true;                              // to the chip: leaves the rings
    if (in < 6 && in / 2 == out / 2 && in != out) return true;  // straight on along the ring
    const uint64_t queued = frame().egress_bytes(out), cap = frame().egress_buffer();
    if (queued + 2 * uint64_t(p.payload_bytes) <= cap) return true;
    ++held_;
    return false;
  }

  void add_stats(nlohmann::json& j, uint64_t) const override {
    j["torus_routing"] = {{"routing", "dimension_order"},
                          {"routed_transactions", routed_},
                          {"bubble_holds", held_}};
  }

 private:
  uint64_t routed_ = 0, held_ = 0;
};

}  // namespace

SwitchFeatureKind torus_routing_feature() {
  SwitchFeatureKind f;
  f.name = "torus_routing";
  f.params = param_block<TorusRoutingParams>(
      "torus_routing",
      {bind(choice("torus_routing", {"shortest", "dimension_order"}, "shortest",
                   "Routing of a tpu_pod torus router: shortest (the frame's shortest paths, "
                   "route_select among them; traffic beyond neighbours can deadlock on the "
                   "rings) or dimension_order (x, then y, then z, with bubble flow control "
                   "on each ring: deadlock-free; docs/optical.md \"Routing on the torus\")."),
            &TorusRoutingParams::routing)});
  f.check = [](const DeviceCheck& c, const std::any& p) {
    const TorusRoutingParams& t = std::any_cast<const TorusRoutingParams&>(p);
    if (t.routing == "shortest") return;
    const SwitchParams& sw = c.type().get<SwitchParams>();
    // A spare cube's routers (outside the slice) have no coordinates and carry nothing.
    if ((c.coords().size() != 6 && !c.coords().empty()) || sw.ports < 6 ||
        sw.input_queues == "output")
      c.fail_param("torus_routing",
                   "torus_routing: " + t.routing + " on " + c.device() +
                       ", which is not a router of a tpu_pod slice (a crossbar switch whose "
                       "ports 0..5 are +x, -x, +y, -y, +z, -z)",
                   "use it on the router_type of a tpu_pod topology, or torus_routing: shortest");
  };
  f.create = [](const std::any& p) -> std::unique_ptr<SwitchFeature> {
    const TorusRoutingParams& t = std::any_cast<const TorusRoutingParams&>(p);
    if (t.routing == "shortest") return nullptr;
    return std::make_unique<TorusDimensionOrder>();
  };
  return f;
}

}  // namespace fabricsim
