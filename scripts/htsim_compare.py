#!/usr/bin/env python3
"""Side by side with htsim (the Ultra Ethernet Consortium's public simulator): the same
incast and permutation scenarios on the same 128-host fat tree in fabricsim and in htsim.

    scripts/htsim_compare.py HTSIM_DATACENTER_DIR [--fabricsim BIN] [--out DIR]
                             [--cases incast8,incast32,...] [--speed]

HTSIM_DATACENTER_DIR holds htsim_uec (htsim/sim/datacenter of an Ultra Ethernet htsim
build, outside this repository; docs/scaleout.md says which commit and how it was built);
if its ../build/parse_output exists, htsim's ToR downlink queue peaks are read from its
queue log.

Both simulators run the k = 8 three-tier fat tree of configs/eth_fat_tree_128.yaml at
400 Gb/s (links 500 ns, switches 300 ns) with the same flows (fabricsim draws the
permutation; htsim is given the same pairs). fabricsim runs with htsim's switch settings
(per-queue limit of one BDP = 475,136 B by early trimming, ECN from 0.2 to 0.8 BDP, NSCC's
base RTT 9.5 us = htsim's network_max_unloaded_rtt); what still differs is listed in
docs/scaleout.md.

Prints one table: goodput (all bytes / makespan), FCT p50 / p99 / max, queue peak at the
receiving ToR port(s), packets; with --speed also wall and CPU time, peak RSS and CPU
seconds per data packet delivered (and fabricsim's measured packet-hops per CPU second),
and the ratio htsim CPU / fabricsim CPU per packet. Writes DIR/compare.json.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG = os.path.join(ROOT, "configs", "eth_fat_tree_128.yaml")

# fabricsim with htsim's switch and NSCC settings (see the module docstring).
MATCHED = [
    "device_types.eth_switch.trim_threshold=475136B",
    "device_types.eth_switch.ecn_kmin=98304B",
    "device_types.eth_switch.ecn_kmax=380928B",
    "device_types.uec.base_rtt=9.5us",
]

TOPO = """Nodes 128
Tiers 3
Podsize 16

Tier 0
Oversubscribed 1
Downlink_speed_Gbps 400
Radix_Down 4
Radix_Up 4
Downlink_Latency_ns 500
Switch_Latency_ns 300

Tier 1
Oversubscribed 1
Downlink_speed_Gbps 400
Radix_Down 4
Radix_Up 4
Downlink_Latency_ns 500
Switch_Latency_ns 300
Bundle 1

Tier 2
Downlink_speed_Gbps 400
Radix_Down 8
Downlink_Latency_ns 500
Switch_Latency_ns 300
Bundle 1
"""

CASES = {
    # name: (fabricsim workload --set, htsim load balancing)
    "incast8": ("{type: incast, senders: 8, bytes: 2MB}", "reps"),
    "incast32": ("{type: incast, senders: 32, bytes: 2MB}", "reps"),
    "incast127": ("{type: incast, senders: 127, bytes: 2MB}", "reps"),
    "perm_reps": ("{type: permutation, bytes: 2MB}", "reps"),
    "perm_oblivious": ("{type: permutation, bytes: 2MB}", "oblivious"),
}


def hops(a, b):
    """Links crossed between hosts a and b of the k = 8 tree (4 hosts per leaf, 16 per pod)."""
    if a // 4 == b // 4:
        return 2
    return 4 if a // 16 == b // 16 else 6


def summary(flows, fcts):
    """The same summary fabricsim's traffic runner prints, from per-flow FCTs (us)."""
    total = sum(f[2] for f in flows)
    makespan = max(fcts)
    s = sorted(fcts)

    def pct(q):
        k = max(1, int(q * len(s) + 0.999999)) - 1
        return s[min(k, len(s) - 1)]

    rates = [f[2] / t for f, t in zip(flows, fcts)]
    jain = sum(rates) ** 2 / (len(rates) * sum(r * r for r in rates))
    return {"goodput_GBps": total / makespan / 1e3, "fct_p50_us": pct(0.5),
            "fct_p99_us": pct(0.99), "fct_max_us": makespan, "jain": jain}


def timed(cmd, **kw):
    """Runs cmd; returns (process, wall s, CPU s, peak RSS KiB) of that process alone."""
    tf = os.path.join("/tmp", "htsim_compare_time_%d" % os.getpid())
    t0 = time.monotonic()
    p = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", tf] + cmd, capture_output=True,
                       text=True, **kw)
    wall = time.monotonic() - t0
    user, sys_, rss = open(tf).read().split()[-3:]
    os.remove(tf)
    return p, wall, float(user) + float(sys_), int(rss)


def run_fabricsim(binary, name, workload, lb, out):
    d = os.path.join(out, "fabricsim_" + name)
    cmd = [binary, "run", CONFIG, "--quiet", "--out", d, "--set", "workload=" + workload,
           "--set", "device_types.uec.spraying=" + lb]
    for s in MATCHED:
        cmd += ["--set", s]
    p, wall, cpu, rss = timed(cmd)
    if p.returncode != 0:
        sys.exit("fabricsim failed: " + " ".join(cmd) + "\n" + p.stderr)
    j = json.load(open(os.path.join(d, "results.json")))
    flows = [(r["src"], r["dst"], r["bytes"]) for r in j["rows"]]
    fcts = [r["fct_us"] for r in j["rows"]]
    receivers = {f[1] for f in flows}
    # The queue peak of the ToR ports facing the receivers (host h hangs off leaf h // 4,
    # port h % 4).
    qpeak = max(j["stats"]["leaf%d.port[%d]" % (h // 4, h % 4)]["queue_depth_max_bytes"]
                for h in receivers)
    # Data packets put on the wire, first copies and retransmissions (htsim's New + Rtx).
    data = sum(s["uec"]["packets_sent_new"] + sum(s["uec"]["retransmissions"].values())
               for k, s in j["stats"].items() if "uec" in s)
    rc = j["run_cost"]
    return {"cmd": " ".join(cmd), "flows": flows, "summary": summary(flows, fcts),
            "queue_peak_bytes": qpeak, "data_packets": data, "wall_s": wall, "cpu_s": cpu,
            "peak_rss_kib": rss, "packet_hops": rc["packet_hops"]}


def run_htsim(ddir, name, flows, lb, out):
    d = os.path.join(out, "htsim_" + name)
    os.makedirs(d, exist_ok=True)
    topo = os.path.join(d, "ft128_400.topo")
    open(topo, "w").write(TOPO)
    cm = os.path.join(d, "flows.cm")
    with open(cm, "w") as f:
        f.write("Nodes 128\nConnections %d\n" % len(flows))
        for i, (s, t, b) in enumerate(flows):
            f.write("%d->%d id %d start 0 size %d\n" % (s, t, i + 1, b))
    cmd = [os.path.join(ddir, "htsim_uec"), "-tm", cm, "-topo", topo, "-linkspeed", "400000",
           "-mtu", "4096", "-end", "100000", "-seed", "1", "-load_balancing_algo", lb]
    parse = os.path.join(ddir, "..", "build", "parse_output")
    logq = os.path.exists(parse)
    # The timed run logs nothing (the speed figure is htsim's own); a second run with the
    # ToR downlink queue log gives the queue peaks.
    p, wall, cpu, rss = timed(cmd, cwd=d)
    if p.returncode != 0:
        sys.exit("htsim failed: " + " ".join(cmd) + "\n" + p.stdout[-2000:] + p.stderr)
    log_cmd = cmd + ["-log", "tor_downqueue", "-logtime_us", "1"]
    fin = {}
    for m in re.finditer(r"Flow Uec_(\d+)_(\d+) flowId \d+ uecSrc \d+ finished at ([\d.]+)", p.stdout):
        fin[(int(m.group(1)), int(m.group(2)))] = float(m.group(3))
    fcts = [fin[(s, t)] for s, t, _ in flows]
    tot = re.search(r"New: (\d+) Rtx: (\d+) RTS: \d+ Bounced: \d+ ACKs: (\d+) NACKs: (\d+)", p.stdout)
    new, rtx, acks, nacks = (int(x) for x in tot.groups())
    qpeak = None
    if logq:
        subprocess.run(log_cmd, capture_output=True, text=True, cwd=d)
        a = subprocess.run([parse, os.path.join(d, "logout.dat"), "-ascii"], capture_output=True,
                           text=True).stdout
        peak = {}
        for line in a.splitlines():  # "T Type QUEUE_APPROX ID n Ev RANGE ... MaxQ q"
            f = line.split()
            if len(f) > 7 and f[5] == "Ev" and f[6] == "RANGE":
                peak[f[4]] = max(peak.get(f[4], 0), int(f[-1]))
        # The queues of the ToR ports facing the receivers, by name in htsim's idmap.txt
        # ("<id> LS<tor>->DST<host>(0)"): every switch queue is sized one BDP, so the size
        # alone would also pick the ToR uplinks (LS->US) and the upper tiers.
        want = {"LS%d->DST%d(0)" % (t // 4, t) for t in {f[1] for f in flows}}
        ids = set()
        for line in open(os.path.join(d, "idmap.txt")):
            f = line.split(None, 1)
            if len(f) == 2 and f[1].strip() in want:
                ids.add(f[0])
        qpeak = max((v for k, v in peak.items() if k in ids), default=None)
    # Packet-hops: data and its retransmissions cross each flow's path, acks and NACKs
    # come back along it (per flow, in proportion to its data).
    data_hops = sum((b + 4031) // 4032 * hops(s, t) for s, t, b in flows)
    mean_h = data_hops / max(1, sum((b + 4031) // 4032 for _, _, b in flows))
    packet_hops = int(data_hops + (rtx + acks + nacks) * mean_h)
    return {"cmd": " ".join(cmd) + "  (cwd " + d + ")", "summary": summary(flows, fcts),
            "queue_peak_bytes": qpeak, "data_packets": new + rtx, "wall_s": wall, "cpu_s": cpu,
            "peak_rss_kib": rss, "packet_hops": packet_hops, "rtx": rtx, "nacks": nacks}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("htsim_dir")
    ap.add_argument("--fabricsim", default=os.path.join(ROOT, "build", "fabricsim"))
    ap.add_argument("--out", default=os.path.join(ROOT, "out", "htsim_compare"))
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--speed", action="store_true", help="also print time, RSS and the ratio")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rows = {}
    for name in a.cases.split(","):
        workload, lb = CASES[name]
        fs = run_fabricsim(a.fabricsim, name, workload, lb, a.out)
        hs = run_htsim(a.htsim_dir, name, fs["flows"], lb, a.out)
        del fs["flows"]
        rows[name] = {"fabricsim": fs, "htsim": hs}
    print("# fabricsim vs htsim: 128-host k=8 fat tree, 400 Gb/s, 2 MB flows; goodput = bytes / makespan")
    print("# %-15s %17s %17s %17s %17s %17s" % ("case", "goodput GB/s", "fct p50 us", "fct p99 us",
                                                  "fct max us", "queue peak KB"))
    for name, r in rows.items():
        f, h = r["fabricsim"], r["htsim"]

        def pair(k):
            return "%8.2f %8.2f" % (f["summary"][k], h["summary"][k])

        q = "%8.0f %8s" % (f["queue_peak_bytes"] / 1e3,
                           "%.0f" % (h["queue_peak_bytes"] / 1e3) if h["queue_peak_bytes"] else "n/a")
        print("  %-15s %s %s %s %s %s" % (name, pair("goodput_GBps"), pair("fct_p50_us"),
                                          pair("fct_p99_us"), pair("fct_max_us"), q))
    if a.speed:
        print("# speed: wall s, CPU s, peak RSS MiB, CPU us per data packet sent (first copies and"
              " retransmissions); fabricsim's packet-hops are measured (GPU-NIC PCIe hops"
              " included), htsim's from its packet counts x path lengths")
        for name, r in rows.items():
            f, h = r["fabricsim"], r["htsim"]
            fp = f["cpu_s"] / f["data_packets"] * 1e6
            hp = h["cpu_s"] / h["data_packets"] * 1e6
            print("  %-15s fabricsim %6.2f %6.2f %6.1f %6.3f (%.2fM hops/CPU s)  htsim %6.2f %6.2f"
                  " %6.1f %6.3f (%.2fM)  htsim/fabricsim per packet %.2f" %
                  (name, f["wall_s"], f["cpu_s"], f["peak_rss_kib"] / 1024, fp,
                   f["packet_hops"] / f["cpu_s"] / 1e6, h["wall_s"], h["cpu_s"],
                   h["peak_rss_kib"] / 1024, hp, h["packet_hops"] / h["cpu_s"] / 1e6, hp / fp))
    json.dump(rows, open(os.path.join(a.out, "compare.json"), "w"), indent=2)
    print("# commands and raw figures: " + os.path.join(a.out, "compare.json"))


if __name__ == "__main__":
    main()
