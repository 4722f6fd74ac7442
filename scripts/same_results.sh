#!/usr/bin/env bash
# Same results from two fabricsim binaries: a refactoring's proof that nothing moved.
#
#   scripts/same_results.sh OLD_BINARY NEW_BINARY [--full] [--only CASE]... [--out DIR] [-j N]
#
# Runs every case below with both binaries and compares, per case:
#   - results.json with `run_cost` and `command_line` removed (the only fields that differ
#     between identical runs), key by key, as canonical JSON;
#   - stdout without the `# run cost:` and `# results:` lines (the table, the header, retry lines);
#   - the exit code and stderr (bad inputs: the messages are part of the interface);
# plus `describe` for every component type (the config reference is generated from it) and
# every bad config of tests/configs/bad and tests/configs/bad_compare (`check`: exit code
# and message byte for byte).
# The quick set runs every shipped config (long sweeps cut with --set workload.max_bytes=)
# in about a minute of CPU per binary; --full adds the full sweeps of dgx_h100, ualink_pod8
# and 2x_dgx_h100_ib, gb200_nvl72 as shipped (1 GiB aggregated) and the full DDP and FSDP
# steps (about 6 CPU-minutes per binary).
# The old binary's outputs are cached in DIR/old (keyed by the binary's checksum), so a
# second comparison against the same baseline only runs the new one.
# Prints `same CASE` or `DIFF CASE` with the first differing lines, then a summary; exits 0
# only when every case is the same.
set -uo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; }
[ $# -ge 2 ] || { usage >&2; exit 2; }
OLD=$(realpath "$1"); NEW=$(realpath "$2"); shift 2
full=0; only=(); out=out/same_results; jobs=$(nproc)
while [ $# -gt 0 ]; do
  case "$1" in
    --full) full=1 ;;
    --only) only+=("$2"); shift ;;
    --out) out=$2; shift ;;
    -j) jobs=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "same_results: unknown option '$1'" >&2; exit 2 ;;
  esac
  shift
done
for b in "$OLD" "$NEW"; do [ -x "$b" ] || { echo "same_results: $b is not executable" >&2; exit 2; }; done

S=--set
RAIL2="$S topology.nodes=2 $S topology.spines=0 $S topology.uplinks_per_rail=0 $S workload.type=collective_sweep $S workload.collective=all_reduce $S workload.min_bytes=1MiB $S workload.max_bytes=8MiB"
FT8="$S topology.tiers=2 $S topology.radix=4 $S topology.oversubscription=[1] $S device_types.eth_switch.ecn_kmin=8KiB $S device_types.eth_switch.ecn_kmax=64KiB $S device_types.eth_switch.trim_threshold=32KiB $S device_types.eth_switch.pfc_ecn_kmin=8KiB $S device_types.eth_switch.pfc_ecn_kmax=64KiB $S device_types.eth_switch.pfc_xoff=48KiB $S device_types.eth_switch.pfc_xon=24KiB $S workload={} $S workload.type=collective_sweep $S workload.collective=alltoall $S workload.min_bytes=4MiB $S workload.max_bytes=4MiB"
# name|command and arguments (CONFIG paths relative to the repository)
cases=(
  "minimal|run configs/minimal.yaml"
  "minimal_tree8|run configs/minimal.yaml $S workload.algorithm=tree $S topology.endpoints=8 $S device_types.sw.ports=16"
  "minimal_hd|run configs/minimal.yaml $S workload.algorithm=halving_doubling"
  "minimal_direct|run configs/minimal.yaml $S workload.algorithm=direct"
  "minimal_auto|run configs/minimal.yaml $S workload.algorithm=auto"
  "minimal_alltoall|run configs/minimal.yaml $S workload.type=collective_sweep $S workload.collective=alltoall $S workload.algorithm=pairwise"
  "minimal_alltoall_direct|run configs/minimal.yaml $S workload.type=collective_sweep $S workload.collective=alltoall $S workload.algorithm=direct"
  "minimal_rs|run configs/minimal.yaml $S workload.type=collective_sweep $S workload.collective=reduce_scatter"
  "minimal_ag|run configs/minimal.yaml $S workload.type=collective_sweep $S workload.collective=all_gather"
  "minimal_bcast|run configs/minimal.yaml $S workload.type=collective_sweep $S workload.collective=broadcast $S workload.algorithm=ring"
  "minimal_reduce|run configs/minimal.yaml $S workload.type=collective_sweep $S workload.collective=reduce $S workload.algorithm=ring"
  "minimal_hash|run configs/minimal.yaml $S device_types.sw.route_select=hash $S seed=7"
  "minimal_data|run configs/minimal.yaml $S workload.sync=data"
  "dgx_h100_4m|run configs/dgx_h100.yaml $S workload.max_bytes=4MiB"
  "dgx_h100_nvls|run configs/dgx_h100.yaml $S workload.algorithm=nvls $S workload.max_bytes=4MiB"
  "dgx_h100_auto|run configs/dgx_h100.yaml $S workload.algorithm=auto $S workload.max_bytes=4MiB"
  "dgx_h100_auto_nonvls|run configs/dgx_h100.yaml $S workload.algorithm=auto $S device_types.nvswitch3.nvls=false $S workload.max_bytes=4MiB"
  "dgx_h100_ag_nvls|run configs/dgx_h100.yaml $S workload.type=collective_sweep $S workload.collective=all_gather $S workload.algorithm=nvls $S workload.max_bytes=4MiB"
  "dgx_h100_ber|run configs/dgx_h100.yaml $S workload.max_bytes=2MiB $S link_types.nvlink4.ber=1e-7"
  "dgx_a100_4m|run configs/dgx_a100.yaml $S workload.max_bytes=4MiB"
  "hgx_b200_4m|run configs/hgx_b200.yaml $S workload.max_bytes=4MiB"
  "hgx_b200_nvls|run configs/hgx_b200.yaml $S workload.algorithm=nvls $S workload.max_bytes=4MiB"
  "gb200_nvl72_4m|run configs/gb200_nvl72.yaml $S workload.min_bytes=4MiB $S workload.max_bytes=4MiB"
  "gb200_nvl72_nvls|run configs/gb200_nvl72.yaml $S workload.algorithm=nvls $S workload.min_bytes=16MiB $S workload.max_bytes=16MiB"
  "nvl576_cut|run configs/nvl576_two_tier.yaml $S device_types.b200.ports=2 $S topology.endpoints=16 $S topology.racks=2 $S topology.leaf_down=4 $S topology.leaf_up=2 $S topology.spines_per_plane=2 $S workload.min_bytes=4MiB $S workload.max_bytes=4MiB"
  "nvl576_cut_a2a|run configs/nvl576_two_tier.yaml $S device_types.b200.ports=2 $S topology.endpoints=16 $S topology.racks=2 $S topology.leaf_down=4 $S topology.leaf_up=4 $S topology.spines_per_plane=2 $S workload.type=collective_sweep $S workload.collective=alltoall $S workload.algorithm=direct $S workload.channels=1 $S workload.min_bytes=1MiB $S workload.max_bytes=1MiB"
  "nvl576_check|check configs/nvl576_two_tier.yaml $S workload.channels=1"
  "2x_ib_4m|run configs/2x_dgx_h100_ib.yaml $S workload.max_bytes=4MiB"
  "2x_ib_hnvls|run configs/2x_dgx_h100_ib.yaml $S workload.algorithm=hierarchical_nvls $S workload.slices=2 $S workload.min_bytes=4MiB $S workload.max_bytes=4MiB"
  "2x_ib_hier|run configs/2x_dgx_h100_ib.yaml $S workload.algorithm=hierarchical $S workload.min_bytes=4MiB $S workload.max_bytes=4MiB"
  "16x_ib_64k|run configs/16x_dgx_h100_ib.yaml $S workload.max_bytes=64KiB"
  "pcie_8gpu_4m|run configs/pcie_8gpu.yaml $S workload.max_bytes=4MiB"
  "pcie_8gpu_p2p_4m|run configs/pcie_8gpu_p2p.yaml $S workload.max_bytes=4MiB"
  "ualink_pod8_4m|run configs/ualink_pod8.yaml $S workload.max_bytes=4MiB"
  "ualink_pod8_ber|run configs/ualink_pod8.yaml $S workload.max_bytes=2MiB $S simulation.aggregate_bytes=0B $S link_types.ualink_x4.ber=1e-6"
  "ualink_pod1024_64k|run configs/ualink_pod1024.yaml $S workload.min_bytes=64KiB $S workload.max_bytes=64KiB"
  "nvlink4_pair|run configs/nvlink4_pair.yaml"
  "two_domains|run configs/two_domains.yaml"
  "worked_example_70b|run configs/worked_example_70b.yaml"
  "worked_example_70b_nvls|run configs/worked_example_70b.yaml $S workload.algorithm=nvls"
  "moe|run configs/moe_dgx_h100.yaml"
  "ddp_small|run configs/ddp_dgx_h100.yaml $S workload.layers=4 $S workload.bucket_sweep_kib=[4096]"
  "fsdp_small|run configs/fsdp_dgx_h100.yaml $S workload.layers=4"
  "compare_scaleup|compare configs/compare_scaleup.yaml $S workload.max_bytes=2MiB"
  "check_compare|check configs/compare_scaleup.yaml"
  "describe|describe"
  # Scale-out Ethernet. The rail cluster cut to 2 nodes (scripts/auto_check.py's 2x_rail
  # cases) on UEC and RoCE, a 1-8 MiB sweep (the 16 MiB row alone costs ~2.5 CPU s).
  "2x_rail_uec_8m|run configs/32x_dgx_h100_rail.yaml $RAIL2 $S topology.scale_out=uec"
  "2x_rail_roce_8m|run configs/32x_dgx_h100_rail.yaml $RAIL2 $S topology.scale_out=roce"
  # The 8-host fat-tree cut with lowered thresholds (tests/system/test_ethernet.cpp,
  # small_tree()): ECN marks, trims and NACKs on UEC, PFC pauses and CNPs on RoCE; and the
  # receiver-credit (rccc) all-to-all through trims.
  "ft8_uec|run configs/eth_fat_tree_128.yaml $FT8 $S topology.nic_type=uec"
  "ft8_roce|run configs/eth_fat_tree_128.yaml $FT8 $S topology.nic_type=roce"
  "ft8_uec_rccc_16m|run configs/eth_fat_tree_128.yaml $FT8 $S topology.nic_type=uec $S device_types.uec.cc=rccc $S workload.algorithm=pairwise $S workload.min_bytes=16MiB $S workload.max_bytes=16MiB"
)
if [ $full -eq 1 ]; then
  cases+=(
    "dgx_h100_full|run configs/dgx_h100.yaml"
    "ualink_pod8_full|run configs/ualink_pod8.yaml"
    "2x_ib_full|run configs/2x_dgx_h100_ib.yaml"
    "gb200_nvl72_full|run configs/gb200_nvl72.yaml"
    "ddp_full|run configs/ddp_dgx_h100.yaml"
    "fsdp_full|run configs/fsdp_dgx_h100.yaml"
  )
fi
# describe TYPE for every type the old binary lists
for t in $("$OLD" describe 2>/dev/null | awk 'NR > 1 && $2 ~ /^\[/ {print $1}'); do
  cases+=("describe_$t|describe $t")
done
for f in tests/configs/bad/*.yaml tests/configs/bad_compare/*.yaml; do
  n=$(basename "$f" .yaml); d=$(basename "$(dirname "$f")")
  cases+=("${d}_$n|check $f")
done

selected() {
  [ ${#only[@]} -eq 0 ] && return 0
  local o; for o in "${only[@]}"; do [ "$o" = "$1" ] && return 0; done; return 1
}

old_sum=$(sha256sum "$OLD" | cut -c1-16)
mkdir -p "$out/old-$old_sum" "$out/new"

# run_case BIN DIR NAME ARGS...: outputs in DIR/NAME/{stdout,stderr,rc,results.json}
run_case() {
  local bin=$1 dir=$2 name=$3; shift 3
  local d=$dir/$name
  rm -rf "$d"; mkdir -p "$d"
  local verb=$1; shift
  local outopt=()
  case "$verb" in run|compare) outopt=(--out "$d/out") ;; esac
  # shellcheck disable=SC2086
  "$bin" "$verb" "$@" "${outopt[@]}" </dev/null >"$d/stdout" 2>"$d/stderr"
  echo $? >"$d/rc"
  [ -f "$d/out/results.json" ] && mv "$d/out/results.json" "$d/results.json"
  rm -rf "$d/out"
  touch "$d/done"
}

# normalise_json FILE [OTHER]: canonical JSON without run_cost and command_line. Given
# OTHER of another schema_version (an old-format file against a new one), only the values
# that exist in both are kept: keys missing from the other file are dropped, recursively
# (results.json 2 added name/kind/device/port to stats entries, rows[].stats and job_stats),
# and every schema_version (a compare file holds its systems' too).
normalise_json() {
  python3 - "$@" <<'PY'
import json, signal, sys
# A DIFF shows only the first lines (head): die quietly when the reader goes away.
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
def strip(j):
    if isinstance(j, dict):
        return {k: strip(v) for k, v in j.items() if k not in ("run_cost", "command_line")}
    if isinstance(j, list):
        return [strip(v) for v in j]
    return j
def common(j, o):
    if isinstance(j, dict) and isinstance(o, dict):
        return {k: common(v, o[k]) for k, v in j.items() if k in o and k != "schema_version"}
    if isinstance(j, list) and isinstance(o, list):
        return [common(v, w) for v, w in zip(j, o)] + j[len(o):]
    return j
j = strip(json.load(open(sys.argv[1])))
if len(sys.argv) > 2:
    o = strip(json.load(open(sys.argv[2])))
    if isinstance(j, dict) and isinstance(o, dict) and j.get("schema_version") != o.get("schema_version"):
        j = common(j, o)
print(json.dumps(j, indent=1, sort_keys=True))
PY
}

jobs_running() { jobs -rp | wc -l; }
for c in "${cases[@]}"; do
  name=${c%%|*}; args=${c#*|}
  selected "$name" || continue
  if [ ! -f "$out/old-$old_sum/$name/done" ]; then
    # shellcheck disable=SC2086
    run_case "$OLD" "$out/old-$old_sum" "$name" $args &
  fi
  # shellcheck disable=SC2086
  run_case "$NEW" "$out/new" "$name" $args &
  while [ "$(jobs_running)" -ge "$jobs" ]; do wait -n; done
done
wait

same=0; diff_n=0
for c in "${cases[@]}"; do
  name=${c%%|*}
  selected "$name" || continue
  a=$out/old-$old_sum/$name; b=$out/new/$name
  bad=""
  for f in rc stderr; do
    cmp -s "$a/$f" "$b/$f" || bad+=" $f"
  done
  cmp -s <(grep -Ev '^# (run cost|results):' "$a/stdout") <(grep -Ev '^# (run cost|results):' "$b/stdout") || bad+=" stdout"
  if [ -f "$a/results.json" ] || [ -f "$b/results.json" ]; then
    if [ -f "$a/results.json" ] && [ -f "$b/results.json" ]; then
      cmp -s <(normalise_json "$a/results.json" "$b/results.json") <(normalise_json "$b/results.json" "$a/results.json") || bad+=" results.json"
    else
      bad+=" results.json(missing)"
    fi
  fi
  if [ -z "$bad" ]; then
    echo "same $name"; same=$((same + 1))
  else
    echo "DIFF $name:$bad"; diff_n=$((diff_n + 1))
    for f in $bad; do
      case "$f" in
        results.json) diff <(normalise_json "$a/results.json" "$b/results.json") <(normalise_json "$b/results.json" "$a/results.json") | head -n 12 | sed 's/^/    /' ;;
        stdout) diff <(grep -Ev '^# (run cost|results):' "$a/stdout") <(grep -Ev '^# (run cost|results):' "$b/stdout") | head -n 8 | sed 's/^/    /' ;;
        rc|stderr) diff "$a/$f" "$b/$f" | head -n 6 | sed 's/^/    /' ;;
      esac
    done
  fi
done
echo "$same same, $diff_n different (old $OLD [$old_sum], new $NEW)"
[ $diff_n -eq 0 ]
