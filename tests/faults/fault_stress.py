#!/usr/bin/env python3
"""Random fault plans on every kind of fabric (docs/faults.md, "Tests").

    fault_stress.py FABRICSIM [SEED] [PLANS_PER_SYSTEM]

For each system below (NVLink, PCIe with and without peer-to-peer, UALink, InfiniBand,
Ethernet with Ultra Ethernet and with RoCE NICs, a training workload), runs it once
without faults to learn its linked ports and switches, then PLANS_PER_SYSTEM random fault
plans (1-3 events of every type: link_down and port_down with or without up_at, link_flap,
switch_down with or without up_at, ber_burst; random times, targets and detection times)
given with --set faults=... Each run must end in exit 0, or exit 2 saying which fault left
the workload unable to finish (or the time limit); never a refused plan, exit 3 (an internal error: a lost packet, a credit or
ledger imbalance, a deadlock) or a signal. Prints one line per failure and a summary;
exits 1 if anything failed. The same SEED gives the same plans.
"""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# name: (config, --set values making it small)
SYSTEMS = {
    "nvlink_minimal": ("configs/minimal.yaml", []),
    "nvlink_dgx_h100": ("configs/dgx_h100.yaml",
                        ["workload.min_bytes=1MiB", "workload.max_bytes=4MiB",
                         "simulation.aggregate_bytes=16KiB"]),
    "infiniband_2_nodes": ("configs/2x_dgx_h100_ib.yaml",
                           ["workload.min_bytes=1MiB", "workload.max_bytes=2MiB"]),
    "infiniband_leaf_spine": ("configs/ib_leaf_spine.yaml",
                              ["workload.min_bytes=4MiB", "workload.max_bytes=4MiB",
                               "link_types.ndr.replay_buffer=1MiB"]),  # room for bursts
    "pcie_host": ("configs/pcie_8gpu.yaml", ["workload.min_bytes=1MiB", "workload.max_bytes=1MiB"]),
    "pcie_p2p": ("configs/pcie_8gpu_p2p.yaml", ["workload.min_bytes=1MiB",
                                                "workload.max_bytes=1MiB"]),
    "ualink_pod8": ("configs/ualink_pod8.yaml", ["workload.min_bytes=1MiB",
                                                 "workload.max_bytes=1MiB"]),
    "ethernet_uec": ("configs/eth_fat_tree_128.yaml",
                     ["topology.tiers=2", "topology.radix=4", "topology.oversubscription=[1]",
                      "workload={type: permutation, bytes: 1MB}"]),
    "ethernet_roce": ("configs/eth_fat_tree_128.yaml",
                      ["topology.tiers=2", "topology.radix=4", "topology.oversubscription=[1]",
                       "topology.nic_type=roce", "workload={type: permutation, bytes: 1MB}"]),
    "training_ddp": ("configs/minimal.yaml",
                     ["simulation.functional=false",
                      "workload={type: ddp_step, layers: 8, layer_params: [131072], "
                      "forward_time: 5us, backward_time: 10us, bucket_bytes: 512KiB}"]),
}


def run(binary, config, sets, out=None, timeout=300):
    args = [binary, "run", os.path.join(ROOT, config), "--quiet"]
    for s in sets:
        args += ["--set", s]
    if out:
        args += ["--out", out]
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", ""


def learn(binary, config, sets):
    """Linked ports, switches (devices whose ports all lead to other devices' ports and that
    forward), and the run's length."""
    d = tempfile.mkdtemp(prefix="fabricsim_fault_stress_")
    try:
        rc, err = run(binary, config, sets, out=d)
        if rc != 0:
            return None, None, None, err
        with open(os.path.join(d, "results.json")) as f:
            j = json.load(f)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    ports, switches = [], set()
    for name, e in j["stats"].items():
        if e.get("peer"):
            ports.append(name)
        elif e.get("kind") in ("switch", "root_complex", "ethernet_switch"):
            switches.add(name)
    # How long the workload runs: the sweep's rows, the jobs, or the flows' makespan.
    end_ps = 0
    for r in j.get("rows", []):
        if "time_us" in r:
            end_ps += int(r["time_us"] * 1e6)
    for w in j.get("job_stats", []):
        end_ps = max(end_ps, w.get("end_ps", 0))
    if j.get("traffic"):
        end_ps = max(end_ps, int(j["traffic"]["makespan_us"] * 1e6))
    return sorted(ports), sorted(switches), end_ps, ""


def plan(rng, ports, switches, horizon_ns):
    events = []
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(["link_down", "link_down", "port_down", "link_flap", "ber_burst",
                           "switch_down"])
        at = rng.randint(0, horizon_ns)
        if kind in ("link_down", "port_down"):
            e = {"type": kind, ("link" if kind == "link_down" else "port"): rng.choice(ports),
                 "at": "%dns" % at}
            if rng.random() < 0.6:
                e["up_at"] = "%dns" % (at + rng.randint(1, horizon_ns // 2 + 1))
        elif kind == "link_flap":
            period = rng.randint(2, max(3, horizon_ns // 8))
            e = {"type": kind, "link": rng.choice(ports), "at": "%dns" % at,
                 "down_for": "%dns" % rng.randint(1, period - 1), "period": "%dns" % period,
                 "count": rng.randint(1, 12)}
        elif kind == "ber_burst":
            e = {"type": kind, "link": rng.choice(ports), "at": "%dns" % at,
                 "duration": "%dns" % rng.randint(1, horizon_ns), "ber": rng.choice([1e-8, 1e-6, 1e-5])}
        else:
            if not switches:
                continue
            e = {"type": kind, "device": rng.choice(switches), "at": "%dns" % at}
            if rng.random() < 0.7:
                e["up_at"] = "%dns" % (at + rng.randint(1, horizon_ns // 2 + 1))
        events.append(e)
    if not events:
        events.append({"type": "link_down", "link": rng.choice(ports), "at": "%dns" % horizon_ns})
    return {"detection_time": "%dns" % rng.choice([0, 100, 1000, 10000, 50000]),
            "retransmit_timeout": "%dns" % rng.choice([1000, 20000, 100000]),
            "events": events}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    rng = random.Random(seed)
    failed = runs = 0
    for name, (config, sets) in SYSTEMS.items():
        ports, switches, end_ps, err = learn(binary, config, sets)
        if ports is None:
            print("FAIL %s: the run without faults failed: %s" % (name, err.strip()[:300]))
            failed += 1
            continue
        horizon_ns = max(1000, int(end_ps / 1000 * 1.2)) if end_ps else 300000
        for i in range(n):
            faults = plan(rng, ports, switches, horizon_ns)
            rc, err = run(binary, config, sets + ["faults=" + json.dumps(faults)])
            runs += 1
            # A plan is always valid: exit 2 only for a workload the faults leave unable to
            # finish (or the time limit), never for a refused plan.
            ok = rc == 0 or (rc == 2 and ("the workload cannot finish" in err or
                                          "simulation.time_limit" in err))
            if not ok:
                failed += 1
                print("FAIL %s plan %d: exit %s with --set 'faults=%s'\n    %s"
                      % (name, i, rc, json.dumps(faults), err.strip()[-600:]))
        print("ok %s (%d plans)" % (name, n), flush=True)
    print("%d runs, %d failed" % (runs, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
