#!/usr/bin/env bash
# Which of two fabricsim binaries is faster, on a shared and noisy machine.
#
#   scripts/ab_pair.sh A_BINARY B_BINARY [-n PAIRS] [--serial] -- RUN_ARGS...
#
# e.g. scripts/ab_pair.sh /tmp/fabricsim_old build/fabricsim -n 4 -- run configs/dgx_h100.yaml \
#        --set simulation.aggregate_bytes=0B --set workload.min_bytes=64MiB \
#        --set workload.max_bytes=64MiB --quiet
#
# Runs A and B at the same time, one per core (taskset; cores swapped every pair), PAIRS
# times (default 3), and prints each pair's user CPU seconds, wall seconds and peak RSS, the
# ratio B/A of user CPU per pair and over all pairs (< 1: B is faster). Sequential runs on
# these VMs drift by up to 30% within minutes, more than most speed changes; two runs at
# the same time see the same neighbours. Two identical binaries measured this way differ by
# up to 3% per pair (docs/performance.md, "Method"). Needs two cores.
# --serial runs A and B one after the other instead (B first in every second pair), each
# alone: for cases that are memory-bound, where two runs at once slow each other by the
# memory they share (NVL576 per packet: 0.6-1.8 per pair at once; docs/performance.md,
# "Address translation"). The medians then say more than the sums.
set -uo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; }
[ $# -ge 2 ] || { usage >&2; exit 2; }
A=$(realpath "$1"); B=$(realpath "$2"); shift 2
pairs=3
serial=0
while [ $# -gt 0 ]; do
  case "$1" in
    -n) [ $# -ge 2 ] || { echo "ab_pair: -n needs a number of pairs" >&2; exit 2; }
        pairs=$2; shift 2 ;;
    --serial) serial=1; shift ;;
    --) shift; break ;;
    *) echo "ab_pair: unknown option '$1' (the run's arguments go after --)" >&2; exit 2 ;;
  esac
done
[ $# -ge 1 ] || { echo "ab_pair: no run arguments after --" >&2; usage >&2; exit 2; }
[[ "$pairs" =~ ^[1-9][0-9]*$ ]] || { echo "ab_pair: -n '$pairs' is not a positive number" >&2; exit 2; }
for b in "$A" "$B"; do [ -x "$b" ] || { echo "ab_pair: $b is not an executable" >&2; exit 2; }; done
[ $serial -eq 1 ] || [ "$(nproc)" -ge 2 ] || { echo "ab_pair: needs 2 cores, this machine has $(nproc)" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "A = $A"
echo "B = $B"
echo "pair  A user s  wall s  RSS MiB   B user s  wall s  RSS MiB   B/A"
# --serial: one run alone; $1 names its files (a or b), $2 is the binary.
one() { /usr/bin/time -o "$tmp/$1" -f "%U %e %M" "$2" "${@:3}" > "$tmp/$1.out" 2>&1; }
for i in $(seq "$pairs"); do
  if [ $serial -eq 1 ]; then
    if [ $((i % 2)) = 1 ]; then
      one a "$A" "$@"; ra=$?; one b "$B" "$@"; rb=$?
    else
      one b "$B" "$@"; rb=$?; one a "$A" "$@"; ra=$?
    fi
  else
    if [ $((i % 2)) = 1 ]; then ca=0; cb=1; else ca=1; cb=0; fi
    /usr/bin/time -o "$tmp/a" -f "%U %e %M" taskset -c $ca "$A" "$@" > "$tmp/a.out" 2>&1 &
    pa=$!
    /usr/bin/time -o "$tmp/b" -f "%U %e %M" taskset -c $cb "$B" "$@" > "$tmp/b.out" 2>&1 &
    pb=$!
    wait $pa; ra=$?
    wait $pb; rb=$?
  fi
  if [ $ra -ne 0 ] || [ $rb -ne 0 ]; then
    echo "ab_pair: a run failed (A exit $ra, B exit $rb); its output:" >&2
    tail -n 5 "$tmp/a.out" "$tmp/b.out" >&2
    exit 1
  fi
  read -r ua wa ma < <(tail -1 "$tmp/a")
  read -r ub wb mb < <(tail -1 "$tmp/b")
  echo "$i $ua $wa $ma $ub $wb $mb"
done | awk '{
  printf "%4d  %8.2f  %6.2f  %7.0f   %8.2f  %6.2f  %7.0f   %.3f\n", $1, $2, $3, $4 / 1024, $5, $6, $7 / 1024, $5 / $2
  sa += $2; sb += $5; a[NR] = $2; b[NR] = $5; n = NR
}
function median(x, m,   i, j, t) {
  for (i = 2; i <= m; i++) for (j = i; j > 1 && x[j - 1] > x[j]; j--) { t = x[j]; x[j] = x[j - 1]; x[j - 1] = t }
  return m % 2 ? x[(m + 1) / 2] : (x[m / 2] + x[m / 2 + 1]) / 2
}
END {
  if (sa > 0) printf "user CPU over all pairs: A %.2f s, B %.2f s, B/A %.3f\n", sa, sb, sb / sa
  if (n > 0) { ma = median(a, n); mb = median(b, n); printf "median user CPU: A %.2f s, B %.2f s, B/A %.3f\n", ma, mb, mb / ma }
}'
