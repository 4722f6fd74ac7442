// Dragonfly routing as a switch feature (kRoute) of the Ethernet switch: minimal (the
// frame's own shortest paths: local, global, local), Valiant (every packet leaving its group
// first goes to a random intermediate group) or UGAL (the source router picks, per packet,
// the minimal path or a Valiant one by the queues it sees: Valiant when its first hop's queue
// x 2 (about twice the hops) is shorter than the minimal first hop's). The intermediate
// destination is a random endpoint of the intermediate group: the frame's routes lead there;
// the packet returns to minimal routing once it is in that group. Needs the generator's
// coordinates of the router: {group, groups, endpoints per group} (fabrics/topologies/
// dragonfly.cpp); random choices from Rng(seed, "<router>.valiant").
#include "models/core/rng.h"
#include "models/switch/feature.h"
#include "models/switch/switch_kind.h"

namespace fabricsim {

namespace {

struct DragonflyParams {
  std::string routing;        // "minimal" | "valiant" | "ugal"
  uint64_t ugal_bias_bytes = 0;
};

class DragonflyRouting final : public SwitchFeature {
 public:
  explicit DragonflyRouting(const DragonflyParams& p) : p_(p), ugal_(p.routing == "ugal") {}

  const char* name() const override { return "dragonfly"; }
  unsigned hooks() const override { return kRoute; }
  void attached() override {
    const std::vector<int>& c = frame().coords();
    FABRICSIM_ASSERT(c.size() >= 3 && c[1] > 2 && c[2] > 0,
                     frame().display_name() + ": dragonfly routing needs the dragonfly "
                     "topology's coordinates (group, groups, endpoints per group)");
    group_ = uint32_t(c[0]);
    groups_ = uint32_t(c[1]);
    epg_ = uint32_t(c[2]);
    rng_ = Rng(frame().seed(), frame().display_name() + ".valiant");
  }

  int route(int in, Packet& p) override {
    if (p.flags & kUrgent) return -1;  // control packets take minimal paths
    if (!(p.flags & kRouted)) {        // the source router decides
      p.flags |= kRouted;
      const uint32_t dg = p.dst / epg_;
      if (dg != group_) {
        // An intermediate group other than the source's and the destination's.
        uint32_t ig = uint32_t(rng_.below(groups_ - 2));
        for (uint32_t g : {std::min(group_, dg), std::max(group_, dg)})
          if (ig >= g) ++ig;
        const uint32_t via = ig * epg_ + uint32_t(rng_.below(epg_));
        bool take = true;
        if (ugal_) {
          const int min_port = frame().route_toward(in, p, p.dst);
          const int val_port = frame().route_toward(in, p, via);
          take = 2 * frame().egress_bytes(val_port) + p_.ugal_bias_bytes <
                 frame().egress_bytes(min_port);
          ++(take ? n_valiant_ : n_minimal_);
          if (!take) return min_port;
        } else {
          ++n_valiant_;
        }
        if (take) {
          p.flags |= kVia;
          p.via = via;
        }
      }
    }
    if (p.flags & kVia) {
      if (p.via / epg_ == group_)
        p.flags &= uint8_t(~kVia);  // in the intermediate group: minimal from here
      else
        return frame().route_toward(in, p, p.via);
    }
    return -1;
  }

  void add_stats(nlohmann::json& j, uint64_t) const override {
    j["dragonfly"] = {{"routing", p_.routing},
                      {"valiant_paths", n_valiant_},
                      {"minimal_paths", n_minimal_}};
  }

 private:
  DragonflyParams p_;
  bool ugal_;
  uint32_t group_ = 0, groups_ = 0, epg_ = 0;
  Rng rng_{0, ""};
  uint64_t n_valiant_ = 0, n_minimal_ = 0;  // decisions at source routers (ugal: both)
};

}  // namespace

SwitchFeatureKind dragonfly_routing_feature() {
  using K = ParamKind;
  SwitchFeatureKind f;
  f.name = "dragonfly";
  f.params = param_block<DragonflyParams>(
      "dragonfly",
      {bind(choice("routing", {"minimal", "valiant", "ugal"}, "minimal",
                   "Path choice: minimal (shortest paths, the frame's route_select among them), "
                   "valiant (every packet leaving its group through a random intermediate "
                   "group), ugal (minimal or Valiant per packet at the source router, by queue "
                   "x hops). valiant and ugal need the dragonfly topology."),
            &DragonflyParams::routing),
       bind(param("ugal_bias", K::kBytes, "0B", "bytes",
                  "UGAL: a Valiant path must beat the minimal one by this many queued bytes.",
                  0),
            &DragonflyParams::ugal_bias_bytes)});
  f.check = [](const DeviceCheck& c, const std::any& p) {
    const DragonflyParams& d = std::any_cast<const DragonflyParams&>(p);
    if (d.routing != "minimal" && (c.coords().size() < 3 || c.coords()[1] < 3))
      c.fail_param("routing",
                   "routing: " + d.routing + " on " + c.device() + ", which is not a router of a "
                   "dragonfly of 3 groups or more",
                   "use topology type dragonfly (groups >= 3), or routing: minimal");
  };
  f.create = [](const std::any& p) -> std::unique_ptr<SwitchFeature> {
    const DragonflyParams& d = std::any_cast<const DragonflyParams&>(p);
    if (d.routing == "minimal") return nullptr;
    return std::make_unique<DragonflyRouting>(d);
  };
  return f;
}

}  // namespace fabricsim
