#include "fabrics/systems/faults.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <regex>

#include "fabrics/config/params.h"
#include "models/collectives/algorithms.h"
#include "models/core/limits.h"
#include "models/core/text.h"
#include "models/core/units.h"
#include "models/optics/ocs.h"

namespace fabricsim {

namespace {

using K = ParamKind;

// A timeline longer than this is a mistake (a flap of 10^4 periods on every link of a
// system), not a study: refused before it is expanded.
constexpr size_t kMaxActions = 100000;

ParamSpec at_spec() {
  return param("at", K::kTime, "", "simulated time", "When it happens.", 0, limits::kMaxTimePs);
}
ParamSpec up_spec(const char* what) {
  return param("up_at", K::kTime, "0ns", "simulated time",
               std::string("When ") + what + " comes back; 0ns: never (it stays down).", 0,
               limits::kMaxTimePs);
}

cfg::TypeSpec section_spec() {
  return {"faults",
          "Failures injected at given simulated times (the `faults:` section): links, ports "
          "and switches going down (and up), flapping links, bit-error bursts; events: a "
          "list of maps with a `type` (describe link_down, port_down, link_flap, "
          "switch_down, ber_burst, ocs_reconfigure, ocs_phase_map, cube_fail). "
          "circuit_maps: named circuit maps, {NAME: {OCS_DEVICE: [a0, b0, a1, b1, ...], "
          "...}}, each the whole new map of the switches it names, for ocs_phase_map and the "
          "OCS controller (docs/optical.md).",
          {param("detection_time", K::kTime, "10us", "ns",
                 "From a link or switch changing state to every route being recomputed (link "
                 "training timeout, subnet manager sweep: an assumption). Until then traffic "
                 "keeps its routes: what is queued for a failed link waits.",
                 0, 1e12),
           param("retransmit_timeout", K::kTime, "100us", "ns",
                 "End-to-end retransmission timeout of protocols that have it (infiniband): a "
                 "transaction lost to a fault is sent again by its source this long after the "
                 "loss.",
                 1000, 1e12)}};
}

std::vector<cfg::TypeSpec> event_specs() {
  const ParamSpec link = param("link", K::kString, "", "",
                               "A port at either end of the link: DEVICE.port[INDEX].");
  return {
      {"link_down",
       "A link fails, both directions (fault event): its transmitters stop; what they had "
       "not finished sending is cut (docs/faults.md).",
       {link, at_spec(), up_spec("the link")}},
      {"port_down",
       "A port fails (fault event): the link on it goes down as with link_down.",
       {param("port", K::kString, "", "", "The port: DEVICE.port[INDEX]."), at_spec(),
        up_spec("the port")}},
      {"link_flap",
       "A link goes down for down_for every period, count times from at (fault event).",
       {link, at_spec(),
        param("down_for", K::kTime, "", "ns", "How long each outage lasts.", 1,
              limits::kMaxTimePs),
        param("period", K::kTime, "", "ns", "From one outage's start to the next's.", 2,
              limits::kMaxTimePs),
        param("count", K::kInt, "1", "outages", "Number of outages.", 1, 10000)}},
      {"switch_down",
       "A switch fails as a whole (fault event): its links go down and every transaction it "
       "holds is lost.",
       {param("device", K::kString, "", "", "The switch's instance name (e.g. sw0)."), at_spec(),
        up_spec("the switch")}},
      {"ber_burst",
       "A link's bit error rate rises to ber for duration (fault event): CRC errors, NAKs "
       "and replays (link-level retry) meanwhile.",
       {link, at_spec(),
        param("duration", K::kTime, "", "ns", "How long the burst lasts.", 1, limits::kMaxTimePs),
        param("ber", K::kReal, "", "errors per wire bit", "Bit error rate during the burst.",
              1e-15, 1e-3)}},
      {"ocs_reconfigure",
       "An optical circuit switch takes a new circuit map (reconfiguration): the "
       "transmitters on every circuit that changes stop at `at`, what they sent drains "
       "through, then those circuits are dark for the switch's reconfiguration_time while "
       "its mirrors move; unchanged circuits carry traffic throughout; routes avoid the "
       "changed circuits from `at` and follow the new map once it is lit (docs/optical.md).",
       {param("device", K::kString, "", "", "The optical circuit switch's instance name."),
        at_spec(),
        param("circuits", K::kIntList, "", "port pairs",
              "The whole new circuit map as pairs [a0, b0, a1, b1, ...]; a port in no pair "
              "is dark afterwards.")}},
      {"ocs_phase_map",
       "At the start of every run of a workload phase (ocs_phases: A or B) the optical "
       "circuit switches take a named circuit map of faults.circuit_maps: the job waits "
       "until every changed circuit is lit again (drain, dark for reconfiguration_time, "
       "routes recomputed), then the phase runs (docs/optical.md, \"Reconfiguration at "
       "workload phase boundaries\").",
       {param("phase", K::kString, "", "", "The phase whose start takes the map (A or B)."),
        param("map", K::kString, "", "", "A circuit map of faults.circuit_maps.")}},
      {"ocs_circuit_map",
       "At `at` every optical circuit switch of a named circuit map of faults.circuit_maps "
       "takes its map there, as the OCS controller does at a phase boundary: each changed "
       "circuit stops, drains, is dark for its switch's reconfiguration_time, then the new "
       "map is lit and routes follow; switches whose map is in force are not touched. "
       "Maps requested while the previous request is still reconfiguring wait for it "
       "(docs/optical.md, \"Reconfiguration at workload phase boundaries\").",
       {at_spec(), param("map", K::kString, "", "", "A circuit map of faults.circuit_maps.")}},
      {"cube_fail",
       "A cube of a tpu_pod slice fails (a chip or its host; fault event): the job stops at "
       "`at` (queued data is abandoned, what is on the wire drains and is discarded), the "
       "failure is detected after the section's detection_time, the optical circuit "
       "switches take new maps that put the lowest-numbered spare cube in the failed "
       "cube's place in the torus (the failed cube's ranks move to the spare's chips), "
       "their changed circuits are dark for reconfiguration_time, and restart_time after "
       "they are lit the collective runs again from its start (docs/optical.md, "
       "\"Failure bypass\").",
       {param("chip", K::kString, "none", "",
              "A chip of the failed cube (t<cube>_<x>_<y>_<z>); none: give `cube`."),
        param("cube", K::kInt, "-1", "cube", "The failed cube's number (-1: the cube of `chip`).",
              -1, 4096),
        at_spec(),
        param("restart_time", K::kTime, "0ns", "ns",
              "The job's own restart cost once the new circuits are lit (reloading the "
              "checkpoint, re-initialising the runtime): an assumption; 0 counts only the "
              "fabric's part of the downtime.",
              0, limits::kMaxTimePs)}}};
}

class Loader {
 public:
  Loader(SystemSpec& s, const SpecSources& src) : s_(s), src_(src) {
    for (size_t i = 0; i < s.graph.links.size(); ++i) {
      const topo::Link& l = s.graph.links[i];
      link_at_[{l.a.device, l.a.port}] = int(i);
      link_at_[{l.b.device, l.b.port}] = int(i);
    }
  }

  void load(const YAML::Node& section) {
    const cfg::Params p =
        cfg::parse_params(section_spec(), section, src_.file, "faults", {"events", "circuit_maps"});
    FaultPlan& plan = s_.faults;
    plan.detection_ps = p.time_ps("detection_time");
    plan.retransmit_ps = p.time_ps("retransmit_timeout");
    plan.replay_links.assign(s_.graph.links.size(), 0);
    nlohmann::json resolved = p.to_json();
    resolved["events"] = nlohmann::json::array();
    const YAML::Node events = section["events"];
    const char* example = "e.g. events: [{type: link_down, link: \"gpu0.port[3]\", at: 20us}]";
    if (!events.IsDefined())
      cfg::fail(src_.file, section, "faults.events", "missing required key 'events'", example);
    if (!events.IsSequence())
      cfg::fail(src_.file, events, "faults.events",
                "expected a list of fault events, found " + cfg::describe_node(events), example);
    if (events.size() == 0)
      cfg::fail(src_.file, events, "faults.events", "the list of fault events is empty", example);
    resolved["circuit_maps"] = circuit_maps(section["circuit_maps"]);
    for (size_t i = 0; i < events.size(); ++i) resolved["events"].push_back(event(events[i], i));
    // A plan at phase boundaries holds the job while its switches move; a timed
    // reconfiguration of one of them (or a cube failure) could overlap it.
    if (!plan.phase_maps.empty())
      for (const FaultAction& a : plan.actions) {
        const std::string at = "faults.events[" + std::to_string(a.event) + "]";
        if (a.kind == FaultAction::kCubeFail)
          cfg::fail(src_.file, events[size_t(a.event)], at,
                    "cube_fail with ocs_phase_map in one plan is not modelled",
                    "give cube_fail events alone");
        if (a.kind == FaultAction::kCircuitMap)
          cfg::fail(src_.file, events[size_t(a.event)], at,
                    "ocs_circuit_map with ocs_phase_map in one plan is not modelled: the "
                    "controller takes one request at a time, and a timed map could fall while "
                    "a phase boundary's switches move",
                    "change the maps at phase boundaries only (ocs_phase_map), or at times only");
        if (a.kind != FaultAction::kReconfigure) continue;
        const int d = plan.reconfigs[size_t(a.target)].device;
        for (const auto& [name, rs] : plan.circuit_maps)
          for (int r : rs)
            if (plan.reconfigs[size_t(r)].device == d)
              for (const auto& [phase, pm] : plan.phase_maps)
                if (pm.map == name)
                  cfg::fail(src_.file, events[size_t(a.event)], at,
                            "overlapping reconfiguration: " + s_.graph.devices[size_t(d)].name +
                                " also takes circuit map '" + name + "' at every start of phase " +
                                phase + ", and this timed reconfiguration may fall while its "
                                "mirrors move",
                            "reconfigure it at phase boundaries only (ocs_phase_map), or "
                            "leave it out of the maps the phases use");
      }
    if (!plan.bypasses.empty())
      for (const FaultAction& a : plan.actions)
        if (a.kind != FaultAction::kCubeFail)
          cfg::fail(src_.file, events[size_t(a.event)], "faults.events[" + std::to_string(a.event) + "]",
                    "cube_fail with other fault events in one plan is not modelled",
                    "give cube_fail events alone");
    std::stable_sort(plan.actions.begin(), plan.actions.end(),
                     [](const FaultAction& a, const FaultAction& b) { return a.at_ps < b.at_ps; });
    s_.resolved["faults"] = resolved;
    check_workload();
  }

 private:
  nlohmann::json event(const YAML::Node& n, size_t i) {
    const std::string path = "faults.events[" + std::to_string(i) + "]";
    std::vector<std::string> types;
    for (const cfg::TypeSpec& t : event_specs()) types.push_back(t.type);

    if (!n.IsMap())
      cfg::fail(src_.file, n, path, "expected a map with a 'type', found " + cfg::describe_node(n),
                "e.g. - {type: link_down, link: \"gpu0.port[3]\", at: 20us}");
    const std::string type = cfg::scalar(src_.file, n["type"].IsDefined() ? n["type"] : n,
                                         path + ".type", "a fault type", "known: " +
                                         join_list(types));
    const std::vector<cfg::TypeSpec> all = event_specs();
    const auto it = std::find_if(all.begin(), all.end(),
                                 [&](const cfg::TypeSpec& t) { return t.type == type; });
    if (it == all.end())
      cfg::fail(src_.file, n["type"], path + ".type", "unknown fault type '" + type + "'",
                did_you_mean(type, types));
    const cfg::Params p = cfg::parse_params(*it, n, src_.file, path, {"type"});
    FaultPlan& plan = s_.faults;
    const int e = int(plan.events.size());
    plan.where.push_back(cfg::where(src_.file, n) + ": " + path);
    if (type == "ocs_phase_map") {
      phase_map(p, e, path);
      nlohmann::json j = p.to_json();
      j["type"] = type;
      return j;
    }
    const uint64_t at = p.time_ps("at");
    if (at >= s_.simulation.time_limit_ps)
      p.fail("at",
             "at " + format_time_ps(at) + " is not before simulation.time_limit " +
                 format_time_ps(s_.simulation.time_limit_ps),
             "a fault must happen while the run lasts");
    const auto add = [&](uint64_t t, FaultAction::Kind k, int target, double ber = 0) {
      if (plan.actions.size() >= kMaxActions)
        p.fail("at", "the fault events expand to more than " + std::to_string(kMaxActions) +
                         " link or switch state changes",
               "use fewer events or a smaller count");
      plan.actions.push_back(FaultAction{t, k, target, ber, e});
    };
    const auto up_at = [&]() {
      const uint64_t up = p.time_ps("up_at");
      if (up != 0 && up <= at)
        p.fail("up_at", "up_at " + format_time_ps(up) + " is not after at " + format_time_ps(at),
               "give a later up_at, or 0ns to stay down");
      return up;
    };
    // The device `name` (the event's `device` key) as the graph's by_name entry.
    const auto device_named = [&](const std::string& name) {
      const auto d = s_.graph.by_name.find(name);
      if (d == s_.graph.by_name.end()) {
        std::vector<std::string> names;
        for (const auto& kv : s_.graph.by_name) names.push_back(kv.first);
        p.fail("device", "unknown device '" + name + "'", did_you_mean(name, names));
      }
      return d;
    };
    std::string text;
    if (type == "link_down" || type == "port_down") {
      const char* key = type == "link_down" ? "link" : "port";
      const int l = link_of(p, key);
      const uint64_t up = up_at();
      add(at, FaultAction::kLinkDown, l);
      if (up) add(up, FaultAction::kLinkUp, l);
      text = type + " " + link_name(l) + " at " + format_time_ps(at) +
             (up ? ", up at " + format_time_ps(up) : ", stays down");
    } else if (type == "link_flap") {
      const int l = link_of(p, "link");
      const uint64_t down = p.time_ps("down_for"), period = p.time_ps("period");
      const int64_t count = p.integer("count");
      if (down >= period)
        p.fail("down_for",
               "down_for " + format_time_ps(down) + " is not shorter than period " +
                   format_time_ps(period),
               "each outage must end before the next starts");
      for (int64_t k = 0; k < count; ++k) {
        add(at + uint64_t(k) * period, FaultAction::kLinkDown, l);
        add(at + uint64_t(k) * period + down, FaultAction::kLinkUp, l);
      }
      text = "link_flap " + link_name(l) + " from " + format_time_ps(at) + ": " +
             std::to_string(count) + " x down " + format_time_ps(down) + " every " +
             format_time_ps(period);
    } else if (type == "switch_down") {
      const std::string& name = p.str("device");
      const auto d = device_named(name);
      const DeviceType& t = s_.type_of(d->second);
      if (!t.kind->forwards || !t.kind->can_fail)
        p.fail("device",
               name + " is of kind " + t.kind->name + ", and only switches fail with switch_down",
               "fail its links with link_down, or name a switch");
      for (const topo::Link& k : s_.graph.links)
        if ((k.a.device == d->second && on_circuit_switch(k.b.device)) ||
            (k.b.device == d->second && on_circuit_switch(k.a.device)))
          p.fail("device", name + " has fibres to an optical circuit switch; a switch failure "
                               "there is not modelled",
                 "fail another switch, or change the circuits with ocs_reconfigure");
      const uint64_t up = up_at();
      add(at, FaultAction::kDeviceDown, d->second);
      if (up) add(up, FaultAction::kDeviceUp, d->second);
      text = "switch_down " + name + " at " + format_time_ps(at) +
             (up ? ", up at " + format_time_ps(up) : ", stays down");
    } else if (type == "ocs_reconfigure") {
      const std::string& name = p.str("device");
      const auto d = device_named(name);
      const DeviceType& t = s_.type_of(d->second);
      if (t.kind->name != "optical_circuit_switch")
        p.fail("device", name + " is of kind " + t.kind->name +
                             ", and only optical circuit switches are reconfigured",
               "name a device of type optical_circuit_switch");
      const OcsParams& o = t.get<OcsParams>();
      const std::vector<int64_t>& pairs = p.int_list("circuits");
      OcsReconfig rc = ocs_map(d->second, pairs, [&](const std::string& problem,
                                                     const std::string& hint) {
        p.fail("circuits", problem, hint);
      });
      add(at, FaultAction::kReconfigure, int(plan.reconfigs.size()));
      plan.reconfigs.push_back(std::move(rc));
      text = "ocs_reconfigure " + name + " at " + format_time_ps(at) + " (" +
             std::to_string(pairs.size() / 2) + " circuits, dark " +
             format_time_ps(o.reconfiguration_ps) + ")";
    } else if (type == "ocs_circuit_map") {
      const std::string& map = known_map(p);
      add(at, FaultAction::kCircuitMap, int(plan.timed_maps.size()));
      plan.timed_maps.push_back(map);
      text = "ocs_circuit_map " + map + " at " + format_time_ps(at);
    } else if (type == "cube_fail") {
      text = cube_fail(p, at, e, add);
    } else {  // ber_burst
      const int l = link_of(p, "link");
      const LinkParams& lp = s_.link_types.at(s_.graph.links[size_t(l)].type);
      const ReplayNeed need = replay_need(s_, lp);
      if (lp.replay_buffer_bytes < need.transaction_wire + need.rtt_bytes)
        p.fail("ber",
               "link type '" + lp.type_name + "' has replay_buffer " +
                   format_bytes(lp.replay_buffer_bytes) + ", less than one transaction plus an "
                   "ack round trip (" + std::to_string(need.transaction_wire + need.rtt_bytes) +
                   " B), which link-level retry needs during the burst",
               "raise link_types." + lp.type_name + ".replay_buffer to at least " +
                   std::to_string(need.transaction_wire + need.rtt_bytes) + "B");
      const uint64_t end = at + p.time_ps("duration");
      add(at, FaultAction::kBer, l, p.real("ber"));
      add(end, FaultAction::kBer, l, lp.ber);  // back to the link type's own
      if (lp.ber <= 0) plan.replay_links[size_t(l)] = 1;
      char ber[32];
      std::snprintf(ber, sizeof ber, "%g", p.real("ber"));
      text = "ber_burst " + link_name(l) + " at " + format_time_ps(at) + " for " +
             format_time_ps(end - at) + ": ber " + ber;
    }
    plan.events.push_back(text);
    nlohmann::json j = p.to_json();
    j["type"] = type;
    return j;
  }

  // A switch's whole new map from `pairs` (an ocs_reconfigure's circuits, or a switch's
  // entry in a circuit map): pairs, ports named once and present, only linked ports, a
  // budget that closes. `fail(problem, hint)` reports (and throws).
  OcsReconfig ocs_map(int device, const std::vector<int64_t>& pairs,
                      const std::function<void(const std::string&, const std::string&)>& fail) {
    const std::string& name = s_.graph.devices[size_t(device)].name;
    const OcsParams& o = s_.type_of(device).get<OcsParams>();
    if (pairs.size() % 2)
      fail("has " + std::to_string(pairs.size()) + " entries: port " +
               std::to_string(pairs.back()) + " has no partner",
           "write the map as pairs [a0, b0, a1, b1, ...]");
    OcsReconfig rc;
    rc.device = device;
    rc.dark_ps = o.reconfiguration_ps;
    rc.immediate = o.immediate();
    const int bad = circuit_map(pairs, o.ports, rc.map);
    if (bad >= 0) {
      const int64_t x = pairs[size_t(bad)];
      if (x < 0 || x >= o.ports)
        fail("circuits[" + std::to_string(bad) + "] names port " + std::to_string(x) +
                 ", which " + name + " lacks",
             "ports are 0.." + std::to_string(o.ports - 1));
      size_t first = 0;
      while (first < size_t(bad) && pairs[first] != x) ++first;
      fail("port " + std::to_string(x) + " is named twice (circuits[" + std::to_string(first) +
               "] and circuits[" + std::to_string(bad) + "])",
           "a port carries one circuit: each port may appear once in the map");
    }
    for (size_t k = 0; k < pairs.size(); ++k)
      if (!link_at_.count({device, int(pairs[k])}))
        fail("circuits[" + std::to_string(k) + "] names port " + std::to_string(pairs[k]) +
                 ", which has no fibre (no link in the topology)",
             "join only ports that are linked");
    const double rx = o.received_dbm(), need = o.rx_sensitivity_dbm + o.margin_db;
    if (!pairs.empty() && rx < need)
      fail("the link budget of " + name + "'s circuits does not close (" + std::to_string(rx) +
               " dBm received, " + std::to_string(need) + " dBm needed)",
           "see device_types: launch_power_dbm, fibre_length_m, connectors");
    return rc;
  }

  // faults.circuit_maps: {NAME: {OCS_DEVICE: [a0, b0, ...], ...}, ...}.
  nlohmann::json circuit_maps(const YAML::Node& n) {
    nlohmann::json out = nlohmann::json::object();
    if (!n.IsDefined() || n.IsNull()) return out;
    const char* example = "e.g. circuit_maps: {torus: {ocs0: [0, 2, 1, 3]}, cross: {ocs0: [0, 3, 1, 2]}}";
    if (!n.IsMap() || n.size() == 0)
      cfg::fail(src_.file, n, "faults.circuit_maps",
                "expected a map of named circuit maps, found " + cfg::describe_node(n), example);
    FaultPlan& plan = s_.faults;
    for (const auto& kv : n) {
      const std::string name = cfg::key_name(src_.file, kv.first, "faults.circuit_maps");
      const std::string path = "faults.circuit_maps." + name;
      if (!kv.second.IsMap() || kv.second.size() == 0)
        cfg::fail(src_.file, kv.second, path,
                  "expected a map of optical circuit switches to their circuits, found " +
                      cfg::describe_node(kv.second),
                  example);
      std::vector<int>& rs = plan.circuit_maps[name];
      for (const auto& dv : kv.second) {
        const std::string dev = cfg::key_name(src_.file, dv.first, path);
        const std::string dpath = path + "." + dev;
        const auto d = s_.graph.by_name.find(dev);
        if (d == s_.graph.by_name.end()) {
          std::vector<std::string> names;
          for (const auto& x : s_.graph.by_name)
            if (s_.type_of(x.second).kind->name == "optical_circuit_switch") names.push_back(x.first);
          cfg::fail(src_.file, dv.first, dpath, "unknown device '" + dev + "'",
                    did_you_mean(dev, names));
        }
        if (s_.type_of(d->second).kind->name != "optical_circuit_switch")
          cfg::fail(src_.file, dv.first, dpath,
                    dev + " is of kind " + s_.type_of(d->second).kind->name +
                        ", and only optical circuit switches take circuit maps",
                    "name a device of type optical_circuit_switch");
        if (!dv.second.IsSequence())
          cfg::fail(src_.file, dv.second, dpath,
                    "expected a list of port pairs [a0, b0, a1, b1, ...], found " +
                        cfg::describe_node(dv.second),
                    example);
        std::vector<int64_t> pairs;
        for (size_t k = 0; k < dv.second.size(); ++k) {
          const YAML::Node& x = dv.second[k];
          const std::string xs = cfg::scalar(src_.file, x, dpath + "[" + std::to_string(k) + "]",
                                             "a port number", "write ports as integers");
          size_t used = 0;
          long long v = -1;
          try {
            v = std::stoll(xs, &used);
          } catch (...) {
            used = 0;
          }
          if (used != xs.size())
            cfg::fail(src_.file, x, dpath + "[" + std::to_string(k) + "]",
                      "'" + xs + "' is not a port number", "write ports as integers");
          pairs.push_back(v);
        }
        OcsReconfig rc = ocs_map(d->second, pairs, [&](const std::string& problem,
                                                       const std::string& hint) {
          cfg::fail(src_.file, dv.second, dpath, problem, hint);
        });
        rs.push_back(int(plan.reconfigs.size()));
        plan.reconfigs.push_back(std::move(rc));
        out[name][dev] = pairs;
      }
    }
    return out;
  }

  // An event's `map`: a name declared in faults.circuit_maps (else a located error).
  const std::string& known_map(const cfg::Params& p) const {
    const FaultPlan& plan = s_.faults;
    const std::string& map = p.str("map");
    if (!plan.circuit_maps.count(map)) {
      std::vector<std::string> names;
      for (const auto& kv : plan.circuit_maps) names.push_back(kv.first);
      p.fail("map", "unknown circuit map '" + map + "'",
             names.empty() ? std::string("declare it in faults.circuit_maps")
                           : did_you_mean(map, names));
    }
    return map;
  }

  // ocs_phase_map: at every start of phase `phase` the switches take circuit map `map`.
  void phase_map(const cfg::Params& p, int e, const std::string& path) {
    FaultPlan& plan = s_.faults;
    const WorkloadSpec& w = s_.workload;
    if (w.phases.empty())
      p.fail("phase", "ocs_phase_map needs a workload with phases (type ocs_phases), not " + w.type,
             "use workload type ocs_phases, or a timed ocs_reconfigure");
    const std::string& phase = p.str("phase");
    std::vector<std::string> phases;
    for (const PhaseSpec& ph : w.phases) phases.push_back(ph.name);
    if (std::find(phases.begin(), phases.end(), phase) == phases.end())
      p.fail("phase", "unknown phase '" + phase + "'",
             "the workload's phases are " + join_list(phases));
    const std::string& map = known_map(p);
    const auto prev = plan.phase_maps.find(phase);
    if (prev != plan.phase_maps.end())
      p.fail("phase",
             "overlapping reconfiguration: the start of phase " + phase + " takes circuit map '" +
                 prev->second.map + "' already (faults.events[" +
                 std::to_string(prev->second.event) + "])",
             "give each phase one map");
    plan.phase_maps[phase] = FaultPlan::PhaseMap{map, e};
    plan.events.push_back("ocs_phase_map " + map + " at every start of phase " + phase);
    (void)path;
  }

  // The link on port `key` ("gpu0.port[3]"): the port exists and is linked.
  int link_of(const cfg::Params& p, const char* key) {
    static const std::regex kEnd(R"(([A-Za-z_][A-Za-z0-9_]*)\.port\[([0-9]{1,6})\])");
    const std::string& text = p.str(key);
    std::smatch m;
    if (!std::regex_match(text, m, kEnd))
      p.fail(key, "bad port reference '" + text + "'", "write DEVICE.port[INDEX], e.g. gpu0.port[3]");
    const auto d = s_.graph.by_name.find(m[1].str());
    if (d == s_.graph.by_name.end()) {
      std::vector<std::string> names;
      for (const auto& kv : s_.graph.by_name) names.push_back(kv.first);
      p.fail(key, "unknown device '" + m[1].str() + "'", did_you_mean(m[1].str(), names));
    }
    const int port = std::stoi(m[2].str());
    const auto l = link_at_.find({d->second, port});
    if (l == link_at_.end())
      p.fail(key, "port " + text + " has no link",
             "name a linked port; " + m[1].str() + " has " +
                 std::to_string(s_.graph.devices[size_t(d->second)].ports) + " ports");
    const topo::Link& k = s_.graph.links[size_t(l->second)];
    if (on_circuit_switch(k.a.device) || on_circuit_switch(k.b.device))
      p.fail(key, "the link on " + text + " is a fibre to an optical circuit switch; link "
                  "faults there are not modelled (light is cut at the far receiver, not at "
                  "the switch)",
             "change its circuits with an ocs_reconfigure event, or fail another link");
    return l->second;
  }

  // cube_fail: the pod's switches (devices with a circuit map named ocs_*), the failed
  // cube, the spare that replaces it, the switches' new maps (from the maps the earlier
  // failures left) and the chips that change places.
  template <typename Add>
  std::string cube_fail(const cfg::Params& p, uint64_t at, int e, const Add& add) {
    FaultPlan& plan = s_.faults;
    const topo::Graph& g = s_.graph;
    if (pod_switches_.empty()) {
      for (size_t d = 0; d < g.devices.size(); ++d)
        if (!g.devices[d].circuit.empty() && g.devices[d].name.rfind("ocs_", 0) == 0) {
          pod_switches_.push_back(int(d));
          maps_.push_back(g.devices[d].circuit);
        }
      if (pod_switches_.empty())
        p.fail("at", "cube_fail needs a tpu_pod topology (cubes joined by optical circuit "
                     "switches); this system has none",
               "use topology type tpu_pod, or another fault type");
      for (int l = 0; l < int(g.links.size()); ++l)
        if (g.links[size_t(l)].a.device == pod_switches_[0] ||
            g.links[size_t(l)].b.device == pod_switches_[0])
          ++cubes_;
      cubes_ /= 2;  // two fibres (the + and - faces) per cube on every switch
      failed_.assign(size_t(cubes_), 0);
    }
    int f = int(p.integer("cube"));
    const std::string chip = p.str("chip") == "none" ? std::string() : p.str("chip");
    if ((f >= 0) == !chip.empty())
      p.fail(f >= 0 ? "cube" : "chip", "give the failed cube by `chip` or by `cube` (one of them)",
             "e.g. {type: cube_fail, chip: t1_0_0_0, at: 20us}");
    if (f < 0) {
      static const std::regex kChip(R"(t([0-9]{1,4})_[0-9]+_[0-9]+_[0-9]+)");
      std::smatch m;
      if (!std::regex_match(chip, m, kChip) || !g.by_name.count(chip))
        p.fail("chip", "'" + chip + "' is not a chip of the pod",
               "name a chip t<cube>_<x>_<y>_<z>, e.g. t1_0_0_0");
      f = std::stoi(m[1].str());
    }
    if (f >= cubes_)
      p.fail("cube", "cube " + std::to_string(f) + " is not in the pod",
             "cubes are 0.." + std::to_string(cubes_ - 1));
    const std::vector<int>& m0 = maps_[0];
    if (failed_[size_t(f)] || m0[size_t(2 * f)] < 0)
      p.fail(chip.empty() ? "cube" : "chip",
             "cube " + std::to_string(f) + (failed_[size_t(f)] ? " has failed already"
                                                                : " is not in the slice (a spare)"),
             "fail a cube the slice uses");
    if (!plan.bypasses.empty() && at < bypass_over_)
      p.fail("at", "at " + format_time_ps(at) + " comes before the previous cube_fail's job is "
                   "running again (" + format_time_ps(bypass_over_) + ")",
             "one failure at a time: give a later `at`");
    int spare = -1;
    for (int c = 0; c < cubes_ && spare < 0; ++c)
      if (!failed_[size_t(c)] && m0[size_t(2 * c)] < 0) spare = c;
    if (spare < 0)
      p.fail("at", "no spare cube is left to replace cube " + std::to_string(f) + " (the pod's " +
                       std::to_string(cubes_) + " cubes are in the slice or failed)",
             "give the pod more cubes than the slice uses (topology.cubes)");
    failed_[size_t(f)] = 1;
    CubeBypass b;
    b.failed_cube = f;
    b.spare_cube = spare;
    b.restart_ps = p.time_ps("restart_time");
    // Ports 2f, 2f + 1 (the failed cube's + and - faces) hand their circuits to 2s, 2s + 1.
    const auto to = [&](int q) {
      return q / 2 == f ? 2 * spare + q % 2 : q;
    };
    uint64_t dark = 0;
    for (size_t k = 0; k < pod_switches_.size(); ++k) {
      std::vector<int>& map = maps_[k];
      std::vector<int> next(map.size(), -1);
      for (size_t q = 0; q < map.size(); ++q)
        if (map[q] >= 0) next[size_t(to(int(q)))] = to(map[q]);
      OcsReconfig rc;
      rc.device = pod_switches_[k];
      rc.dark_ps = s_.type_of(rc.device).get<OcsParams>().reconfiguration_ps;
      rc.immediate = s_.type_of(rc.device).get<OcsParams>().immediate();
      rc.map = next;
      dark = std::max(dark, rc.dark_ps);
      map = next;
      b.reconfigs.push_back(int(plan.reconfigs.size()));
      plan.reconfigs.push_back(std::move(rc));
    }
    const std::string prefix = "t" + std::to_string(f) + "_";
    for (const topo::Device& d : g.devices) {
      if (!d.terminal || d.name.rfind(prefix, 0) != 0) continue;
      const auto it = g.by_name.find("t" + std::to_string(spare) + "_" + d.name.substr(prefix.size()));
      if (it == g.by_name.end()) continue;
      b.moves.push_back({d.endpoint_id, g.devices[size_t(it->second)].endpoint_id});
    }
    bypass_over_ = at + plan.detection_ps + dark + b.restart_ps;
    add(at, FaultAction::kCubeFail, int(plan.bypasses.size()));
    plan.bypasses.push_back(std::move(b));
    (void)e;
    return "cube_fail cube " + std::to_string(f) + (chip.empty() ? "" : " (" + chip + ")") +
           " at " + format_time_ps(at) + ": spare cube " + std::to_string(spare) +
           " takes its place (" + std::to_string(pod_switches_.size()) +
           " switches reconfigured, dark " + format_time_ps(dark) + ", restart " +
           format_time_ps(plan.bypasses.back().restart_ps) + ")";
  }

  bool on_circuit_switch(int device) const {
    return s_.type_of(device).kind->name == "optical_circuit_switch";
  }

  std::string link_name(int l) const {
    const topo::Link& k = s_.graph.links[size_t(l)];
    const auto end = [&](const topo::LinkEnd& e) {
      return s_.graph.devices[size_t(e.device)].name + ".port[" + std::to_string(e.port) + "]";
    };
    return end(k.a) + "-" + end(k.b);
  }

  // In-switch collectives keep reduction state in the switches and address group members
  // by port: their reaction to a failure is not modelled. auto leaves them out.
  void check_workload() {
    // The flow level moves messages as flows at fair rates: no ports, credits or transactions
    // for a failure to cut.
    if (s_.simulation.flow())
      src_.simulation.fail("fidelity",
                           "faults are modelled at the packet and transaction levels, not at "
                           "fidelity flow",
                           "use fidelity packet or transaction, or remove the faults section");
    const WorkloadSpec& w = s_.workload;
    // cube_fail halts and reruns the size sweep's running collective (CollectiveEngine).
    if (!s_.faults.bypasses.empty() && w.type != "allreduce_sweep" && w.type != "collective_sweep")
      src_.workload.fail("type",
                         "cube_fail is modelled with the size sweeps (allreduce_sweep, "
                         "collective_sweep), not with workload type " + w.type,
                         "use a size sweep, or remove the cube_fail event");
    if (!s_.faults.bypasses.empty() && w.protocol_model())
      src_.workload.fail("sync",
                         "cube_fail with sync: fence_flag (the protocol model) is not modelled",
                         "use sync: data, or remove the cube_fail event");
    if (coll::uses_nvls_switches(w.algorithm))
      src_.workload.fail("algorithm",
                         "faults with in-switch (NVLS) collectives are not modelled (" +
                             w.algorithm + " keeps reduction state in the switches)",
                         "use another algorithm, or remove the faults section");
    s_.auto_in_switch.clear();
    // Routing features that choose paths from the topology's coordinates (dragonfly's
    // minimal, Valiant, UGAL) would keep sending into a failed link: not modelled.
    for (const auto& [name, params] : src_.device_types) {
      const nlohmann::json& t = s_.resolved["device_types"][name];
      if (!t.is_object() || !t.contains("routing") || !t["routing"].is_string()) continue;
      const std::string routing = t["routing"].get<std::string>();
      if (routing != "shortest")
        params.fail("routing",
                    "faults with routing: " + routing + " are not modelled (it picks paths from "
                    "the dragonfly's coordinates, not from the routes recomputed after a "
                    "failure)",
                    "use routing: shortest, or remove the faults section");
    }
  }

  SystemSpec& s_;
  const SpecSources& src_;
  std::map<std::pair<int, int>, int> link_at_;  // (device, port) -> link index
  // cube_fail: the pod's switches and their maps as the failures so far leave them.
  std::vector<int> pod_switches_;
  std::vector<std::vector<int>> maps_;
  std::vector<char> failed_;
  int cubes_ = 0;
  uint64_t bypass_over_ = 0;
};

}  // namespace

void load_faults(SystemSpec& spec, const SpecSources& src, const YAML::Node& section) {
  if (!section.IsDefined() || section.IsNull()) return;
  if (!section.IsMap())
    cfg::fail(src.file, section, "faults",
              "expected a map, found " + cfg::describe_node(section),
              "e.g. faults: {events: [{type: link_down, link: \"gpu0.port[3]\", at: 20us}]}");
  Loader(spec, src).load(section);
}

std::vector<cfg::TypeSpec> fault_specs() {
  std::vector<cfg::TypeSpec> out{section_spec()};
  const std::vector<cfg::TypeSpec> events = event_specs();
  out.insert(out.end(), events.begin(), events.end());
  return out;
}

}  // namespace fabricsim
