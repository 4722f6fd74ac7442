#!/usr/bin/env bash
# Aggregated (transaction level, as shipped) against per packet on the shipped configs:
# one size per config, large enough that the shipped aggregation applies, small enough that
# the per-packet run takes a few CPU minutes at most; one exception, GB200 NVL72 as shipped
# (one 1 GiB ring all-reduce: 9-10 CPU minutes per packet), because it is the config's
# own point.
#
#   scripts/aggregation_check.sh [BINARY] [--only CONFIG]... [--against MARKDOWN]
#
# Prints, per case, both times (us), the difference in percent, packet-hops per
# transaction-hop of the aggregated run (1.0: the shipped aggregation does not apply at that
# size, and the two runs are the same) and both runs' CPU seconds.
# The table in docs/fidelity.md ("Aggregated against per packet") is its output.
# --against FILE: also compare both times with the table row of the same case in FILE
# (the row whose first cell is the case's name, or the name and a note in parentheses);
# exits 1 if any differs or is missing there (a table that a later change made stale).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
bin=build/fabricsim
only=()
against=
while [ $# -gt 0 ]; do
  case "$1" in
    --only) only+=("$2"); shift ;;
    --against) against=$2; shift ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) bin=$1 ;;
  esac
  shift
done
[ -x "$bin" ] || { echo "aggregation_check: $bin is not executable (build first)" >&2; exit 2; }
[ -z "$against" ] || [ -r "$against" ] || { echo "aggregation_check: --against $against: cannot read it" >&2; exit 2; }
stale=0

# name | config | overrides
cases=(
  "dgx_h100 ring 64MiB|configs/dgx_h100.yaml|--set workload.algorithm=ring --set workload.min_bytes=64MiB --set workload.max_bytes=64MiB"
  "dgx_h100 nvls 64MiB|configs/dgx_h100.yaml|--set workload.algorithm=nvls --set workload.min_bytes=64MiB --set workload.max_bytes=64MiB"
  "dgx_h100 nvls 64MiB group messages aggregated from 64 KiB|configs/dgx_h100.yaml|--set workload.algorithm=nvls --set workload.min_bytes=64MiB --set workload.max_bytes=64MiB --set simulation.aggregate_min_group_message=64KiB"
  "dgx_h100 nvls reduce_scatter 16MiB sync data|configs/dgx_h100.yaml|--set workload.type=collective_sweep --set workload.collective=reduce_scatter --set workload.algorithm=nvls --set workload.sync=data --set workload.protocol=simple --set workload.min_bytes=16MiB --set workload.max_bytes=16MiB"
  "dgx_h100 nvls reduce_scatter 64MiB|configs/dgx_h100.yaml|--set workload.type=collective_sweep --set workload.collective=reduce_scatter --set workload.algorithm=nvls --set workload.min_bytes=64MiB --set workload.max_bytes=64MiB"
  "dgx_h100 nvls all_gather 64MiB|configs/dgx_h100.yaml|--set workload.type=collective_sweep --set workload.collective=all_gather --set workload.algorithm=nvls --set workload.min_bytes=64MiB --set workload.max_bytes=64MiB"
  "dgx_a100 64MiB|configs/dgx_a100.yaml|--set workload.min_bytes=64MiB --set workload.max_bytes=64MiB"
  "hgx_b200 ring 64MiB|configs/hgx_b200.yaml|--set workload.algorithm=ring --set workload.min_bytes=64MiB --set workload.max_bytes=64MiB"
  "mi300x_mesh 64MiB|configs/mi300x_mesh.yaml|--set workload.min_bytes=64MiB --set workload.max_bytes=64MiB"
  "gb200_nvl72 ring 64MiB|configs/gb200_nvl72.yaml|--set workload.algorithm=ring --set workload.min_bytes=64MiB --set workload.max_bytes=64MiB"
  "gb200_nvl72 as shipped 1GiB|configs/gb200_nvl72.yaml|"
  "gb200_nvl72 16 GPUs ring 64MiB|configs/gb200_nvl72.yaml|--set topology.endpoints=16 --set workload.min_bytes=64MiB --set workload.max_bytes=64MiB"
  "gb200_nvl72 16 GPUs ring 64MiB fair completion|configs/gb200_nvl72.yaml|--set topology.endpoints=16 --set workload.min_bytes=64MiB --set workload.max_bytes=64MiB --set simulation.aggregate_fair_completion=true"
  "ualink_pod8 64MiB|configs/ualink_pod8.yaml|--set workload.min_bytes=64MiB --set workload.max_bytes=64MiB"
  "pcie_8gpu 64MiB|configs/pcie_8gpu.yaml|--set workload.min_bytes=64MiB --set workload.max_bytes=64MiB"
  "pcie_8gpu_p2p 64MiB|configs/pcie_8gpu_p2p.yaml|--set workload.min_bytes=64MiB --set workload.max_bytes=64MiB"
  "2x_dgx_h100_ib 256MiB|configs/2x_dgx_h100_ib.yaml|--set workload.min_bytes=256MiB --set workload.max_bytes=256MiB"
  "2x_dgx_h100_ib hierarchical_nvls 256MiB|configs/2x_dgx_h100_ib.yaml|--set workload.algorithm=hierarchical_nvls --set workload.min_bytes=256MiB --set workload.max_bytes=256MiB"
  "16x_dgx_h100_ib 64MiB|configs/16x_dgx_h100_ib.yaml|--set workload.min_bytes=64MiB --set workload.max_bytes=64MiB"
  "16x_dgx_h100_ib 64MiB whole transactions per turn|configs/16x_dgx_h100_ib.yaml|--set workload.min_bytes=64MiB --set workload.max_bytes=64MiB --set simulation.aggregate_round_robin_packets=false"
  "16x_dgx_h100_ib 256KiB|configs/16x_dgx_h100_ib.yaml|--set workload.min_bytes=256KiB --set workload.max_bytes=256KiB"
  "16x_dgx_h100_ib 1MiB|configs/16x_dgx_h100_ib.yaml|--set workload.min_bytes=1MiB --set workload.max_bytes=1MiB"
  "16x_dgx_h100_ib 16MiB|configs/16x_dgx_h100_ib.yaml|--set workload.min_bytes=16MiB --set workload.max_bytes=16MiB"
  "16x_dgx_h100_ib 16MiB whole transactions per turn|configs/16x_dgx_h100_ib.yaml|--set workload.min_bytes=16MiB --set workload.max_bytes=16MiB --set simulation.aggregate_round_robin_packets=false"
  "32x_dgx_h100_rail 2 nodes uec 256MiB|configs/32x_dgx_h100_rail.yaml|--set topology.nodes=2 --set topology.spines=0 --set topology.uplinks_per_rail=0 --set workload.min_bytes=256MiB --set workload.max_bytes=256MiB"
  "32x_dgx_h100_rail 2 nodes roce 256MiB|configs/32x_dgx_h100_rail.yaml|--set topology.scale_out=roce --set topology.nodes=2 --set topology.spines=0 --set topology.uplinks_per_rail=0 --set workload.min_bytes=256MiB --set workload.max_bytes=256MiB"
  "tpu_v4_slice as shipped|configs/tpu_v4_slice.yaml|"
)

printf '| case | aggregated us | per packet us | difference | packet-hops per transaction-hop | CPU s (aggregated / per packet) |\n|---|---:|---:|---:|---:|---|\n'
for c in "${cases[@]}"; do
  IFS='|' read -r name cfg ov <<<"$c"
  if [ ${#only[@]} -gt 0 ]; then
    keep=0; for o in "${only[@]}"; do [[ "$cfg" == *"$o"* ]] && keep=1; done
    [ $keep = 1 ] || continue
  fi
  run() {  # prints "time_us hops_ratio cpu_s" of the first row
    local t; t=$(mktemp)
    # shellcheck disable=SC2086
    /usr/bin/time -f '%U' -o "$t.cpu" "$bin" run "$cfg" --quiet $ov "$@" --out "$t.d" >/dev/null 2>"$t.err" ||
      { echo "aggregation_check: $name failed: $(head -c 300 "$t.err")" >&2; echo "- - -"; return; }
    python3 -c "import json,sys; r=json.load(open(sys.argv[1])); c=r['run_cost']; print('%.2f %.1f' % (r['rows'][0]['time_us'], c['packet_hops']/max(1,c['transaction_hops'])))" "$t.d/results.json" | tr '\n' ' '
    cat "$t.cpu"
    rm -rf "$t" "$t.cpu" "$t.err" "$t.d"
  }
  read -r ta ha ca < <(run)
  read -r tp _ cp < <(run --set simulation.aggregate_bytes=0B)
  diff=$(python3 -c "import sys; a,p=sys.argv[1:3]; print('%+.3f%%' % (100*(float(a)/float(p)-1)) if a!='-' and p!='-' else '-')" "$ta" "$tp")
  printf '| %s | %s | %s | %s | %s | %s / %s |\n' "$name" "$ta" "$tp" "$diff" "$ha" "$ca" "$cp"
  if [ -n "$against" ]; then
    # The table's aggregated and per-packet times of this case: "A P", or nothing.
    listed=$(python3 - "$against" "$name" <<'PY'
import sys
path, name = sys.argv[1:3]
for line in open(path):
    cells = [c.strip() for c in line.strip().strip('|').split('|')]
    if len(cells) >= 3 and (cells[0] == name or cells[0].startswith(name + ' (')):
        print(cells[1].strip('*'), cells[2].strip('*'))
        break
PY
)
    if [ -z "$listed" ]; then
      echo "aggregation_check: $name: no row for it in $against" >&2; stale=1
    elif [ "$listed" != "$ta $tp" ]; then
      echo "aggregation_check: $name: measured $ta / $tp us (aggregated / per packet), $against has $listed: the table is stale" >&2
      stale=1
    fi
  fi
done
if [ -n "$against" ] && [ $stale = 1 ]; then exit 1; fi
exit 0
