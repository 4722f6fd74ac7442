#!/usr/bin/env python3
"""The figure and table of docs/faults.md: collective time against the time a link fails.

    scripts/fault_figure.py [FABRICSIM] [--svg docs/images/faults.svg] [--table]

Runs FABRICSIM (default build/fabricsim) on two fabrics, once without the fault and once per
failure time:
  * configs/ib_leaf_spine.yaml: the uplink leaf0-spine0 goes down (stays down) during the
    16 MiB ring all-reduce; the other spine is a spare path with the capacity; InfiniBand
    retransmits the transaction the cut lost after retransmit_timeout (100 us and 50 us);
  * configs/minimal.yaml, 4 MiB ring all-reduce: one of gpu0's two NVLink links goes down
    (stays down); link-level replay keeps the cut, the other link carries on at half the
    capacity; detection_time 10 us and 50 us.
Writes an SVG line chart (no plotting library needed) and prints the table as Markdown.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(binary, config, sets):
    d = tempfile.mkdtemp(prefix="fabricsim_faultfig_")
    args = [binary, "run", os.path.join(ROOT, config), "--quiet", "--out", d]
    for s in sets:
        args += ["--set", s]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("fault_figure: %s failed (exit %d): %s" % (" ".join(args), p.returncode, p.stderr))
    with open(os.path.join(d, "results.json")) as f:
        j = json.load(f)
    return j["rows"][0]["time_us"], j


SCENARIOS = [
    {
        "title": "InfiniBand leaf-spine, 16 MiB ring all-reduce: uplink leaf0-spine0 down",
        "config": "configs/ib_leaf_spine.yaml",
        "common": [],
        "nofault": ["faults=null"],
        "times": list(range(0, 521, 20)),
        "fault": lambda at, v: ["faults.events[0].at=%dus" % at, "faults.retransmit_timeout=%s" % v],
        "series": ["100us", "50us"],
        "label": "retransmit_timeout %s",
    },
    {
        "title": "4 GPUs x 2 NVLink links, 4 MiB ring all-reduce: one link of gpu0 down",
        "config": "configs/minimal.yaml",
        "common": ["workload.min_bytes=4MiB", "workload.max_bytes=4MiB", "simulation.functional=false"],
        "nofault": [],
        "times": list(range(0, 161, 10)),
        "fault": lambda at, v: [
            "faults={detection_time: %s, events: [{type: link_down, link: \"gpu0.port[0]\", at: %dus}]}"
            % (v, at)],
        "series": ["10us", "50us"],
        "label": "detection_time %s",
    },
]


def measure(binary):
    out = []
    for sc in SCENARIOS:
        base, _ = run(binary, sc["config"], sc["common"] + sc["nofault"])
        series = []
        for v in sc["series"]:
            pts = []
            for at in sc["times"]:
                sets = sc["common"] + sc["fault"](at, v)
                t, _ = run(binary, sc["config"], sets)
                pts.append((at, t))
            series.append((sc["label"] % v, pts))
        out.append((sc, base, series))
    return out


def svg(data, path):
    W, H = 980, 400
    pw, ph, ml, mt = 400, 280, 70, 50
    colors = ["#1f77b4", "#d62728", "#2ca02c"]
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
             'font-family="sans-serif" font-size="12">' % (W, H),
             '<rect width="100%" height="100%" fill="white"/>']
    for k, (sc, base, series) in enumerate(data):
        x0 = ml + k * (pw + 90)
        y0 = mt
        xs = [at for at, _ in series[0][1]]
        ys = [t for _, pts in series for _, t in pts] + [base]
        xmax = max(xs)
        span = max(ys) - min(ys)
        ymin = max(0, int((min(ys) - 0.15 * span - 20) // 50) * 50)
        ymax = max(ys) + 0.15 * span
        X = lambda v: x0 + pw * v / xmax
        Y = lambda v: y0 + ph - ph * (v - ymin) / (ymax - ymin)
        parts.append('<text x="%d" y="%d" font-weight="bold">%s</text>' % (x0 - 40, y0 - 25, sc["title"]))
        parts.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#444"/>' % (x0, y0, pw, ph))
        step = 100 if xmax > 300 else 20
        for v in range(0, int(xmax) + 1, step):
            parts.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>' % (X(v), y0, X(v), y0 + ph))
            parts.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>' % (X(v), y0 + ph + 15, v))
        ystep = 50 if ymax - ymin > 100 else 20
        for v in range(ymin, int(ymax) + 1, ystep):
            parts.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (x0, Y(v), x0 + pw, Y(v)))
            parts.append('<text x="%d" y="%.1f" text-anchor="end">%d</text>' % (x0 - 5, Y(v) + 4, v))
        parts.append('<text x="%.1f" y="%d" text-anchor="middle">failure time (us)</text>' % (x0 + pw / 2, y0 + ph + 35))
        parts.append('<text x="%d" y="%.1f" text-anchor="middle" transform="rotate(-90 %d %.1f)">'
                     'all-reduce time (us)</text>' % (x0 - 45, y0 + ph / 2, x0 - 45, y0 + ph / 2))
        parts.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#000" stroke-dasharray="5,4"/>'
                     % (x0, Y(base), x0 + pw, Y(base)))
        parts.append('<text x="%d" y="%.1f" text-anchor="end" font-size="11">no failure %.1f us</text>'
                     % (x0 + pw - 4, Y(base) + 14, base))
        for i, (label, pts) in enumerate(series):
            c = colors[i % len(colors)]
            parts.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>'
                         % (c, " ".join("%.1f,%.1f" % (X(a), Y(t)) for a, t in pts)))
            for a, t in pts:
                parts.append('<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"/>' % (X(a), Y(t), c))
            parts.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/>'
                         % (x0 + 10, y0 + 14 + 16 * i, x0 + 30, y0 + 14 + 16 * i, c))
            parts.append('<text x="%d" y="%d">%s</text>' % (x0 + 35, y0 + 18 + 16 * i, label))
    parts.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(parts) + "\n")


def table(data):
    lines = []
    for sc, base, series in data:
        lines.append("%s (no failure: %.2f us)\n" % (sc["title"], base))
        lines.append("| failure at (us) | " + " | ".join(label for label, _ in series) + " |")
        lines.append("|---:|" + "---:|" * len(series))
        for i, (at, _) in enumerate(series[0][1]):
            lines.append("| %d | " % at + " | ".join("%.2f" % s[1][i][1] for s in series) + " |")
        lines.append("")
    return "\n".join(lines)


def main():
    args = sys.argv[1:]
    binary = os.path.join(ROOT, "build/fabricsim")
    out = None
    want_table = False
    i = 0
    while i < len(args):
        if args[i] == "--svg":
            out = args[i + 1]
            i += 2
        elif args[i] == "--table":
            want_table = True
            i += 1
        else:
            binary = args[i]
            i += 1
    data = measure(binary)
    if out:
        svg(data, out)
        print("fault_figure: wrote %s" % out, file=sys.stderr)
    if want_table or not out:
        print(table(data))


if __name__ == "__main__":
    main()
