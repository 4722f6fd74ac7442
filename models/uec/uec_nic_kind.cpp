// The Ultra Ethernet NIC as a device kind: the NIC frame (models/nic/nic.h) with the UEC
// transport (uec_transport.h): PDS reliable unordered delivery, NSCC, spraying.
#include "models/core/units.h"
#include "models/nic/nic_kind.h"
#include "models/uec/uec_transport.h"

namespace fabricsim {

namespace {

void resolve(UecParams& u, const ParamReader& r) {
  u.reps_recycle_acked = r.str("reps_recycle") == "acked";
  u.nscc.network_rtt_ps = r.time_ps("base_rtt");
  u.nscc.target_delay_ps = r.time_ps("target_delay");
  u.nscc.max_window_bdp = r.real("max_window_bdp");
  u.nscc.md_gain = r.real("md_gain");
  u.nscc.md_floor = r.real("md_floor");
  u.nscc.fair_mtus = r.real("fair_increase_mtus");
  u.nscc.fast_gain = r.real("fast_increase_gain");
  u.nscc.eta_mtus = r.real("additive_increase_mtus");
  u.nscc.prop_mtus = r.real("proportional_gain_mtus");
  u.nscc.qa_gate = int(r.integer("quick_adapt_gate"));
  u.nscc.adjust_mtus = uint32_t(r.integer("adjust_mtus"));
  if (u.nscc.target_delay_ps && u.nscc.target_delay_ps >= 8 * u.nscc.network_rtt_ps)
    r.fail("target_delay",
           "target_delay " + format_time_ps(u.nscc.target_delay_ps) + " is 8 base RTTs (" +
               format_time_ps(u.nscc.network_rtt_ps) + ") or more: NSCC would never decrease",
           "0 derives it: 0.75 x base_rtt with trimming, else base_rtt");
}

ParamBlock uec_params_block() {
  using K = ParamKind;
  using U = UecParams;
  return param_block<U>(
      "uec",
      {bind(choice("cc", {"nscc", "rccc", "none"}, "nscc",
                   "Congestion control: nscc (sender window on ECN, delay and trims), rccc "
                   "(receiver credits paced at the receiver's line rate), none (a fixed window "
                   "of max_window_bdp x BDP)."),
            &U::cc),
       bind(choice("spraying", {"reps", "oblivious", "ecmp"}, "reps",
                   "Entropy per packet: reps (recycle unmarked entropies), oblivious (round "
                   "robin over `entropies`), ecmp (one entropy per connection: a single "
                   "hashed path)."),
            &U::spraying),
       bind(param("entropies", K::kInt, "256", "values",
                  "Entropy values a connection sprays over.", 1, 65536),
            &U::entropies),
       bind(param("reps_buffer", K::kInt, "8", "entropies",
                  "REPS ring of recycled entropies (the paper's default 8).", 1, 1024),
            &U::reps_buffer),
       choice("reps_recycle", {"echo", "acked"}, "echo",
              "What REPS recycles from an ack: echo (the entropy of the packet that triggered "
              "it, as htsim: with acks coalesced every 16 KiB most packets then explore) or "
              "acked (also the entropies of every first copy it newly acknowledges: they "
              "arrived unmarked, since a marked packet is acknowledged at once)."),
       bind(param("reps_freeze", K::kTime, "10ms", "us",
                  "REPS freezing after a loss (SACK gap or timeout): recycled entropies only, no "
                  "exploration (htsim's default 10 ms); a lost packet's entropy stays bad "
                  "(not recycled, not explored) as long, or until an unmarked ack of it.",
                  0),
            &U::reps_freeze_ps),
       bind(param("reorder_threshold", K::kInt, "32", "packets",
                  "A packet is declared lost (SACK gap) once this many packets sent after it "
                  "have arrived, or 1.5 windows of packets if more (sprayed packets overtake "
                  "each other by up to a window).",
                  1, 100000),
            &U::reorder_threshold),
       bind(param("trimming", K::kBool, "true", "",
                  "Packets may be trimmed by switches (a NACK brings them back); NSCC's target "
                  "delay is then 0.75 x base_rtt."),
            &U::trim_ok),
       param("base_rtt", K::kTime, "8us", "us",
             "Network base RTT NSCC scales with (a = BDP / 150,000 B with BDP = base_rtt x "
             "line rate; target delay): the fabric's longest unloaded RTT. Also every "
             "connection's base RTT when path_base_rtt is false.",
             1),
       bind(param("path_base_rtt", K::kBool, "true", "",
                  "Each connection's base RTT (its window's BDP, its queueing delay = RTT - "
                  "base RTT) is its path's unloaded RTT, from the topology (as htsim's "
                  "-enable_accurate_base_rtt); false: base_rtt for all. Either way shorter "
                  "measured RTTs lower it."),
            &U::path_base_rtt),
       param("target_delay", K::kTime, "0ns", "us",
             "NSCC target queueing delay; 0: 0.75 x base_rtt with trimming, else base_rtt.", 0),
       param("max_window_bdp", K::kReal, "1.5", "x BDP", "Largest window (UEC default 1.5).",
             0.1, 100),
       param("md_gain", K::kReal, "0.8", "",
             "Multiplicative decrease gain: cwnd x max(1 - gain x (avg - target)/avg, floor).",
             0, 1),
       param("md_floor", K::kReal, "0.5", "", "Smallest multiplicative-decrease factor.", 0, 1),
       param("fair_increase_mtus", K::kReal, "5", "MTU x a", "Fair increase (UEC: 5 MTU x a).",
             0, 1000),
       param("fast_increase_gain", K::kReal, "0.25", "x a per byte",
             "Fast increase per acked byte while the delay stays under 1 us (UEC: 0.25 x a).",
             0, 100),
       param("additive_increase_mtus", K::kReal, "0.15", "MTU x a",
             "Additive increase per adjust period (UEC: 0.15 MTU x a).", 0, 1000),
       param("proportional_gain_mtus", K::kReal, "4", "MTU x a x b",
             "Proportional increase gain (UEC: 4 MTU x a x b).", 0, 1000),
       param("quick_adapt_gate", K::kInt, "3", "shift",
             "QuickAdapt when a base RTT delivered less than max window >> gate (UEC: 3).", 0,
             16),
       param("adjust_mtus", K::kInt, "8", "MTU",
             "Increases are applied every this many MTU acked, or every base RTT (UEC: 8).", 1,
             1000),
       bind(param("receiver_penalty", K::kInt, "0", "/128",
                  "NSCC receiver penalty: while the receiving NIC's queue to its GPU exceeds "
                  "penalty_backlog, acks carry pend = this and the sender takes "
                  "(newly acked x pend) >> 7 off its window; 0: off.",
                  0, 128),
            &U::receiver_penalty),
       bind(param("penalty_backlog", K::kBytes, "64KiB", "bytes",
                  "Host-side backlog above which the receiver penalises (receiver_penalty).", 0),
            &U::penalty_backlog_bytes),
       bind(param("credit_chunk", K::kBytes, "16KiB", "bytes",
                  "cc: rccc: credit per grant (one grant per chunk time at the line rate).", 1),
            &U::credit_chunk_bytes)},
      resolve);
}

}  // namespace

DeviceKind uec_nic_kind() {
  return nic_device_kind(
      "uec_nic",
      "An Ultra Ethernet NIC: host ports to GPUs, one Ethernet port; PDS reliable unordered "
      "delivery (PSNs, SACK, retransmission on trim NACK, SACK gaps and timeout), NSCC or "
      "receiver credits, oblivious or REPS spraying (in `device_types:`).",
      uec_params_block(), [](const std::any& p, NicServices& nic) -> std::unique_ptr<Transport> {
        return std::make_unique<UecTransport>(std::any_cast<const UecParams&>(p), nic);
      },
      // About htsim's UEC minimum RTO at 400 Gb/s with 1-BDP queues (72 us).
      "100us",
      // A lossy class: trimmed, not paused (switches keep PFC for RoCE's class 3).
      "1");
}

}  // namespace fabricsim
