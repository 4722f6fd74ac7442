// The RoCEv2 NIC as a device kind: the NIC frame (models/nic/nic.h) with the RoCEv2
// transport (roce_transport.h): go-back-N queue pairs rate-limited by DCQCN.
#include "models/nic/nic_kind.h"
#include "models/roce/roce_transport.h"

namespace fabricsim {

namespace {

ParamBlock roce_params_block() {
  using K = ParamKind;
  using R = RoceParams;
  return param_block<R>(
      "roce",
      {bind(param("dcqcn", K::kBool, "true", "",
                  "DCQCN rate control (reaction point at the sender, notification point at the "
                  "receiver); false: every queue pair at line rate."),
            &R::dcqcn),
       param("dcqcn_g", K::kReal, "0.00390625", "",
             "EWMA gain of alpha (1/256, HPCC reference configuration).", 0, 1),
       param("dcqcn_alpha_timer", K::kTime, "1us", "us",
             "Alpha decays by (1 - g) every this long without a CNP (HPCC reference "
             "configuration's ALPHA_RESUME_INTERVAL; the DCQCN paper uses 55 us).",
             1),
       param("dcqcn_rate_timer", K::kTime, "900us", "us",
             "Rate-increase timer T (HPCC reference configuration).", 1),
       param("dcqcn_rate_decrease_interval", K::kTime, "4us", "us",
             "At most one rate decrease this often (HPCC reference configuration).", 0),
       param("dcqcn_byte_counter", K::kBytes, "10MB", "bytes",
             "Rate-increase byte counter B (DCQCN paper).", 1),
       param("dcqcn_fast_recovery", K::kInt, "1", "steps",
             "F: rate increases in fast recovery before additive increase (HPCC reference "
             "configuration; the DCQCN paper uses 5).",
             1, 100),
       param("dcqcn_ai", K::kBandwidth, "50Mb/s", "Mb/s",
             "Additive increase R_AI (HPCC reference configuration).", 1),
       param("dcqcn_hai", K::kBandwidth, "100Mb/s", "Mb/s",
             "Hyper increase R_HAI (HPCC reference configuration).", 1),
       param("dcqcn_min_rate", K::kBandwidth, "100Mb/s", "Mb/s",
             "Lowest rate (HPCC reference configuration).", 1),
       bind(param("cnp_interval", K::kTime, "50us", "us",
                  "Notification point: at most one CNP per queue pair this often (DCQCN "
                  "paper).",
                  0),
            &R::cnp_interval_ps),
       bind(param("wire_overhead_bytes", K::kBytes, "106B", "bytes",
                  "Bytes a packet takes on the wire besides its payload, for pacing: L3 "
                  "headers 64 + Ethernet 18 + 802.1Q 4 + preamble and gap 20.",
                  0, 4096),
            &R::wire_overhead_bytes)},
      [](R& r, const ParamReader& v) {
        r.rp.g = v.real("dcqcn_g");
        r.rp.alpha_timer_ps = v.time_ps("dcqcn_alpha_timer");
        r.rp.rate_timer_ps = v.time_ps("dcqcn_rate_timer");
        r.rp.rate_decrease_interval_ps = v.time_ps("dcqcn_rate_decrease_interval");
        r.rp.byte_counter_bytes = v.bytes("dcqcn_byte_counter");
        r.rp.fast_recovery_steps = uint32_t(v.integer("dcqcn_fast_recovery"));
        r.rp.ai_bps = v.bandwidth_bps("dcqcn_ai");
        r.rp.hai_bps = v.bandwidth_bps("dcqcn_hai");
        r.rp.min_rate_bps = v.bandwidth_bps("dcqcn_min_rate");
      });
}

}  // namespace

DeviceKind roce_nic_kind() {
  return nic_device_kind(
      "roce_nic",
      "A RoCEv2 NIC: host ports to GPUs, one Ethernet port; reliable connected queue pairs "
      "with go-back-N, DCQCN rate control and CNPs; normally over PFC (in `device_types:`).",
      roce_params_block(), [](const std::any& p, NicServices& nic) -> std::unique_ptr<Transport> {
        return std::make_unique<RoceTransport>(std::any_cast<const RoceParams&>(p), nic);
      },
      // ASSUMPTION: far below ConnectX defaults (4.096 us x 2^14 = 67 ms) so that lossy runs
      // end soon, yet above the milliseconds PFC's unfairness can hold a packet (a 32:1
      // incast across pods sees over 1 ms).
      "4ms",
      // The lossless priority RoCE deployments use (switches' pfc_classes default).
      "3");
}

}  // namespace fabricsim
