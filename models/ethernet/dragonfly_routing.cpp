// Dragonfly routing as a switch feature (kRoute) of the Ethernet switch.
//  * minimal: at most one global hop: inside the destination's group the frame's own
//    shortest paths; from another group, straight to a router of this group that has a
//    global link to the destination group (local hop), over that link (global hop). (Hop
//    counting alone would also take two global hops through a third group, which can be as
//    short: not a dragonfly's minimal route.)
//  * valiant: every packet leaving its group goes minimally to a random intermediate group
//    first, then minimally to its destination (two global hops).
//  * ugal: the source router picks, per packet, minimal or a Valiant path by the queues it
//    sees: Valiant when its first hop's queue x 2 (about twice the hops) + ugal_bias is
//    shorter than the minimal first hop's.
// Among equal choices (several routers or links to a group) the packet's entropy picks, so
// spraying spreads over them. The router's coordinates come from the dragonfly generator
// (fabrics/topologies/dragonfly.cpp: {group, groups, endpoints per group, router, routers,
// hosts, global links}), whose wiring rule this follows: the a x h global slots of group x
// are dealt in order of the group they reach, m = a x h / (groups - 1) to each; slot q is
// router q / h's global port hosts + routers - 1 + q % h; the local link from router r to s
// is port hosts + (s < r ? s : s - 1). Random intermediate groups from Rng(seed,
// "<router>.valiant").
#include "models/core/packet.h"
#include "models/core/rng.h"
#include "models/switch/feature.h"
#include "models/switch/switch_kind.h"

namespace fabricsim {

namespace {

struct DragonflyParams {
  std::string routing;        // "shortest" | "minimal" | "valiant" | "ugal"
  uint64_t ugal_bias_bytes = 0;
};

class DragonflyRouting final : public SwitchFeature {
 public:
  explicit DragonflyRouting(const DragonflyParams& p)
      : p_(p), valiant_(p.routing == "valiant"), ugal_(p.routing == "ugal") {
    PacketPool::global().enable_transport();  // Valiant's intermediate group: tr().via
  }

  const char* name() const override { return "dragonfly"; }
  unsigned hooks() const override { return kRoute; }
  void attached() override {
    const std::vector<int>& c = frame().coords();
    FABRICSIM_ASSERT(c.size() == 7, frame().display_name() + ": not a dragonfly router");
    G_ = c[0], g_ = c[1], epg_ = uint32_t(c[2]), r_ = c[3], a_ = c[4], p_hosts_ = c[5], h_ = c[6];
    m_ = a_ * h_ / (g_ - 1);
    rng_ = Rng(frame().seed(), frame().display_name() + ".valiant");
  }
  // Independent rows: the intermediate-group stream starts again (decision counts kept).
  void reset_dynamic_state() override {
    rng_ = Rng(frame().seed(), frame().display_name() + ".valiant");
  }

  int route(int in, Packet& p) override {
    const int dg = int(p.dst / epg_);
    if ((valiant_ || ugal_) && !(p.flags & kRouted) && !(p.flags & kUrgent)) {
      p.flags |= kRouted;  // the source router decides once
      if (dg != G_) {
        // An intermediate group other than this one and the destination's.
        int ig = int(rng_.below(uint64_t(g_ - 2)));
        for (int x : {std::min(G_, dg), std::max(G_, dg)})
          if (ig >= x) ++ig;
        bool take = true;
        if (ugal_) {
          const int min_port = toward_group(dg, p);
          const int val_port = toward_group(ig, p);
          take = 2 * frame().egress_bytes(val_port) + p_.ugal_bias_bytes <
                 frame().egress_bytes(min_port);
        }
        ++(take ? n_valiant_ : n_minimal_);
        if (take) {
          p.flags |= kVia;
          p.tr().via = uint32_t(ig);
        }
      }
    }
    if (p.flags & kVia) {
      if (int(p.tr().via) == G_)
        p.flags &= uint8_t(~kVia);  // in the intermediate group: minimal from here
      else
        return toward_group(int(p.tr().via), p);
    }
    if (dg == G_) return -1;  // inside the group: the frame's shortest paths
    (void)in;
    return toward_group(dg, p);
  }

  void add_stats(nlohmann::json& j, uint64_t) const override {
    j["dragonfly"] = {{"routing", p_.routing},
                      {"valiant_paths", n_valiant_},
                      {"minimal_paths", n_minimal_}};
  }

 private:
  // The port of this router on a minimal path towards group `x` (x != G_): one of its own
  // global links to x, or the local link to a router that has one; the entropy picks among
  // the m links.
  int toward_group(int x, const Packet& p) const {
    const int base = ((x - G_ - 1 + g_) % g_) * m_;
    int mine = 0;  // links to x on this router
    for (int k = 0; k < m_; ++k) mine += (base + k) / h_ == r_;
    if (mine > 0) {
      int pick = int(p.entropy % uint32_t(mine));
      for (int k = 0; k < m_; ++k)
        if ((base + k) / h_ == r_ && pick-- == 0) return p_hosts_ + a_ - 1 + (base + k) % h_;
    }
    const int s = (base + int(p.entropy % uint32_t(m_))) / h_;  // a router that has one
    return p_hosts_ + (s < r_ ? s : s - 1);
  }

  DragonflyParams p_;
  bool valiant_, ugal_;
  int G_ = 0, g_ = 0, r_ = 0, a_ = 0, p_hosts_ = 0, h_ = 0, m_ = 0;
  uint32_t epg_ = 0;
  Rng rng_{0, ""};
  uint64_t n_valiant_ = 0, n_minimal_ = 0;  // decisions at source routers (valiant, ugal)
};

}  // namespace

SwitchFeatureKind dragonfly_routing_feature() {
  using K = ParamKind;
  SwitchFeatureKind f;
  f.name = "dragonfly";
  f.params = param_block<DragonflyParams>(
      "dragonfly",
      {bind(choice("routing", {"shortest", "minimal", "valiant", "ugal"}, "shortest",
                   "Path choice: shortest (the frame's shortest paths, route_select among "
                   "them: any topology); on a dragonfly: minimal (at most one global hop), "
                   "valiant (through a random intermediate group), ugal (minimal or Valiant "
                   "per packet at the source router, by queue x hops)."),
            &DragonflyParams::routing),
       bind(param("ugal_bias", K::kBytes, "0B", "bytes",
                  "UGAL: a Valiant path must beat the minimal one by this many queued bytes.",
                  0),
            &DragonflyParams::ugal_bias_bytes)});
  f.check = [](const DeviceCheck& c, const std::any& p) {
    const DragonflyParams& d = std::any_cast<const DragonflyParams&>(p);
    if (d.routing != "shortest" && (c.coords().size() != 7 || c.coords()[1] < 3))
      c.fail_param("routing",
                   "routing: " + d.routing + " on " + c.device() + ", which is not a router of a "
                   "dragonfly of 3 groups or more",
                   "use topology type dragonfly (groups >= 3), or routing: shortest");
  };
  f.create = [](const std::any& p) -> std::unique_ptr<SwitchFeature> {
    const DragonflyParams& d = std::any_cast<const DragonflyParams&>(p);
    if (d.routing == "shortest") return nullptr;
    return std::make_unique<DragonflyRouting>(d);
  };
  return f;
}

}  // namespace fabricsim
