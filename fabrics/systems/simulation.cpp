// The `simulation:` section: run-wide settings.
#include "fabrics/systems/system_spec.h"
#include "models/core/limits.h"
#include "models/core/units.h"

namespace fabricsim {

const ParamBlock& simulation_params() {
  using K = ParamKind;
  using S = SimulationParams;
  static const ParamBlock block = param_block<S>(
      "simulation",
      {bind(param("aggregate_bytes", K::kBytes, "0B", "bytes",
                  "Largest payload moved as one simulated transaction: a run of back-to-back "
                  "packets of one message whose wire time, credits and statistics stay "
                  "byte-exact. 0B or one packet's payload = per-packet simulation. Every "
                  "link's rx_buffer must hold one such transaction.",
                  0),
            &S::aggregate_bytes),
       bind(param("aggregate_min_message", K::kBytes, "0B", "bytes",
                  "Messages smaller than this always move packet by packet, so latency-bound "
                  "traffic (small collectives, acks, flags) keeps per-packet interleaving; "
                  "larger ones are aggregated (bandwidth-bound, where aggregation converges). "
                  "0B: aggregate every message.",
                  0),
            &S::aggregate_min_message),
       bind(param("aggregate_min_group_message", K::kBytes, "1TiB", "bytes",
                  "In-switch (NVLS) group messages of at least this size are aggregated "
                  "even below aggregate_min_message (the smaller of the two applies): "
                  "NCCL's NVLS chunks are 16-128 KiB, so large NVLS collectives would "
                  "otherwise run packet by packet (docs/architecture.md, \"Aggregation\").",
                  0),
            &S::aggregate_min_group_message),
       bind(choice("aggregate_round_robin_packets", {"false", "true", "nvls"}, "false",
                   "Under NCCL's protocol model a GPU's data messages share each port round "
                   "robin. false: each turn is one transaction. true: while two or more "
                   "messages take turns on a port each turn is one packet, as per packet, and "
                   "a message moves as aggregated transactions only while it has the port to "
                   "itself; a GPU's answers to NVLS reads go a packet per turn too while it "
                   "has data for the port (docs/architecture.md, \"Aggregation under round "
                   "robin\"). Costs CPU where messages share ports most of the time: a ring "
                   "sweep with 32 channels runs per packet. nvls: as true for NVLS group "
                   "messages (reduce requests, multicast stores) and the answers only; other "
                   "messages' turns stay whole transactions, so a ring costs what it does "
                   "with false."),
            &S::aggregate_round_robin_packets),
       bind(param("aggregate_fair_completion", K::kBool, "false", "",
                  "Under NCCL's protocol model, with whole transactions per round-robin turn "
                  "(aggregate_round_robin_packets false), the messages that share a GPU's "
                  "ports finish one after another where per packet they progress together "
                  "and finish late together. true: an aggregated message's last packet waits "
                  "until the processor sharing of the ports it can use would have finished "
                  "it (virtual time advanced by the bytes the ports send over the messages "
                  "not yet finished), then goes between the packets of a transaction on the "
                  "wire (docs/architecture.md, \"Fair completion\"). Costs a transaction "
                  "per held last packet and wake-ups at more distinct times: GB200 NVL72 "
                  "1 GiB ring ~1.7x the CPU."),
            &S::aggregate_fair_completion),
       bind(param("time_limit", K::kTime, "60s", "simulated time",
                  "Stop with an error (exit 2) if the workload has not finished by this "
                  "simulated time.",
                  1, limits::kMaxTimePs),
            &S::time_limit_ps),
       bind(param("functional", K::kBool, "false", "",
                  "Carry real numbers through the collectives and check every rank's result "
                  "exactly (for sizes up to 64MiB)."),
            &S::functional),
       bind(param("wall_limit", K::kTime, "86400s", "wall-clock time",
                  "The most wall-clock time a run may take. A run whose estimated work "
                  "(fabricsim check prints it) needs longer is refused before it starts, and "
                  "one still running at this limit stops (exit 2) with what it did.",
                  1e12, 1e18),
            &S::wall_limit_ps),
       bind(param("memory_limit", K::kBytes, "0B", "bytes",
                  "The most memory a run may use: a system whose estimated memory (devices, "
                  "ports, routes, schedules, packets in flight; fabricsim check prints it) "
                  "exceeds it is refused before it is built, and the process cannot allocate "
                  "more than it (plus a margin for the estimate's error). 0B: three quarters "
                  "of this machine's memory.",
                  0, 17592186044416.0),
            &S::memory_limit),
       bind(choice("fidelity", {"packet", "transaction", "flow"}, "packet",
                   "How the fabric is simulated. packet: every packet (the reference; "
                   "aggregate_bytes and aggregate_min_message are ignored); transaction: "
                   "back-to-back packets of a message move as one transaction of up to "
                   "aggregate_bytes (byte-exact wire time); flow: every message is a flow at "
                   "the max-min fair share of the links it crosses, recomputed on every flow "
                   "start and finish (docs/fidelity.md), for systems of 10,000 accelerators "
                   "and more. Unset: transaction if aggregate_bytes > 0, else packet."),
            &S::fidelity),
       bind(param("flow_fold", K::kBool, "false", "",
                  "fidelity flow: if the topology is invariant under shifting its nodes "
                  "(checked link by link) and so is the collective's schedule (checked on "
                  "one period of ranks), simulate one period of ranks and let every flow "
                  "stand for its images on the other nodes (docs/fidelity.md). Ring and "
                  "hierarchical all-reduce build only that period's programs; algorithm "
                  "auto runs the cheapest candidate that folds."),
            &S::flow_fold),
       bind(param("flow_window", K::kInt, "4", "messages",
                  "fidelity flow: data messages of one rank that move at once over the same "
                  "first-hop ports (the rest wait, oldest first). The packet level's DMA "
                  "cuts one message at a time, but the switches' buffers let it start the "
                  "next while the last drains towards a busy receiver; 1 makes the flow "
                  "level wait for the receiver instead (docs/fidelity.md). Without NCCL's "
                  "protocol model only (sync: data, protocol simple): under it every "
                  "thread block's message moves at once, as the packet level interleaves "
                  "them.",
                  1, 1024),
            &S::flow_window)},
      [](S& s, const ParamReader& r) {
        if (!r.was_set("fidelity")) s.fidelity = s.aggregate_bytes > 0 ? "transaction" : "packet";
        if (s.fidelity == "packet") s.aggregate_bytes = s.aggregate_min_message = 0;
        if (s.fidelity == "transaction" && s.aggregate_bytes == 0)
          r.fail("fidelity", "fidelity transaction needs simulation.aggregate_bytes > 0",
                 "set simulation.aggregate_bytes (e.g. 16KiB), or fidelity: packet");
        if (s.flow_fold && s.fidelity != "flow")
          r.fail("flow_fold", "flow_fold applies to fidelity flow only (fidelity is " +
                                  s.fidelity + ")",
                 "set simulation.fidelity: flow, or drop flow_fold");
        if (s.aggregate_bytes > (1ull << 30))
          r.fail("aggregate_bytes",
                 "aggregate_bytes " + format_bytes(s.aggregate_bytes) +
                     " is larger than the 1GiB a transaction can carry",
                 "use 64KiB or less");
      });
  return block;
}

}  // namespace fabricsim
