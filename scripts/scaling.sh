#!/usr/bin/env bash
# Scaling efficiency of a training workload: runs the same per-GPU workload on the first N
# ranks of a config (workload `ranks: N`, one fabricsim process per N, since a SystemC
# kernel is elaborated once per process) and prints, per N, the step time of the first
# row, the throughput relative to one GPU and the scaling efficiency
#   efficiency(N) = throughput(N) / (N x throughput(1)) = step(1) / step(N)
# (weak scaling: every GPU does the same work per step, so throughput(N) = N / step(N)).
#
#   scripts/scaling.sh CONFIG "1 2 4 8" [--set key=value]...
#
# The step time is the `step_us` column (ddp_step, fsdp_step, tp_layer) or `time_us`
# (moe_layer) of the first table row. Needs build/fabricsim (scripts/build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 2 ]; then
  echo "usage: $0 CONFIG \"N1 N2 ...\" [--set key=value]..." >&2
  exit 2
fi
config=$1
ns=$2
shift 2
bin=${FABRICSIM:-build/fabricsim}

step_of() {  # prints the first row's step_us (or time_us) from a fabricsim table on stdin
  awk '
    /^# *[a-z_]+( +[a-z_]+)+ *$/ && !col {
      for (i = 2; i <= NF; i++) if ($i == "step_us" || $i == "time_us") { col = i - 1; break }
      next
    }
    /^#/ { next }
    col && NF > 1 { print $col; exit }
  '
}

printf "# %s: weak scaling, efficiency = step(1) / step(N)\n" "$config"
printf "# %6s %14s %12s %11s\n" "ranks" "step_us" "throughput" "efficiency"
printf "# %6s %14s %12s %11s\n" "" "(us)" "(x 1 GPU)" "(ratio)"
base=""
for n in $ns; do
  out=$("$bin" run "$config" "$@" --set workload.ranks="$n")
  step=$(printf "%s\n" "$out" | step_of)
  if [ -z "$step" ]; then
    echo "scaling.sh: no step_us/time_us column in the output for ranks=$n" >&2
    exit 3
  fi
  [ -z "$base" ] && base=$step
  awk -v n="$n" -v s="$step" -v b="$base" \
    'BEGIN { printf "  %6d %14.2f %12.2f %11.3f\n", n, s, n * b / s, b / s }'
done
