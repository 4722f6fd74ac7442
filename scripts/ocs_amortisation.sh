#!/usr/bin/env bash
# The reconfiguration amortisation curve (docs/optical_vs_electrical.md): one phase of a job
# whose phases need different circuits (configs/ocs_phase.yaml: every circuit changes at
# the phase's start, then the phase's send/recv runs on the new circuits), simulated for
# each phase length and reconfiguration time, and the same phase on a packet switch in the
# OCS's place (the electrical reference, no reconfiguration).
#
#   scripts/ocs_amortisation.sh [FABRICSIM] [--out DIR]
#
# Prints the table and writes DIR/amortisation.csv (default out/ocs_amortisation): per
# phase length (bytes each way) and system, the simulated phase time (reconfiguration
# included), energy, and the total time and energy of a job that moves JOB_BYTES each way
# in phases of that length (phases = JOB_BYTES / phase bytes, run one after another: the
# job's total is that many simulated phases; the phases are alike, each starting with a
# reconfiguration).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=build/fabricsim
OUT=out/ocs_amortisation
while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT="$2"; shift 2 ;;
    -h|--help) sed -n 2,15p "$0"; exit 0 ;;
    *) BIN="$1"; shift ;;
  esac
done
[ -x "$BIN" ] || { echo "ocs_amortisation.sh: no fabricsim binary at $BIN (build it, or pass its path)" >&2; exit 2; }
SIZES="64KiB 1MiB 16MiB 256MiB 1GiB"
RECONF="20ns 10us 10ms"        # ns-class (electro-optic/SOA), us-class (fast piezo/SiPh), ms-class (MEMS)
JOB_BYTES=$((1 << 30))         # 1 GiB each way per job
mkdir -p "$OUT/runs"
run() {  # label size extra-args...
  local label="$1" size="$2"; shift 2
  local dir="$OUT/runs/${label}_${size}"
  "$BIN" run configs/ocs_phase.yaml --set workload.min_bytes="$size" --set workload.max_bytes="$size" \
    "$@" --out "$dir" --quiet >/dev/null
  echo "$label $size $dir"
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
    row = r["rows"][0]
    lost = 0
    for e in r.get("faults", {}).get("events", []):
        if "dark_until_ps" in e: lost += e["dark_until_ps"] - e["at_ps"]
    rows[(label, row["size_bytes"])] = (row["time_us"], row["energy"]["total_J"], lost / 1e6)
labels = ["electrical"] + ["ocs_" + r for r in reconf]
sizes = sorted({s for _, s in rows})
csv = ["phase_bytes,system,phase_time_us,reconfiguration_us,phase_energy_J,phases,job_time_us,job_energy_J,time_vs_electrical"]
print("# reconfiguration amortisation: one phase = every circuit changes, then a send/recv each way on the new circuits")
print("# phase time in us (simulated, reconfiguration included); in brackets: OCS / electrical time")
print("# job: %d B each way in phases of that length, one after another (total = phases x the phase)" % job)
print("#")
head = "# %12s" % "phase (B)" + "".join("  %22s" % l for l in labels)
print(head)
for s in sizes:
    e_t = rows[("electrical", s)][0]
    cells = []
    for l in labels:
        t, en, lost = rows[(l, s)]
        phases = job // s
        ratio = t / e_t
        cells.append("  %12.2f %9s" % (t, "" if l == "electrical" else "(x%.3f)" % ratio))
        csv.append("%d,%s,%.6f,%.6f,%.9g,%d,%.6f,%.9g,%.6f" % (s, l, t, lost, en, phases, t * phases, en * phases, ratio))
    print("  %12d" % s + "".join(cells))
print("#")
print("# job of %d B each way: total time in ms and energy in J" % job)
print("# %12s" % "phase (B)" + "".join("  %22s" % l for l in labels))
for s in sizes:
    phases = job // s
    print("  %12d" % s + "".join("  %10.3f ms %7.4f J" % (rows[(l, s)][0] * phases / 1e3, rows[(l, s)][1] * phases) for l in labels))
print("#")
for l in labels[1:]:
    win = [s for s in sizes if rows[(l, s)][0] <= rows[("electrical", s)][0]]
    near = [s for s in sizes if rows[(l, s)][0] <= 1.05 * rows[("electrical", s)][0]]
    print("# %s: as fast as the electrical switch or faster from %s B phases; within 5%% from %s B" %
          (l, win[0] if win else "no measured", near[0] if near else "no measured"))
open(out + "/amortisation.csv", "w").write("\n".join(csv) + "\n")
print("# csv: %s/amortisation.csv" % out)
PY
