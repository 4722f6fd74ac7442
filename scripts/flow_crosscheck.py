#!/usr/bin/env python3
"""Flow level against the packet (or transaction) level on shipped configs.

Runs every case twice with the same binary: as shipped (the reference: per packet, or
aggregated where the config sets simulation.aggregate_bytes) and with
--set simulation.fidelity=flow, and prints one Markdown row per collective size with both
times and the flow level's error (flow / reference - 1). Usage:

    scripts/flow_crosscheck.py [--bin build/fabricsim] [--only NAME[,NAME]] [--out DIR]

Each run's user CPU seconds are printed too (from getrusage of the child).
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile

ALLTOALL = ("workload={type: collective_sweep, collective: alltoall, algorithm: direct, "
            "min_bytes: 1MiB, max_bytes: 16MiB, step_factor: 4, datatype: float}")

# name, config, extra --set arguments (both levels), what it shows
CASES = [
    ("dgx_h100", "configs/dgx_h100.yaml", [], "NVLink4 + NVSwitch3, ring, 1 MiB-8 GiB"),
    ("gb200_nvl72", "configs/gb200_nvl72.yaml", [], "72 GPUs x 18 planes, ring, 1 GiB"),
    # The transaction level is 18.6% slow on this config from 128 MiB (docs/fidelity.md,
    # the gb200_nvl72 bullet): the same system against per packet, at 256 MiB (about 330
    # CPU s; 1 GiB per packet takes 2.5 CPU hours).
    ("gb200_nvl72_pp256", "configs/gb200_nvl72.yaml",
     ["workload.min_bytes=256MiB", "workload.max_bytes=256MiB", "simulation.aggregate_bytes=0B"],
     "72 GPUs x 18 planes, ring, 256 MiB, reference per packet"),
    ("2x_ib", "configs/2x_dgx_h100_ib.yaml", [], "2 nodes, NDR rails, ring, 1 MiB-1 GiB"),
    ("16x_ib_ring", "configs/16x_dgx_h100_ib.yaml", ["workload.algorithm=ring"],
     "16 nodes, ring, 64 KiB-16 MiB"),
    ("16x_ib_hier", "configs/16x_dgx_h100_ib.yaml", ["workload.algorithm=hierarchical"],
     "16 nodes, hierarchical, 64 KiB-16 MiB"),
    ("ualink_pod8", "configs/ualink_pod8.yaml", ["workload.max_bytes=1GiB"],
     "UALink 8 accelerators, ring, 1 MiB-1 GiB"),
    ("eth_fat_tree_a2a", "configs/eth_fat_tree_128.yaml", [ALLTOALL],
     "128 hosts, UEC NICs, 2-tier fat tree, all-to-all direct, 1-16 MiB"),
]


def run(binary, config, sets, flow):
    with tempfile.TemporaryDirectory() as d:
        args = [binary, "run", config, "--quiet", "--out", d]
        for s in sets:
            args += ["--set", s]
        if flow:
            args += ["--set", "simulation.fidelity=flow"]
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
        r = subprocess.run(args, capture_output=True, text=True)
        cpu = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before
        if r.returncode != 0:
            sys.exit(f"{' '.join(args)}: exit {r.returncode}\n{r.stderr}")
        with open(os.path.join(d, "results.json")) as f:
            j = json.load(f)
        return j, cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/fabricsim")
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    only = set(x for x in a.only.split(",") if x)
    table = []
    print("| case | size (B) | reference time (us) | flow time (us) | error | reference CPU (s) | flow CPU (s) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, config, sets, what in CASES:
        if only and name not in only:
            continue
        ref, ref_cpu = run(a.bin, config, sets, False)
        flo, flo_cpu = run(a.bin, config, sets, True)
        fid = ref["resolved_config"]["simulation"].get("fidelity", "")
        for i, (x, y) in enumerate(zip(ref["rows"], flo["rows"])):
            err = y["time_us"] / x["time_us"] - 1.0
            cpu = f"| {ref_cpu:.2f} | {flo_cpu:.2f} |" if i == 0 else "| | |"
            print(f"| {name} | {x['size_bytes']} | {x['time_us']:.2f} | {y['time_us']:.2f} | "
                  f"{100 * err:+.2f}% {cpu}", flush=True)
            table.append({"case": name, "what": what, "reference_fidelity": fid,
                          "size_bytes": x["size_bytes"], "reference_us": x["time_us"],
                          "flow_us": y["time_us"], "error": err,
                          "reference_cpu_s": ref_cpu, "flow_cpu_s": flo_cpu})
    if a.out:
        with open(a.out, "w") as f:
            json.dump(table, f, indent=1)


if __name__ == "__main__":
    main()
