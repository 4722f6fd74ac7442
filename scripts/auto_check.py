#!/usr/bin/env python3
"""`auto` against every candidate it chooses from, on the shipped multi-node configs.

For every case below: one run with `algorithm: auto` and `protocol: auto` over the case's
sizes, then one run per candidate the cost model lists (results.json auto_cost_model:
algorithm, slices for the two-level NVLS algorithm, protocol) named explicitly. Prints one
Markdown row per size: auto's pick and time, the fastest explicit candidate and its time,
and auto's excess over it (auto / best - 1); rows above the tolerance are marked SLOWER.
Usage:

    scripts/auto_check.py [--bin build/fabricsim] [--only NAME[,NAME]] [--tol 0.03]
                          [-j N] [--detail] [--sizes MIN,MAX,FACTOR]

Exits 1 when a row is slower than the best candidate by more than --tol. The CPU (user)
seconds of all runs are printed at the end. --detail adds, per size, every candidate's
simulated time (fastest first); --sizes replaces the cases' sizes (e.g. 1MiB,16MiB,16).
"""
import argparse
import concurrent.futures
import json
import os
import resource
import subprocess
import sys
import tempfile

# name, config, extra --set arguments, sizes (min, max, factor), what it is. `auto` is
# algorithm: auto and protocol: auto unless the extra arguments name an algorithm (then
# protocol: auto over that algorithm, as configs/2x_dgx_h100_ib.yaml ships).
CASES = [
    ("2x_ib", "configs/2x_dgx_h100_ib.yaml", ["workload.algorithm=ring"], ("1MiB", "64MiB", 4),
     "2 x DGX H100, NDR rails, ring (as shipped)"),
    ("2x_ib_algo", "configs/2x_dgx_h100_ib.yaml", ["workload.type=collective_sweep",
                                                   "workload.collective=all_reduce"],
     ("1MiB", "16MiB", 16), "2 x DGX H100, NDR rails, every algorithm"),
    ("16x_ib", "configs/16x_dgx_h100_ib.yaml", [], ("64KiB", "16MiB", 4),
     "16 x DGX H100, NDR rails (as shipped)"),
    # The 32-node rail cluster cut to 2 nodes (16 ranks, one rail switch per rail, no
    # spines) for runtime: the same GPUs, NICs and rails on Ethernet.
    ("2x_rail_uec", "configs/32x_dgx_h100_rail.yaml",
     ["topology.nodes=2", "topology.spines=0", "topology.uplinks_per_rail=0",
      "topology.scale_out=uec", "workload.type=collective_sweep",
      "workload.collective=all_reduce"], ("1MiB", "16MiB", 16),
     "2 x DGX H100, 400G Ultra Ethernet rails"),
    ("2x_rail_roce", "configs/32x_dgx_h100_rail.yaml",
     ["topology.nodes=2", "topology.spines=0", "topology.uplinks_per_rail=0",
      "topology.scale_out=roce", "workload.type=collective_sweep",
      "workload.collective=all_reduce"], ("1MiB", "16MiB", 16),
     "2 x DGX H100, 400G RoCEv2 rails"),
    # The single-node control: the collectives issue's acceptance-1 command.
    ("dgx_nvls_off", "configs/dgx_h100.yaml", ["device_types.nvswitch3.nvls=false"],
     ("1MiB", "16MiB", 16), "DGX H100, NVLS off"),
    # One NVLink domain of 576 GPUs behind two switch tiers, per packet at 64 KiB (the
    # ring/simple candidate is ~50 CPU s and 3 GB; not in the default set).
    ("nvl576", "configs/nvl576_two_tier.yaml", ["simulation.fidelity=packet"],
     ("64KiB", "64KiB", 4), "NVL576 two-tier, per packet"),
]


def run(binary, config, sets):
    """(results.json, user CPU s) of one run."""
    with tempfile.TemporaryDirectory() as out:
        cmd = [binary, "run", config, "--quiet", "--out", out]
        for s in sets:
            cmd += ["--set", s]
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
        p = subprocess.run(cmd, capture_output=True, text=True)
        cpu = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before
        if p.returncode != 0:
            sys.exit(f"auto_check: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")
        with open(os.path.join(out, "results.json")) as f:
            return json.load(f), cpu


def candidate_sets(label):
    """--set arguments naming candidate `label` (algo[/slices]/proto) explicitly."""
    parts = label.split("/")
    sets = [f"workload.algorithm={parts[0]}", f"workload.protocol={parts[-1]}"]
    if len(parts) == 3:
        sets.append(f"workload.slices={parts[1]}")
    return sets


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="build/fabricsim")
    ap.add_argument("--only", default="")
    ap.add_argument("--tol", type=float, default=0.03)
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--detail", action="store_true")
    ap.add_argument("--sizes", default="")
    args = ap.parse_args()
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    only = set(filter(None, args.only.split(","))) or {c[0] for c in CASES if c[0] != "nvl576"}
    cpu_total = 0.0
    worst = 0.0
    print(f"| case | size | auto's pick | auto (us) | fastest explicit | its time (us) "
          f"| auto / fastest - 1 |")
    print("|---|---|---|---|---|---|---|")
    details = []
    for name, config, extra, (lo, hi, factor), _what in CASES:
        if name not in only:
            continue
        if args.sizes:
            lo, hi, factor = args.sizes.split(",")
        base = extra + [f"workload.min_bytes={lo}", f"workload.max_bytes={hi}",
                        f"workload.step_factor={factor}"]
        named = any(x.startswith("workload.algorithm=") for x in extra)
        auto, cpu = run(args.bin, config, base + ([] if named else ["workload.algorithm=auto"]) +
                        ["workload.protocol=auto"])
        cpu_total += cpu
        labels = sorted(auto["auto_cost_model"])
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.j) as ex:
            futs = {l: ex.submit(run, args.bin, config, base + candidate_sets(l))
                    for l in labels}
            explicit = {}
            for l, fut in futs.items():
                res, cpu = fut.result()
                cpu_total += cpu
                explicit[l] = {r["size_bytes"]: r["time_us"] for r in res["rows"]}
        for row in auto["rows"]:
            size = row["size_bytes"]
            best = min(labels, key=lambda l: explicit[l][size])
            excess = row["time_us"] / explicit[best][size] - 1
            worst = max(worst, excess)
            flag = " SLOWER" if excess > args.tol else ""
            print(f"| {name} | {size} | {row['algorithm']} | {row['time_us']:.2f} | {best} "
                  f"| {explicit[best][size]:.2f} | {100 * excess:+.1f}%{flag} |", flush=True)
            ranked = sorted(labels, key=lambda l: explicit[l][size])
            details.append(f"{name} {size}: " +
                           ", ".join(f"{l} {explicit[l][size]:.2f}" for l in ranked))
    if args.detail:
        print("\nevery candidate, fastest first (us):")
        for d in details:
            print(d)
    print(f"\nworst excess {100 * worst:+.1f}% (tolerance {100 * args.tol:.0f}%); "
          f"CPU (user) {cpu_total:.0f} s")
    return 1 if worst > args.tol else 0


if __name__ == "__main__":
    sys.exit(main())
