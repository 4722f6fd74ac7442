#!/usr/bin/env bash
# Is a case's aggregated-against-per-packet difference larger than the per-packet run's own
# sensitivity? Runs one case at several values of one setting (say a link latency moved by
# a nanosecond or two, which moves no bandwidth and only a few ns of latency), aggregated
# as the config ships it and per packet (simulation.aggregate_bytes=0B), and prints both
# times at every value, then each fidelity's range and mean and the difference of means.
#
#   scripts/aggregation_spread.sh [BINARY] [-j JOBS] CONFIG KEY VALUES [-- OVERRIDES...]
#
#   scripts/aggregation_spread.sh -j 2 configs/16x_dgx_h100_ib.yaml link_types.ndr.latency \
#       498ns,499ns,500ns,501ns,502ns -- --set workload.min_bytes=64MiB --set workload.max_bytes=64MiB
#
# VALUES: comma-separated values of KEY (passed as --set KEY=VALUE). OVERRIDES: more
# arguments for `fabricsim run` (the case's size, algorithm...); the time compared is the
# first row's, so give one size (min_bytes = max_bytes). JOBS: runs at once (1).
# Where a per-packet result swings by more than the aggregated run's difference from it
# (a collective whose end is the slowest of several rings that progress unevenly), the
# comparison of one point says little and the means are the comparison to make:
# docs/fidelity.md, "One point is not enough".
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
bin=build/fabricsim
jobs=1
pos=()
while [ $# -gt 0 ]; do
  case "$1" in
    -j) jobs=$2; shift ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    *) pos+=("$1") ;;
  esac
  shift
done
ov=("$@")
if [ ${#pos[@]} = 4 ]; then bin=${pos[0]}; pos=("${pos[@]:1}"); fi
[ ${#pos[@]} = 3 ] || { echo "aggregation_spread: usage: aggregation_spread.sh [BINARY] [-j JOBS] CONFIG KEY VALUES [-- OVERRIDES...]" >&2; exit 2; }
cfg=${pos[0]}; key=${pos[1]}; IFS=',' read -r -a values <<<"${pos[2]}"
[ -x "$bin" ] || { echo "aggregation_spread: $bin is not executable (build first)" >&2; exit 2; }
[ -r "$cfg" ] || { echo "aggregation_spread: $cfg: cannot read it" >&2; exit 2; }
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "aggregation_spread: -j $jobs: a positive number of jobs" >&2; exit 2; }
[ ${#values[@]} -ge 2 ] || { echo "aggregation_spread: give at least two values of $key" >&2; exit 2; }

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
run() {  # INDEX FIDELITY(a|p): writes "time_us cpu_s" to $dir/INDEX.FIDELITY
  local i=$1 f=$2 extra=()
  local v=${values[$i]}
  [ "$f" = p ] && extra=(--set simulation.aggregate_bytes=0B)
  local out=$dir/$i.$f
  if /usr/bin/time -f '%U' -o "$out.cpu" "$bin" run "$cfg" --quiet "${ov[@]}" --set "$key=$v" \
       "${extra[@]}" --out "$out.d" >/dev/null 2>"$out.err"; then
    python3 -c "import json,sys; print('%.2f' % json.load(open(sys.argv[1]))['rows'][0]['time_us'])" \
      "$out.d/results.json" | tr '\n' ' ' >"$out"
    cat "$out.cpu" >>"$out"
  else
    echo "aggregation_spread: $key=$v ($f): $(head -c 300 "$out.err")" >&2
  fi
}
for i in "${!values[@]}"; do
  for f in a p; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    run "$i" "$f" &
  done
done
wait

for i in "${!values[@]}"; do
  if [ ! -s "$dir/$i.a" ] || [ ! -s "$dir/$i.p" ]; then
    echo "aggregation_spread: $key=${values[$i]} did not run (its error above)" >&2; exit 2
  fi
done
python3 - "$dir" "$key" "${values[@]}" <<'PY'
import sys
d, key, vals = sys.argv[1], sys.argv[2], sys.argv[3:]
runs = [[open(f"{d}/{i}.{f}").read().split() for f in "ap"] for i in range(len(vals))]
print(f"| {key} | aggregated us | per packet us | difference | CPU s (aggregated / per packet) |")
print("|---|---:|---:|---:|---|")
for v, ((ta, ca), (tp, cp)) in zip(vals, runs):
    print(f"| {v} | {ta} | {tp} | {100 * (float(ta) / float(tp) - 1):+.3f}% | {ca} / {cp} |")
a = [float(r[0][0]) for r in runs]
p = [float(r[1][0]) for r in runs]
ma, mp = sum(a) / len(a), sum(p) / len(p)
print()
print(f"per packet: {min(p):.2f}-{max(p):.2f} us (range {100*(max(p)-min(p))/mp:.2f}% of its mean {mp:.2f})")
print(f"aggregated: {min(a):.2f}-{max(a):.2f} us (range {100*(max(a)-min(a))/ma:.2f}% of its mean {ma:.2f})")
print(f"difference of the means: {100*(ma/mp-1):+.3f}%")
PY
