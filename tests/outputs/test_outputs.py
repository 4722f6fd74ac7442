#!/usr/bin/env python3
"""System tests of fabricsim's exploration and review outputs, driving the binary:

    test_outputs.py FABRICSIM CASE     (CASE: trace, trace_gap, sweep, resume, chakra,
                                        report, progress, bad_inputs)

Each case prints what it checked and exits 0 only when every check holds."""
import csv, json, os, shutil, signal, subprocess, sys, tempfile, time

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.abspath(sys.argv[1])
FAILS = []

def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)

def run(*args, cwd=SRC, expect=0):
    p = subprocess.run([BIN] + list(args), cwd=cwd, capture_output=True, text=True)
    if expect is not None and p.returncode != expect:
        print(p.stdout[-2000:], p.stderr[-2000:])
        raise SystemExit("fabricsim %s: exit %d, expected %d" % (" ".join(args), p.returncode, expect))
    return p

def tmp(name):
    d = os.path.join(tempfile.gettempdir(), "fabricsim_outputs_%s_%d" % (name, os.getpid()))
    shutil.rmtree(d, ignore_errors=True)
    return d

def load(path):
    with open(path) as f:
        return json.load(f)

def strip_cost(j):
    j = dict(j); j.pop("run_cost", None); j.pop("command_line", None); return j

def check_layout(path, what):
    """results.json is written piece by piece (its statistics one port at a time) with the
    layout of one indented dump: every line indented by 2 x its nesting depth, as a
    re-dump of the parsed file (same keys in the same order) indents it. A section put at
    the wrong depth, or a separator missing, fails here (or fails to parse)."""
    with open(path) as f:
        text = f.read()
    j = json.loads(text)
    again = json.dumps(j, indent=2, ensure_ascii=False) + "\n"
    indent = lambda t: [len(l) - len(l.lstrip(" ")) for l in t.split("\n")]
    check(indent(text) == indent(again), what + ": results.json laid out as one indented dump "
          "(%d lines)" % text.count("\n"))

def case_trace():
    """Acceptance 1: the 14-size DGX H100 sweep: per-row statistics that differ where they
    should, a time-series CSV, and a trace with events per rank, flows, counters, order."""
    d = tmp("trace")
    run("run", "configs/dgx_h100.yaml", "--out", d, "--series", "1us", "--trace", d + "/trace.json", "--quiet")
    r = load(d + "/results.json")
    check_layout(d + "/results.json", "sweep")
    rows = r["rows"]
    check(len(rows) == 14, "14 rows")
    u = {row["size_bytes"]: row["stats"]["bottleneck"]["utilisation"] for row in rows}
    # 1 MiB is latency-bound (the ring waits for acks and flags); 8 GiB keeps every link busy.
    # (1 MiB runs NCCL's LL protocol: its lines carry 4 B of flag per 4 B of data, so the
    # port is busier than the data alone would make it, 0.68, but still far from full.)
    check(u[1 << 20] < 0.8, "1 MiB bottleneck utilisation %.3f < 0.8" % u[1 << 20])
    check(u[8 << 30] > 0.99, "8 GiB bottleneck utilisation %.4f > 0.99" % u[8 << 30])
    g0 = [p for p in rows[0]["stats"]["ports"] if p["name"] == "gpu0.port[0]"][0]
    g13 = [p for p in rows[13]["stats"]["ports"] if p["name"] == "gpu0.port[0]"][0]
    # (from LL's 0.68 at 1 MiB, whose lines double the bytes, to a full link at 8 GiB)
    check(g13["utilisation"] > g0["utilisation"] + 0.25, "gpu0.port[0] utilisation grows from 1 MiB to 8 GiB")
    check(r["schema_version"] == 2 and r["stats"]["gpu0.port[3]"]["port"] == 3
          and r["stats"]["gpu0.port[3]"]["kind"] == "endpoint", "structured stats (kind, device, port)")
    names = list(r["stats"].keys())
    check(names.index("gpu0.port[2]") < names.index("gpu0.port[10]"), "natural port order")
    with open(d + "/series.csv") as f:
        series = list(csv.DictReader(f))
    check(len(series) > 100 and {"name", "t_start_us", "utilisation", "queue_mean_bytes"} <= set(series[0]),
          "series.csv: %d samples with units in the column names" % len(series))
    check(max(len([s for s in series if s["name"] == n]) for n in {s["name"] for s in series}) <= 1000,
          "series bounded to 1000 samples per port")
    with open(d + "/ports.csv") as f:
        ports = list(csv.DictReader(f))
    check(len(ports) == 14 * 288, "ports.csv: one line per row and port (%d)" % len(ports))
    t = load(d + "/trace.json")
    ev = t["traceEvents"]
    ranks = {e["pid"] for e in ev if e["ph"] == "X" and e["pid"] < 1000}
    check(ranks == set(range(8)), "op slices on every rank (%s)" % sorted(ranks))
    per_rank = {k: sum(1 for e in ev if e["ph"] == "X" and e["pid"] == k) for k in range(8)}
    check(min(per_rank.values()) > 100, "more than 100 ops per rank (%d)" % min(per_rank.values()))
    starts = {e["id"]: e for e in ev if e["ph"] == "s"}
    ends = {e["id"]: e for e in ev if e["ph"] == "f"}
    check(len(starts) > 0 and set(starts) == set(ends), "every flow has a start and an end (%d)" % len(starts))
    check(all(float(starts[i]["ts"]) <= float(ends[i]["ts"]) for i in starts), "flows go forward in time")
    counters = {(e["pid"], e["name"]) for e in ev if e["ph"] == "C"}
    check(any(n == "utilisation" for _, n in counters) and any(n == "queue_bytes" for _, n in counters),
          "utilisation and queue counter tracks (%d)" % len(counters))
    ts = [float(e["ts"]) for e in ev if "ts" in e and e["ph"] != "M"]
    check(all(a <= b for a, b in zip(ts, ts[1:])), "timestamps never decrease")
    # A flow end binds to the slice around it on its lane: one slice must contain it.
    xs = {}
    for e in ev:
        if e["ph"] == "X":
            xs.setdefault((e["pid"], e["tid"]), []).append((float(e["ts"]), float(e["ts"]) + float(e["dur"])))
    bad = [i for i, f in list(ends.items())[:2000]
           if not any(a <= float(f["ts"]) <= b for a, b in xs.get((f["pid"], f["tid"]), []))]
    check(not bad, "every flow end lies inside a slice of its lane")

def case_trace_gap():
    """scripts/trace_gap.py matches two traces op by op: a run whose kernel launch takes
    1 us longer ends every op exactly 1 us later, and its ops last as long."""
    d = tmp("trace_gap")
    os.makedirs(d)
    one = ["run", "configs/dgx_h100.yaml", "--set", "workload.min_bytes=2MiB",
           "--set", "workload.max_bytes=2MiB", "--quiet"]
    run(*one, "--trace", d + "/a.json")
    run(*one, "--set", "workload.launch_latency=4500ns", "--trace", d + "/b.json")  # 3500 as shipped
    ops = sum(1 for e in load(d + "/a.json")["traceEvents"]
              if e.get("ph") == "X" and "op" in e.get("args", {}))
    p = subprocess.run([sys.executable, os.path.join(SRC, "scripts/trace_gap.py"), d + "/b.json",
                        d + "/a.json", "--bins", "5", "--durations", "send"],
                       capture_output=True, text=True)
    out = p.stdout.split("\n")
    check(p.returncode == 0 and ("%d matched" % ops) in out[0], "every op matched (%d): %s" % (ops, out[0]))
    gaps = [l.split()[-4:] for l in out[2:] if l.strip() and "duration (us)" not in l]
    check(len(gaps) == 5 and all(g == ["1.000"] * 4 for g in gaps),
          "the gap is +1.000 us in every bin (mean, p5, p50, p95): %s" % gaps)
    durs = [l.split("duration (us)")[1] for l in out if "duration (us)" in l]
    check(len(durs) == 2 and durs[0] == durs[1], "the send ops last as long in both: %s" % durs)

def sweep(args, out):
    return run(*(["sweep", "configs/sweep_grid.yaml", "--out", out, "--quiet"] + args))

def case_sweep():
    """Acceptance 2: a 3 x 3 grid gives the same merged results sequentially, with -j 2 and
    under mpirun with 2 ranks."""
    seq, par, mpi = tmp("seq"), tmp("par"), tmp("mpi")
    sweep([], seq)
    sweep(["-j", "2"], par)
    cmd = ["mpirun", "--oversubscribe", "-n", "2"]
    if os.geteuid() == 0:
        cmd.insert(1, "--allow-run-as-root")
    p = subprocess.run(cmd + [BIN, "sweep", "configs/sweep_grid.yaml", "--out", mpi, "--quiet"],
                       cwd=SRC, capture_output=True, text=True)
    check(p.returncode == 0, "mpirun -n 2 fabricsim sweep exits 0" + ("" if p.returncode == 0 else ": " + p.stderr[-500:]))
    for f in ("sweep.csv", "sweep.json"):
        a = open(os.path.join(seq, f)).read()
        check(a == open(os.path.join(par, f)).read(), f + ": -j 2 equals sequential")
        check(a == open(os.path.join(mpi, f)).read(), f + ": mpirun -n 2 equals sequential")
    j = load(os.path.join(seq, "sweep.json"))
    check(len(j["points"]) == 9 and j["keys"] == ["workload.algorithm", "device_types.sw.speedup"],
          "9 points with the swept keys as columns")
    with open(os.path.join(seq, "sweep.csv")) as f:
        rows = list(csv.DictReader(f))
    check(len(rows) == 27 and rows[0]["workload.algorithm"] == "ring", "sweep.csv: 27 rows, swept keys as columns")

def case_resume():
    """Acceptance 2: a sweep killed half way finishes only the missing points when rerun."""
    d = tmp("resume")
    args = [BIN, "sweep", "configs/sweep_grid.yaml", "--out", d, "--quiet",
            "--set", "workload.max_bytes=8MiB"]
    p = subprocess.Popen(args, cwd=SRC, start_new_session=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    pts = os.path.join(d, "points")
    deadline = time.time() + 120
    done = []
    while time.time() < deadline:
        done = [x for x in os.listdir(pts) if not x.endswith(".part")
                and os.path.isfile(os.path.join(pts, x, "results.json"))] if os.path.isdir(pts) else []
        if len(done) >= 3 or p.poll() is not None:
            break
        time.sleep(0.05)
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    # A point is done when its directory has its final name (a .part one was cut short).
    done = sorted(x for x in os.listdir(pts) if not x.endswith(".part")
                  and os.path.isfile(os.path.join(pts, x, "results.json")))
    check(3 <= len(done) < 9, "killed with %d of 9 points done" % len(done))
    mtimes = {x: os.stat(os.path.join(pts, x, "results.json")).st_mtime_ns for x in done}
    r = subprocess.run([a for a in args if a != "--quiet"], cwd=SRC, capture_output=True, text=True)
    check(r.returncode == 0, "the rerun exits 0")
    want = "9 points: %d run, %d already done, 0 missing" % (9 - len(done), len(done))
    check(want in r.stdout, "the rerun says '%s'" % want)
    check(all(os.stat(os.path.join(pts, x, "results.json")).st_mtime_ns == m for x, m in mtimes.items()),
          "points done before the kill were not run again")

def case_chakra():
    """Acceptance 4: the shipped Chakra trace replays with its dependencies respected."""
    d = tmp("chakra")
    run("run", "configs/chakra_diamond.yaml", "--out", d, "--quiet")
    rows = load(d + "/results.json")["rows"]
    check_layout(d + "/results.json", "training (job_stats)")
    check("job_stats" in load(d + "/results.json"), "job_stats present")
    check(len(rows) == 28, "28 nodes (7 per rank on 4 ranks)")
    eps = 1e-6
    for rank in range(4):
        n = {r["name"]: r for r in rows if r["rank"] == rank}
        A, B, C, D, E, F, G = (n[k] for k in "ABCDEFG")
        check(abs(A["end_us"] - A["start_us"] - 5) < eps and abs(C["end_us"] - C["start_us"] - 3) < eps
              and abs(G["end_us"] - G["start_us"] - 2) < eps, "rank %d: compute nodes take 5, 3, 2 us" % rank)
        check(B["start_us"] >= A["end_us"] - eps and C["start_us"] >= A["end_us"] - eps,
              "rank %d: B and C start after A" % rank)
        check(abs(D["start_us"] - max(B["end_us"], C["end_us"])) < eps,
              "rank %d: D starts when the later of B and C ends (the diamond)" % rank)
        check(B["end_us"] > C["end_us"], "rank %d: the all-reduce B outlasts the compute C" % rank)
        check(E["start_us"] >= D["end_us"] - eps and F["start_us"] >= D["end_us"] - eps,
              "rank %d: E and F after D" % rank)
        check(abs(G["start_us"] - F["end_us"]) < eps, "rank %d: G starts when F's message is in" % rank)
    # The shipped trace is what the script writes.
    t = tmp("chakra_gen")
    os.makedirs(t)
    subprocess.run([os.path.join(SRC, "scripts/make_chakra_trace.sh"), t + "/diamond"], check=True,
                   capture_output=True)
    check(all(open(t + "/diamond.%d.et" % r, "rb").read() ==
              open(os.path.join(SRC, "configs/traces/diamond.%d.et" % r), "rb").read() for r in range(4)),
          "configs/traces/diamond.*.et are what scripts/make_chakra_trace.sh writes")

def case_report():
    """Acceptance 3: the report of a run and a compare renders in headless Chromium with no
    console errors and has its figures and tables."""
    d = tmp("report")
    run("run", "configs/dgx_h100.yaml", "--set", "workload.max_bytes=16MiB", "--out", d + "/run", "--quiet", "--histograms")
    run("compare", "configs/compare_scaleup.yaml", "--set", "workload.max_bytes=2MiB", "-j", "2", "--out", d + "/cmp", "--quiet")
    run("report", d + "/run/results.json", d + "/cmp/results.json", "-o", d + "/report.html")
    # The published figures the config names: each matched point carries the simulated
    # value of its row and the error against it; unmatched points (no row of the size or
    # algorithm) carry nulls.
    res = json.load(open(d + "/run/results.json"))
    rows = {r["size_bytes"]: r for r in res["rows"]}
    matched = 0
    for c in res["published"]:
        for p in c["points"]:
            row = rows.get(p["size_bytes"]) if c["algorithm"] in (None, "ring") else None
            for k, sk, ek, rk in (("busbw_GBps", "simulated_busbw_GBps", "busbw_error_pct", "busbw_GBps"),
                                  ("time_us", "simulated_time_us", "time_error_pct", "time_us")):
                if k not in p: continue
                if row is None:
                    check(p[sk] is None and p[ek] is None, "unmatched published point has no simulated value")
                else:
                    matched += 1
                    check(p[sk] == row[rk], "published point %d B: simulated %s is the row's" % (p["size_bytes"], k))
                    check(abs(p[ek] - 100 * (row[rk] / p[k] - 1)) < 1e-9, "published point error is sim/pub - 1")
    check(matched == 5, "1, 2, 4, 8 and 16 MiB of the H20 curve are matched (got %d)" % matched)
    check(any(a["key"] == "device_types.nvswitch3.speedup" for a in res["assumptions"]), "assumptions echoed")
    html = open(d + "/report.html").read()
    check("http://" not in html.split("<script>")[0] and "<script src" not in html, "no external resources")
    p = subprocess.run([sys.executable, os.path.join(SRC, "tests/browser/check_report.py"), d + "/report.html",
                        "--figure", "busbw", "--figure", "time", "--figure", "topology_0", "--figure", "heatmap_0",
                        "--figure", "queue_histogram_0", "--figure", "credit_stall_0", "--figure", "topology_5",
                        "--table", "systems", "--table", "busbw_side_by_side", "--table", "rows_0",
                        "--table", "counts_0", "--table", "params_0", "--table", "queue_percentiles_0",
                        "--table", "published_0", "--table", "assumptions_0"],
                       capture_output=True, text=True)
    print(p.stdout)
    check(p.returncode == 0, "the report renders in headless Chromium with its figures and tables")

def case_progress():
    """--progress prints plain lines on stderr, never into the table, and moves no result."""
    a, b = tmp("prog_a"), tmp("prog_b")
    args = ["run", "configs/dgx_h100.yaml", "--set", "workload.max_bytes=64MiB"]
    pa = run(*(args + ["--out", a]))
    pb = run(*(args + ["--out", b, "--progress=1"]))
    check(pa.stderr == "", "no progress without a terminal")
    check("# progress: row" in pb.stderr, "--progress=1 prints progress lines on stderr")
    strip = lambda s: [l for l in s.splitlines() if not l.startswith(("# run cost", "# results"))]
    check(strip(pa.stdout) == strip(pb.stdout), "the table is the same")
    check(strip_cost(load(a + "/results.json")) == strip_cost(load(b + "/results.json")),
          "results.json is the same with progress")
    c = tmp("prog_c")
    run(*(args + ["--out", c, "--series", "100ns", "--histograms"]))
    jc = strip_cost(load(c + "/results.json"))
    ja = strip_cost(load(a + "/results.json"))
    for k in ("rows", "checks", "ceiling"):
        if k == "rows":
            for ra, rc in zip(ja["rows"], jc["rows"]):
                rc = dict(rc); ra = dict(ra)
                for x in (ra, rc):
                    x.pop("stats", None)
                check(ra == rc, "a row is the same with series and histograms on")
        else:
            check(ja[k] == jc[k], k + " is the same with series and histograms on")

def case_bad_inputs():
    """Every bad input of the new commands exits 2 with a located message."""
    d = tmp("bad")
    os.makedirs(d)
    def bad(name, text, want, *extra):
        f = os.path.join(d, name)
        with open(f, "w") as fh:
            fh.write(text)
        p = run("sweep", f, "--out", d + "/o", *extra, expect=None)
        check(p.returncode == 2 and want in p.stderr, "sweep %s: exit 2 with '%s' (got %d: %s)"
              % (name, want, p.returncode, p.stderr.strip()[:200]))
    cfg = os.path.join(SRC, "configs/minimal.yaml")
    bad("unknown_key.yaml", "config: %s\ngrid: {workload.algorithm: [ring]}\ngird: 1\n" % cfg,
        "unknown_key.yaml:3:1: gird: unknown key")
    bad("zip_lengths.yaml", "config: %s\nzip:\n  workload.min_bytes: [1MiB, 2MiB]\n  workload.max_bytes: [1MiB]\n" % cfg,
        "zip_lengths.yaml:4:23: zip.workload.max_bytes: has 1 values but")
    bad("bad_value.yaml", "config: %s\ngrid: {workload.algorithm: [ring, sideways]}\n" % cfg,
        "[point 1 of")
    bad("no_grid.yaml", "config: %s\n" % cfg, "a sweep needs a grid or a zip")
    bad("empty_list.yaml", "config: %s\ngrid: {workload.algorithm: []}\n" % cfg,
        "grid.workload.algorithm: expected a non-empty list")
    bad("ok.yaml", "config: %s\ngrid: {workload.algorithm: [ring]}\n" % cfg, "--shard takes I/N", "--shard", "3")
    p = run("report", "-o", d + "/r.html", expect=None)
    check(p.returncode == 2 and "report needs at least one RESULTS.json" in p.stderr, "report without inputs")
    with open(d + "/broken.json", "w") as f:
        f.write('{"rows": [1, 2')
    p = run("report", d + "/broken.json", "-o", d + "/r.html", expect=None)
    check(p.returncode == 2 and "broken.json: byte" in p.stderr, "report of broken JSON: located")
    with open(d + "/other.json", "w") as f:
        f.write('{"hello": 1}')
    p = run("report", d + "/other.json", "-o", d + "/r.html", expect=None)
    check(p.returncode == 2 and "other.json: rows: missing" in p.stderr, "report of another JSON")
    p = run("run", "configs/minimal.yaml", "--series", "0ns", expect=None)
    check(p.returncode == 2 and "--series: the interval must be > 0" in p.stderr, "--series 0ns")
    p = run("run", "configs/minimal.yaml", "--trace", d + "/t.json", "--ports", "nope*", expect=None)
    check(p.returncode == 2 and "'nope*' matches no port" in p.stderr, "--ports that selects nothing")
    # A truncated Chakra trace, and one whose dependency is missing.
    tr = os.path.join(d, "traces")
    shutil.copytree(os.path.join(SRC, "configs/traces"), tr)
    shutil.copy(os.path.join(SRC, "configs/chakra_diamond.yaml"), d)
    data = open(tr + "/diamond.2.et", "rb").read()
    open(tr + "/diamond.2.et", "wb").write(data[:-5])
    p = run("check", d + "/chakra_diamond.yaml", expect=None)
    check(p.returncode == 2 and "workload.trace:" in p.stderr and "diamond.2.et: byte" in p.stderr
          and "truncated" in p.stderr, "truncated trace: exit 2 naming the file and byte (%s)" % p.stderr.strip()[:300])
    os.remove(tr + "/diamond.3.et")
    open(tr + "/diamond.2.et", "wb").write(data)
    p = run("check", d + "/chakra_diamond.yaml", expect=None)
    check(p.returncode == 2 and "diamond.3.et: cannot read the Chakra trace" in p.stderr, "missing rank file")

CASES = {n[5:]: f for n, f in globals().items() if n.startswith("case_")}

if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[2] not in CASES:
        print(__doc__)
        sys.exit(2)
    CASES[sys.argv[2]]()
    print("%d failed" % len(FAILS) if FAILS else "all checks passed")
    sys.exit(1 if FAILS else 0)
