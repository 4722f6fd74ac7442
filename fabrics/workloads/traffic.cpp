// Traffic workloads: point-to-point flows instead of collectives (the scale-out network's
// classic stress patterns), run as one job by fabrics/sim/traffic_run.h.
//  * incast: `senders` ranks each send `bytes` to one receiver, all at once;
//  * permutation: every rank sends `bytes` to another rank and receives from one (a random
//    derangement drawn from Rng(seed, "permutation"), or a fixed shift).
#include "fabrics/systems/system_spec.h"
#include "fabrics/workloads/workload.h"
#include "models/core/rng.h"
#include "models/core/units.h"

namespace fabricsim {

namespace {

using K = ParamKind;

void common(const cfg::Params& p, const cfg::Params& sim, SystemSpec& s) {
  WorkloadSpec& w = s.workload;
  // Point-to-point flows: what the rest of the system sees is a send/recv workload.
  w.collective = "sendrecv";
  w.algorithm = coll::algorithms_for("sendrecv").front();
  w.datatype = "int8";
  w.elem_bytes = 1;
  w.channels = 1;
  w.sync = coll::SyncProtocol{};
  if (s.simulation.functional)
    sim.fail("functional", "traffic workloads run timing only (no collective to check)",
             "set simulation.functional: false");
  const int64_t want = p.integer("ranks");
  if (want > int64_t(s.ranks.size()))
    p.fail("ranks",
           "ranks " + std::to_string(want) + " is more than the config's " +
               std::to_string(s.ranks.size()) + " ranks",
           "use 0 (all) or at most " + std::to_string(s.ranks.size()));
  if (want > 0) s.ranks.resize(size_t(want));
}

ParamSpec ranks_param() {
  return param("ranks", K::kInt, "0", "ranks",
               "Run on the first N ranks of the config; 0: every rank.", 0, 65536);
}

}  // namespace

WorkloadKind incast_workload() {
  WorkloadKind k;
  k.name = "incast";
  k.summary =
      "N:1 incast: `senders` ranks (the ones after `receiver`, wrapping) each send `bytes` to "
      "the receiver, all starting at once; reports flow completion times, goodput and the "
      "fairness of the senders' rates.";
  k.traffic = true;
  k.params = {param("senders", K::kInt, "", "ranks", "Senders (N of N:1).", 1, 65535),
              param("receiver", K::kInt, "0", "rank", "The receiving rank.", 0, 65535),
              param("bytes", K::kBytes, "2MB", "bytes", "Bytes each sender sends.", 1),
              ranks_param()};
  k.parse = [](const cfg::Params& p, const cfg::Params& sim, SystemSpec& s) {
    common(p, sim, s);
    const int n = int(s.ranks.size());
    const int senders = int(p.integer("senders")), rx = int(p.integer("receiver"));
    if (rx >= n)
      p.fail("receiver", "receiver " + std::to_string(rx) + " is not a rank (there are " +
                             std::to_string(n) + ")",
             "use a rank from 0 to " + std::to_string(n - 1));
    if (senders > n - 1)
      p.fail("senders",
             std::to_string(senders) + " senders need " + std::to_string(senders + 1) +
                 " ranks but there are " + std::to_string(n),
             "at most " + std::to_string(n - 1) + " senders");
    for (int i = 1; i <= senders; ++i)
      s.workload.flows.push_back(Flow{(rx + i) % n, rx, p.bytes("bytes"), 0});
  };
  return k;
}

WorkloadKind permutation_workload() {
  WorkloadKind k;
  k.name = "permutation";
  k.summary =
      "Permutation: every rank sends `bytes` to one other rank and receives from one (a random "
      "derangement from the seed, or rank + shift), all at once; reports flow completion "
      "times and the aggregate goodput.";
  k.traffic = true;
  k.params = {param("bytes", K::kBytes, "2MB", "bytes", "Bytes each rank sends.", 1),
              param("shift", K::kInt, "0", "ranks",
                    "0: a random derangement; s > 0: rank r sends to r + s (mod ranks), e.g. "
                    "the hosts of one dragonfly group to the next group (adversarial).",
                    0, 1 << 20),
              ranks_param()};
  k.parse = [](const cfg::Params& p, const cfg::Params& sim, SystemSpec& s) {
    common(p, sim, s);
    const int n = int(s.ranks.size());
    if (n < 2) p.fail("ranks", "a permutation needs at least 2 ranks", "use more ranks");
    const int shift = int(p.integer("shift"));
    if (shift > 0) {
      if (shift % n == 0)
        p.fail("shift", "shift " + std::to_string(shift) + " maps every rank to itself",
               "use a shift that is not a multiple of the " + std::to_string(n) + " ranks");
      for (int i = 0; i < n; ++i)
        s.workload.flows.push_back(Flow{i, (i + shift) % n, p.bytes("bytes"), 0});
      return;
    }
    // A uniform random derangement: shuffle until no rank maps to itself (expected e tries).
    Rng rng(s.seed, "permutation");
    std::vector<int> to(static_cast<size_t>(n));
    for (;;) {
      for (int i = 0; i < n; ++i) to[size_t(i)] = i;
      for (int i = n - 1; i > 0; --i) std::swap(to[size_t(i)], to[rng.below(uint64_t(i) + 1)]);
      bool ok = true;
      for (int i = 0; i < n; ++i) ok = ok && to[size_t(i)] != i;
      if (ok) break;
    }
    for (int i = 0; i < n; ++i) s.workload.flows.push_back(Flow{i, to[size_t(i)], p.bytes("bytes"), 0});
  };
  return k;
}

}  // namespace fabricsim
