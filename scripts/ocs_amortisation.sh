#!/usr/bin/env bash
# The reconfiguration amortisation curve (docs/optical_vs_electrical.md): a job that moves
# JOB_BYTES each way between two chips in phases of a given length, each phase on other
# circuits than the last, simulated whole in one run per point (configs/ocs_phases.yaml:
# phase A and phase B, each a send/recv of the phase length each way, alternate between
# circuit maps `ring` and `cross`; the OCS controller changes every circuit at each phase
# boundary and the job waits until they are lit). Points: phase length x reconfiguration
# time (ns-, us-, ms-class), and the electrical reference: the same job with a packet
# switch in the OCS's place and no reconfiguration.
#
#   scripts/ocs_amortisation.sh [FABRICSIM] [--out DIR]
#
# Prints the table and writes DIR/amortisation.csv and DIR/amortisation.svg (the figure;
# default DIR out/ocs_amortisation): per phase length (bytes each way) and system, the
# simulated job time and energy (reconfigurations included: 2 x steps - 1 of them, the
# first phase finds its circuits in force), the time lost waiting for circuits, and the
# mean phase time.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=build/fabricsim
OUT=out/ocs_amortisation
while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT="$2"; shift 2 ;;
    -h|--help) sed -n 2,18p "$0"; exit 0 ;;
    *) BIN="$1"; shift ;;
  esac
done
[ -x "$BIN" ] || { echo "ocs_amortisation.sh: no fabricsim binary at $BIN (build it, or pass its path)" >&2; exit 2; }
SIZES="64KiB 1MiB 16MiB 256MiB 1GiB"
RECONF="20ns 10us 10ms"        # ns-class (electro-optic/SOA), us-class (fast piezo/SiPh), ms-class (MEMS)
JOB_BYTES=$((2 << 30))         # 2 GiB each way per job: 2 x steps phases of the phase length
mkdir -p "$OUT/runs"
run() {  # label size extra-args...
  local label="$1" size="$2"; shift 2
  local dir="$OUT/runs/${label}_${size}"
  local bytes steps
  bytes=$(python3 -c "import sys; u={'KiB':1<<10,'MiB':1<<20,'GiB':1<<30}; s=sys.argv[1]; print(int(s[:-3])*u[s[-3:]])" "$size")
  steps=$((JOB_BYTES / (2 * bytes)))
  "$BIN" run configs/ocs_phases.yaml --set workload.steps="$steps" --set simulation.time_limit=1000s \
    --set workload.phase_a_collective=sendrecv --set workload.phase_b_collective=sendrecv \
    --set workload.phase_a_bytes="$size" --set workload.phase_b_bytes="$size" \
    "$@" --out "$dir" --quiet >/dev/null
  echo "$label $bytes $dir"
}
{
  for s in $SIZES; do
    run electrical "$s" --set topology.devices.ocs0=espine --set faults=null
    for r in $RECONF; do run "ocs_$r" "$s" --set device_types.ocs.reconfiguration_time="$r"; done
  done
} > "$OUT/runs.txt"
python3 - "$OUT" "$JOB_BYTES" "$RECONF" <<'PY'
import json, sys
out, job, reconf = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
rows = {}
for line in open(out + "/runs.txt"):
    label, size, d = line.split()
    r = json.load(open(d + "/results.json"))
    jr = [x for x in r["rows"] if x["phase"] == "job"][0]
    # job time, energy, time waiting for circuits, phases
    rows[(label, int(size))] = (jr["end_ps"] / 1e6, jr["energy"]["total_J"], jr["wait_ps"] / 1e6, jr["runs"])
labels = ["electrical"] + ["ocs_" + r for r in reconf]
sizes = sorted({s for _, s in rows})
csv = ["phase_bytes,system,phases,job_time_us,reconfiguration_wait_us,mean_phase_us,job_energy_J,time_vs_electrical"]
print("# reconfiguration amortisation: a job of %d B each way in phases of a send/recv each way, every" % job)
print("# phase on other circuits than the last (simulated whole, one run per point)")
print("# job time in ms (reconfigurations included); in brackets: OCS / electrical time")
print("#")
print("# %12s %7s" % ("phase (B)", "phases") + "".join("  %22s" % l for l in labels))
for s in sizes:
    e_t = rows[("electrical", s)][0]
    cells = []
    for l in labels:
        t, en, wait, n = rows[(l, s)]
        ratio = t / e_t
        cells.append("  %12.3f %9s" % (t / 1e3, "" if l == "electrical" else "(x%.3f)" % ratio))
        csv.append("%d,%s,%d,%.6f,%.6f,%.6f,%.9g,%.6f" % (s, l, n, t, wait, (t - wait) / n, en, ratio))
    print("  %12d %7d" % (s, rows[("electrical", s)][3]) + "".join(cells))
print("#")
print("# job energy in J")
print("# %12s %7s" % ("phase (B)", "phases") + "".join("  %22s" % l for l in labels))
for s in sizes:
    print("  %12d %7d" % (s, rows[("electrical", s)][3]) + "".join("  %22.4f" % rows[(l, s)][1] for l in labels))
print("#")
for l in labels[1:]:
    win = [s for s in sizes if rows[(l, s)][0] <= rows[("electrical", s)][0]]
    near = [s for s in sizes if rows[(l, s)][0] <= 1.05 * rows[("electrical", s)][0]]
    print("# %s: as fast as the electrical switch or faster from %s B phases; within 5%% from %s B" %
          (l, win[0] if win else "no measured", near[0] if near else "no measured"))
open(out + "/amortisation.csv", "w").write("\n".join(csv) + "\n")
print("# csv: %s/amortisation.csv" % out)

# The figure: OCS phase time / electrical phase time against phase length, log-log, one
# line per reconfiguration time; below the dashed line at 1 the OCS wins. Plain SVG (no
# plotting library needed), written next to the CSV.
import math
W, H, L, R, T, B = 640, 420, 70, 150, 30, 60
xs = [math.log10(s) for s in sizes]
ys = [math.log10(rows[(l, s)][0] / rows[("electrical", s)][0]) for l in labels[1:] for s in sizes]
x0, x1 = min(xs), max(xs)
y0, y1 = min(min(ys), -0.2), max(ys) + 0.2
X = lambda v: L + (math.log10(v) - x0) / (x1 - x0) * (W - L - R)
Y = lambda v: T + (y1 - math.log10(v)) / (y1 - y0) * (H - T - B)
def human(b):
    for u, k in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= k: return "%g %s" % (b / k, u)
    return "%d B" % b
svg = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">' % (W, H),
       '<rect width="100%" height="100%" fill="white"/>',
       '<text x="%d" y="18" font-size="14">OCS job time / electrical job time (log), by reconfiguration time</text>' % L]
for s in sizes:
    svg.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>' % (X(s), T, X(s), H - B))
    svg.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (X(s), H - B + 16, human(s)))
e = math.floor(y0)
while e <= math.ceil(y1):
    if y0 <= e <= y1:
        svg.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s"%s/>' % (L, Y(10 ** e), W - R, Y(10 ** e), "#555" if e == 0 else "#ddd", ' stroke-dasharray="6,4"' if e == 0 else ""))
        svg.append('<text x="%d" y="%.1f" text-anchor="end">x%g</text>' % (L - 6, Y(10 ** e) + 4, 10 ** e))
    e += 1
svg.append('<text x="%d" y="%d" text-anchor="middle">phase length, bytes each way (job: %s each way, simulated whole)</text>' % ((L + W - R) // 2, H - 18, human(job)))
for i, (l, colour) in enumerate(zip(labels[1:], ["#1b9e77", "#d95f02", "#7570b3", "#e7298a"])):
    pts = " ".join("%.1f,%.1f" % (X(s), Y(rows[(l, s)][0] / rows[("electrical", s)][0])) for s in sizes)
    svg.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>' % (pts, colour))
    svg.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/>' % (W - R + 10, T + 20 + 18 * i, W - R + 30, T + 20 + 18 * i, colour))
    svg.append('<text x="%d" y="%d">%s</text>' % (W - R + 36, T + 24 + 18 * i, "OCS, " + l[len("ocs_"):] + " reconf."))
i = len(labels) - 1
svg.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#555" stroke-dasharray="6,4"/>' % (W - R + 10, T + 20 + 18 * i, W - R + 30, T + 20 + 18 * i))
svg.append('<text x="%d" y="%d">electrical</text>' % (W - R + 36, T + 24 + 18 * i))
svg.append("</svg>")
open(out + "/amortisation.svg", "w").write("\n".join(svg) + "\n")
print("# figure: %s/amortisation.svg" % out)
PY
