#!/usr/bin/env python3
"""A core link fails under the 16 MB permutation on the 128-host fat tree (docs/scaleout.md,
"3. Failure"): one run per spraying mode, one table.

    scripts/eth_failure.py build/fabricsim [--modes reps,oblivious,ecmp] [--out DIR]
        [--link 'core6.port[1]'] [--at 100us] [--detection 1ms] [--bytes 16MB]

Each run: configs/eth_fat_tree_128.yaml, a permutation of --bytes per host, the link goes
down at --at and stays down; routes are recomputed only after --detection. Per mode it prints
the makespan, the flows that lost data packets on the link, the drops (packet ledger,
`link_down`), when the last packet lost on the link had been sent (the latest over the flows,
after the first drop: how long the senders kept using the failed path), the retransmissions
by cause, and for the flows that lost packets: their first retransmission's cause and its
delay after their first lost packet was sent, and their slowest FCT. Every number comes from
the run's results.json (faults.events[0].data_drops_by_flow, stats.nic<src>.uec,
checks.packet_ledger, rows).
"""
import argparse
import json
import os
import subprocess
import sys


def run(binary, out, mode, a):
    fault = ("{detection_time: %s, events: [{type: link_down, link: \"%s\", at: %s}]}"
             % (a.detection, a.link, a.at))
    cmd = [binary, "run", "configs/eth_fat_tree_128.yaml",
           "--set", "workload={type: permutation, bytes: %s}" % a.bytes,
           "--set", "device_types.uec.spraying=" + mode,
           "--set", "faults=" + fault, "--out", out, "--quiet"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "results.json")) as f:
        return json.load(f), cmd


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("binary")
    p.add_argument("--modes", default="reps,oblivious,ecmp")
    p.add_argument("--out", default="out/eth_failure")
    p.add_argument("--link", default="core6.port[1]")
    p.add_argument("--at", default="100us")
    p.add_argument("--detection", default="1ms")
    p.add_argument("--bytes", default="16MB")
    a = p.parse_args()
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    binary = os.path.abspath(a.binary) if os.path.exists(a.binary) else a.binary
    print("# link %s down at %s, routes recomputed after %s; permutation of %s per host"
          % (a.link, a.at, a.detection, a.bytes))
    print("# times in us; 'last lost sent': latest send time of a packet lost on the link, "
          "after the first drop")
    hdr = ("| spraying | makespan | flows that lost data | dropped (link_down) | last lost sent "
           "| retransmitted (cause) | their 1st retransmission: cause, after their 1st lost "
           "send | their FCT max |")
    print(hdr)
    print("|---|---:|---:|---:|---:|---|---|---:|")
    for mode in a.modes.split(","):
        r, _ = run(binary, os.path.join(a.out, mode), mode, a)
        e = r["faults"]["events"][0]
        led = r["checks"]["packet_ledger"]
        flows = e.get("data_drops_by_flow", [])
        first = e.get("first_data_drop_ps", 0)
        last_sent = max((f["last_lost_sent_ps"] for f in flows), default=first)
        causes = {}
        delays = []
        fcts = []
        rows = {(x["src"], x["dst"]): x for x in r["rows"]}
        for f in flows:
            u = r["stats"]["nic%d" % f["src"]]["uec"]
            fr = u.get("first_retransmit_ps", {})
            # The first retransmission after the flow's first loss, whatever its cause.
            after = {k: v for k, v in fr.items() if v >= f["first_lost_sent_ps"]}
            if after:
                k = min(after, key=after.get)
                causes[k] = causes.get(k, 0) + 1
                delays.append((after[k] - f["first_lost_sent_ps"]) / 1e6)
            fcts.append(rows[(f["src"], f["dst"])]["fct_us"])
        rtx = ", ".join("%s %d" % (k, v) for k, v in sorted(led["retransmitted"].items()) if v)
        first_rtx = ", ".join("%s x%d" % kv for kv in sorted(causes.items()))
        if delays:
            first_rtx += ": %.1f-%.1f" % (min(delays), max(delays))
        print("| %s | %.2f | %d | %d | %.1f | %s | %s | %.1f |" % (
            mode, r["traffic"]["makespan_us"], len(flows),
            led["dropped"].get("link_down", 0), (last_sent - first) / 1e6, rtx, first_rtx,
            max(fcts, default=0)))
        bal = led["injected"] == led["received"] + sum(led["dropped"].values())
        if not bal or e["lost_for_good"]:
            print("ledger does not balance or data lost for good in", mode, file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
