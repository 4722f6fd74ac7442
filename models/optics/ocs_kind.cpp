// The optical circuit switch as a device kind: its parameters (ports, pass latency, the
// circuit map, the link budget, power), the check of a built device (one link type on
// every port; every lit circuit's budget closes) and its model. docs/optical.md.
#include <cstdio>

#include "models/core/device_kind.h"
#include "models/link/link_params.h"
#include "models/link/link_type.h"
#include "models/optics/ocs.h"

namespace fabricsim {

namespace {

std::string db(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", x);
  return buf;
}

}  // namespace

DeviceKind ocs_kind() {
  using K = ParamKind;
  using O = OcsParams;
  DeviceKind k;
  k.name = "optical_circuit_switch";
  k.summary =
      "A MEMS optical circuit switch: duplex ports joined in pairs by a circuit map, no "
      "buffering, a fixed pass latency, a link budget and per-port power (in `device_types:`).";
  k.params.push_back(param_block<O>(
      "optical_circuit_switch",
      {bind(choice("protocol", link_protocols(), "", "Protocol of the links on its ports "
                                                     "(light carries whatever they carry)."),
            &O::protocol),
       bind(param("ports", K::kInt, "136", "ports",
                  "Duplex ports (Palomar-class MEMS OCS: 136, of which a TPU v4 pod uses 128).",
                  2, 4096),
            &O::ports),
       bind(param("pass_latency", K::kTime, "10ns", "ns",
                  "Light's time through the switch (collimators and mirror path); "
                  "assumption: about 2 m of optical path.",
                  0),
            &O::pass_latency_ps),
       bind(param("reconfiguration_time", K::kTime, "10ms", "ns",
                  "How long a circuit that a reconfiguration changes stays dark while the "
                  "mirrors move and settle (faults: ocs_reconfigure). Assumption: MEMS mirrors "
                  "settle in milliseconds (ms-class; the Palomar figure is not published at "
                  "this precision); use us-class values for fast (e.g. piezo or "
                  "silicon-photonic) switches and ns-class for SOA/electro-optic ones.",
                  0),
            &O::reconfiguration_ps),
       bind(choice("reconfiguration_mode", {"drain", "immediate"}, "drain",
                   "How a reconfiguration treats light in flight on a changed circuit: drain "
                   "(the mirrors move once the last light sent into it has passed them; "
                   "nothing is cut) or immediate (they move at once; what had not passed "
                   "them is cut and recovered as a link failure's cut is, by the link's "
                   "protocol: link-level replay, end-to-end retransmission, or lost for "
                   "good on generic links; docs/optical.md)."),
            &O::reconfiguration_mode),
       bind(param("circuits", K::kIntList, "[]", "port pairs",
                  "The circuit map as pairs [a0, b0, a1, b1, ...]: port a_i <-> port b_i. A "
                  "port in no pair is dark; a port may be named once. A topology generator "
                  "may set the map per device instead (tpu_pod)."),
            &O::circuits),
       bind(param("insertion_loss_db", K::kReal, "2.0", "dB",
                  "Optical loss of one pass through the switch (Palomar: < 2 dB, "
                  "unconfirmed; the bound is used).",
                  0, 40),
            &O::insertion_loss_db),
       bind(param("connector_loss_db", K::kReal, "0.3", "dB",
                  "Loss per connector (assumption: typical single-mode LC/MPO).", 0, 10),
            &O::connector_loss_db),
       bind(param("connectors", K::kInt, "4", "connectors",
                  "Connectors on one transmitter-to-receiver path (assumption: a patch panel "
                  "and the switch face on each side).",
                  0, 64),
            &O::connectors),
       bind(param("fibre_loss_db_per_km", K::kReal, "0.4", "dB/km",
                  "Fibre attenuation (single-mode at 1310 nm, G.652: 0.3-0.4 dB/km).", 0, 10),
            &O::fibre_loss_db_per_km),
       bind(param("fibre_length_m", K::kReal, "50", "m",
                  "Fibre from a transceiver to the switch (each side; assumption).", 0, 100000),
            &O::fibre_length_m),
       bind(param("launch_power_dbm", K::kReal, "1.0", "dBm",
                  "Transceiver launch power per lane (assumption: 400G-FR4-class optics).",
                  -40, 20),
            &O::launch_power_dbm),
       bind(param("rx_sensitivity_dbm", K::kReal, "-6.0", "dBm",
                  "Receiver sensitivity per lane (assumption: 400G-FR4-class optics).", -60,
                  20),
            &O::rx_sensitivity_dbm),
       bind(param("margin_db", K::kReal, "1.0", "dB",
                  "Budget margin every circuit must keep above the sensitivity (assumption).",
                  0, 40),
            &O::margin_db),
       bind(param("power_per_port_w", K::kReal, "0.79", "W",
                  "Electrical power per port (mirror drive and servo), whether lit or not; "
                  "108 W / 136 ports for Palomar (unconfirmed). No per-bit cost.",
                  0, 100),
            &O::power_per_port_w)},
      [](O& o, const ParamReader& r) {
        if (o.circuits.size() % 2)
          r.fail("circuits",
                 "has " + std::to_string(o.circuits.size()) +
                     " entries: port " + std::to_string(o.circuits.back()) + " has no partner",
                 "write the map as pairs [a0, b0, a1, b1, ...]");
        const int bad = circuit_map(o.circuits, o.ports, o.map);
        if (bad >= 0) {
          const int64_t x = o.circuits[size_t(bad)];
          if (x < 0 || x >= o.ports)
            r.fail("circuits",
                   "circuits[" + std::to_string(bad) + "] names port " + std::to_string(x) +
                       ", which the switch lacks",
                   "ports are 0.." + std::to_string(o.ports - 1));
          size_t first = 0;
          while (first < size_t(bad) && o.circuits[first] != x) ++first;
          r.fail("circuits",
                 "port " + std::to_string(x) + " is named twice (circuits[" +
                     std::to_string(first) + "] and circuits[" + std::to_string(bad) + "])",
                 "a port carries one circuit: each port may appear once in the map");
        }
      }));
  k.ports = [](const DeviceType& t) {
    const O& o = t.get<O>();
    return std::vector<PortGroup>{{"optical", o.ports, o.protocol}};
  };
  // A generator's coordinates, when given, are the device's own circuit map.
  k.circuits = [](const DeviceType& t, const std::vector<int>& coords) {
    return coords.empty() ? t.get<O>().map : coords;
  };
  k.check = [](const DeviceCheck& c) {
    const O& o = c.type().get<O>();
    const auto& links = c.links();
    // Light does not convert: every circuit joins two links of one type, so the sender's
    // credits count a receive buffer of the size it expects.
    for (size_t i = 1; i < links.size(); ++i)
      if (links[i].link_type != links[0].link_type)
        c.fail_link(i,
                    c.device() + " joins link types " + links[0].link_type + " and " +
                        links[i].link_type,
                    "an optical circuit switch passes light: use one link type on all its ports");
    // A fibre ends here: a link type declared copper cannot (the cost proxy would count
    // no transceivers for light it cannot carry).
    for (size_t i = 0; i < links.size(); ++i)
      if (links[i].link.medium == "copper")
        c.fail_link(i,
                    c.device() + " is an optical circuit switch, but link type " +
                        links[i].link_type + " is declared medium: copper",
                    "set link_types." + links[i].link_type +
                        ".medium: optical (or auto, which counts it optical here)");
    const std::vector<int>& map = c.coords().empty() ? o.map : c.coords();
    bool lit = false;
    for (size_t p = 0; p < map.size(); ++p) lit = lit || map[p] >= 0;
    if (!lit) return;
    const double rx = o.received_dbm(), need = o.rx_sensitivity_dbm + o.margin_db;
    if (rx < need)
      c.fail_param("launch_power_dbm",
                   "the link budget of " + c.device() + "'s circuits does not close: launch " +
                       db(o.launch_power_dbm) + " dBm - loss " + db(o.path_loss_db()) +
                       " dB (insertion " + db(o.insertion_loss_db) + ", " +
                       std::to_string(o.connectors) + " connectors x " +
                       db(o.connector_loss_db) + ", 2 x " + db(o.fibre_length_m) +
                       " m of fibre at " + db(o.fibre_loss_db_per_km) + " dB/km) = " + db(rx) +
                       " dBm < sensitivity " + db(o.rx_sensitivity_dbm) + " dBm + margin " +
                       db(o.margin_db) + " dB",
                   "raise launch_power_dbm, shorten fibre_length_m or use fewer connectors");
  };
  // Per port, lit or dark; light costs no energy per bit (the transceivers are the links').
  k.power = [](const DeviceType& t) { return DevicePower{t.get<O>().power_w(), 0.0}; };
  k.create = [](const DeviceBuild& b) -> std::unique_ptr<DeviceModel> {
    const O& o = b.type.get<O>();
    return std::make_unique<Ocs>(b.name.c_str(), b.name, o, b.used_ports,
                                 b.coords.empty() ? o.map : b.coords);
  };
  return k;
}

}  // namespace fabricsim
