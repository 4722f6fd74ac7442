#!/usr/bin/env bash
# Availability of a TPU v4-style slice against the number of spare cubes (docs/optical.md,
# "Failure bypass"). The optical circuit switches let any spare cube take any failed cube's
# place in the torus, so a slice of N cubes in a pod with s spares runs as long as at most
# s of its N + s cubes are down; each failure costs the job the bypass's downtime, which is
# simulated: configs/tpu_v4_failover.yaml (a cube fails during a torus all-reduce) with the
# detection, reconfiguration and restart times below; the script reads the downtime from
# results.json (faults.events[0].bypass.downtime_ps).
#
#   scripts/ocs_availability.sh [FABRICSIM] [--out DIR]
#
# Prints the table and writes DIR/availability.csv and DIR/availability.svg (the figure;
# default DIR out/ocs_availability).
#
# The model: each cube fails at rate lambda = 64 / CHIP_MTBF_H + 16 / HOST_MTBF_H (64 chips,
# 16 hosts of 4 chips; a chip or host failure takes its cube out of the slice) and is
# repaired in REPAIR_H, independently of the others, so a cube is down with probability
# q = lambda R / (1 + lambda R). The slice has enough cubes with probability
# P = sum_{k<=s} C(N+s, k) q^k (1-q)^(N+s-k), and while it has, each failure of one of its N
# cubes costs the downtime D: availability = P x (1 - N lambda D). Rework since the last
# checkpoint is not counted (it depends on the checkpoint interval, not on the fabric).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=build/fabricsim
OUT=out/ocs_availability
while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT="$2"; shift 2 ;;
    -h|--help) sed -n 2,22p "$0"; exit 0 ;;
    *) BIN="$1"; shift ;;
  esac
done
[ -x "$BIN" ] || { echo "ocs_availability.sh: no fabricsim binary at $BIN (build it, or pass its path)" >&2; exit 2; }
# Parameters (source or "assumption"):
CHIP_MTBF_H=${CHIP_MTBF_H:-1000000}  # assumption: 1,000 FIT per chip
HOST_MTBF_H=${HOST_MTBF_H:-20000}    # assumption: a host (CPU, memory, NICs, power, 4 chips' boards) ~2.3 years
REPAIR_H=${REPAIR_H:-48}             # assumption: a failed cube's host or tray replaced within 2 days
DETECTION=${DETECTION:-1s}           # assumption: the job's heartbeat timeout
RECONFIGURATION=${RECONFIGURATION:-10ms}  # MEMS mirror switching (Palomar: ms-class; the OCS default)
RESTART=${RESTART:-10s}              # Jouppi et al. ISCA 2023: ~10 s end-to-end slice reconfiguration incl. software
SLICES=${SLICES:-"4 16 48"}          # slice sizes in cubes (256, 1,024 and 3,072 chips)
SPARES=${SPARES:-8}                  # spares 0..SPARES (N + spares <= 64 cubes of the pod)
mkdir -p "$OUT"
"$BIN" run configs/tpu_v4_failover.yaml \
  --set faults.detection_time="$DETECTION" \
  --set device_types.palomar.reconfiguration_time="$RECONFIGURATION" \
  --set "faults.events[0].restart_time=$RESTART" \
  --out "$OUT/run" --quiet >/dev/null
python3 - "$OUT" "$CHIP_MTBF_H" "$HOST_MTBF_H" "$REPAIR_H" "$SLICES" "$SPARES" <<'PY'
import json, math, sys
out, chip_mtbf, host_mtbf, repair, slices, spares = sys.argv[1:7]
chip_mtbf, host_mtbf, repair = float(chip_mtbf), float(host_mtbf), float(repair)
slices, spares = [int(x) for x in slices.split()], int(spares)
r = json.load(open(out + "/run/results.json"))
b = r["faults"]["events"][0]["bypass"]
down_s = b["downtime_ps"] * 1e-12
lam = 64.0 / chip_mtbf + 16.0 / host_mtbf            # cube failures per hour
q = lam * repair / (1.0 + lam * repair)               # a cube is down
print("# simulated bypass downtime per failure: %.6f s (detection %.3f s + drain wait %.6f s + "
      "reconfiguration %.6f s + restart %.3f s)" % (
          down_s, (b["detected_ps"] - r["faults"]["events"][0]["at_ps"]) * 1e-12,
          b["drain_wait_ps"] * 1e-12, (b["dark_until_ps"] - b["dark_from_ps"]) * 1e-12,
          b["restart_time_ps"] * 1e-12))
print("# cube failure rate %.3e /h (MTBF %.0f h), repair %.0f h: a cube is down %.3f%% of the time"
      % (lam, 1.0 / lam, repair, 100 * q))
csv = ["slice_cubes,slice_chips,spares,p_enough_cubes,bypass_downtime_share,availability"]
table = {}
for n in slices:
    for s in range(spares + 1):
        if n + s > 64: continue
        m = n + s
        p = sum(math.comb(m, k) * q**k * (1 - q)**(m - k) for k in range(s + 1))
        share = n * lam * down_s / 3600.0
        a = p * (1 - share)
        table[(n, s)] = a
        csv.append("%d,%d,%d,%.6f,%.3e,%.6f" % (n, 64 * n, s, p, share, a))
open(out + "/availability.csv", "w").write("\n".join(csv) + "\n")
print("%-22s" % "spares ->" + "".join("%9d" % s for s in range(spares + 1)))
for n in slices:
    row = "".join(("%8.3f%%" % (100 * table[(n, s)])) if (n, s) in table else "%9s" % "-"
                  for s in range(spares + 1))
    print("%-22s" % ("%d cubes (%d chips)" % (n, 64 * n)) + row)
# The figure: availability (%) against spares, one line per slice size.
W, H, L, R, T, B = 640, 400, 70, 170, 30, 50
ymin, ymax = 0.0, 100.0
def X(s): return L + (W - L - R) * s / spares
def Y(a): return T + (H - T - B) * (1 - (a - ymin) / (ymax - ymin))
svg = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">' % (W, H),
       '<rect width="100%" height="100%" fill="white"/>',
       '<text x="%d" y="18" font-size="14">Slice availability against spare cubes (OCS bypass, downtime %.2f s per failure)</text>' % (L - 40, down_s)]
for v in range(0, 101, 20):
    svg.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (L, Y(v), W - R, Y(v)))
    svg.append('<text x="%d" y="%.1f" text-anchor="end">%d%%</text>' % (L - 6, Y(v) + 4, v))
for s in range(spares + 1):
    svg.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>' % (X(s), H - B + 18, s))
svg.append('<text x="%d" y="%d" text-anchor="middle">spare cubes in the pod</text>' % ((L + W - R) / 2, H - 12))
svg.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (L, H - B, W - R, H - B))
svg.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (L, T, L, H - B))
colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"]
for i, n in enumerate(slices):
    pts = [(X(s), Y(100 * table[(n, s)])) for s in range(spares + 1) if (n, s) in table]
    c = colours[i % len(colours)]
    svg.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>' % (c, " ".join("%.1f,%.1f" % p for p in pts)))
    for x, y in pts:
        svg.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>' % (x, y, c))
    svg.append('<text x="%d" y="%d" fill="%s">%d cubes (%d chips)</text>' % (W - R + 10, T + 20 + 18 * i, c, n, 64 * n))
svg.append('<text x="%d" y="%d" fill="#555">cube MTBF %.0f h</text>' % (W - R + 10, T + 30 + 18 * len(slices), 1 / lam))
svg.append('<text x="%d" y="%d" fill="#555">repair %.0f h</text>' % (W - R + 10, T + 48 + 18 * len(slices), repair))
svg.append('</svg>')
open(out + "/availability.svg", "w").write("\n".join(svg) + "\n")
print("# wrote %s/availability.csv and %s/availability.svg" % (out, out))
PY
