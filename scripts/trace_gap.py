#!/usr/bin/env python3
"""Where two runs of the same schedule drift apart, from their traces.

    scripts/trace_gap.py RUN.json REFERENCE.json [--bins N]
                         [--durations PREFIX --from US --to US]

Both files are `fabricsim run ... --trace FILE` outputs of the same config and schedule
(say aggregated and per packet: docs/fidelity.md). Every op of every rank is matched by
rank, row and op index. The ops are binned by their end time in REFERENCE; for each bin
the script prints the mean and the 5th, 50th and 95th percentiles of end(RUN) -
end(REFERENCE), in us. A gap that grows steadily is a rate difference; one that appears
at the start and stays is a start-up difference.

With --durations PREFIX it also prints the percentiles of the durations of the ops whose
name starts with PREFIX (e.g. "send") that start between --from and --to us, in both runs.

Traces keep at most --trace-max-ops ops (default 200,000): raise it so that both traces
hold the whole run. A 512 MiB GB200 NVL72 ring trace is ~0.4 GB; reading two takes a few
GB of memory.
"""
import argparse
import json
import sys


def load(path):
    with open(path) as f:
        doc = json.load(f)
    ops = {}
    for e in doc["traceEvents"]:
        args = e.get("args")
        if e.get("ph") != "X" or not args or "op" not in args:
            continue
        ops[(e["pid"], args.get("row", 0), args["op"])] = (e["ts"], e["ts"] + e["dur"], e["name"])
    return ops


def pct(sorted_values, q):
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * q))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run")
    ap.add_argument("reference")
    ap.add_argument("--bins", type=int, default=25)
    ap.add_argument("--durations", metavar="PREFIX")
    ap.add_argument("--from", dest="lo", type=float, default=0.0)
    ap.add_argument("--to", dest="hi", type=float, default=float("inf"))
    a = ap.parse_args()
    run, ref = load(a.run), load(a.reference)
    keys = [k for k in ref if k in run]
    if not keys:
        sys.exit("trace_gap: the two traces have no op in common (same config and schedule?)")
    print(f"ops: {len(run)} in {a.run}, {len(ref)} in {a.reference}, {len(keys)} matched")
    end = max(ref[k][1] for k in keys)
    bins = [[] for _ in range(a.bins)]
    for k in keys:
        b = min(a.bins - 1, int(ref[k][1] / end * a.bins))
        bins[b].append(run[k][1] - ref[k][1])
    print("reference end (us)      ops   gap (us): mean      p5     p50     p95")
    for b, v in enumerate(bins):
        if not v:
            continue
        v.sort()
        print(f"{b * end / a.bins:8.1f}-{(b + 1) * end / a.bins:8.1f} {len(v):9d}"
              f"  {sum(v) / len(v):14.3f} {pct(v, 0.05):7.3f} {pct(v, 0.5):7.3f} {pct(v, 0.95):7.3f}")
    if a.durations:
        for name, ops in ((a.run, run), (a.reference, ref)):
            d = sorted(v[1] - v[0] for v in ops.values()
                       if v[2].startswith(a.durations) and a.lo <= v[0] <= a.hi)
            if not d:
                print(f"{name}: no '{a.durations}' op starts in [{a.lo}, {a.hi}] us")
                continue
            print(f"{name}: {len(d)} '{a.durations}' ops, duration (us) p1 {pct(d, 0.01):.3f}"
                  f" p10 {pct(d, 0.1):.3f} p50 {pct(d, 0.5):.3f} p90 {pct(d, 0.9):.3f}"
                  f" p99 {pct(d, 0.99):.3f} mean {sum(d) / len(d):.3f}")


if __name__ == "__main__":
    main()
