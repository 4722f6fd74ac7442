#!/usr/bin/env bash
# Bad-input corpus runner.
#
#   run_bad.sh FABRICSIM_BINARY BAD_DIR [KNOWN_ISSUES_DIR]
#
# Every BAD_DIR/*.yaml starts with a comment block:
#   # expect-exit: 2
#   # expect: @FILE@:LINE:COL: key.path: fragment of the message
#   # expect: another fragment (e.g. the hint)
# Compare files in BAD_DIR/../bad_compare (same header) run as `compare FILE`.
# The runner calls `FABRICSIM_BINARY check FILE` (stdin from /dev/null, 20 s timeout),
# compares the exit code with expect-exit and checks that every expect fragment, with
# @FILE@ replaced by the path it passed, is a fixed substring of stderr. A case also
# fails if it exits 0, 3 (internal error), times out, or dies by a signal, whatever its
# header says. Command-line cases (missing file, binary file, ...) follow below.
#
# KNOWN_ISSUES_DIR (optional) holds configs in the same format that the current binary
# mishandles: each prints `xfail NAME` (or `XPASS NAME` once fixed: move it to BAD_DIR)
# and none of them counts towards the passed/failed totals.
#
# Prints `ok NAME` or `FAIL NAME: ...` per case and ends with `N passed, M failed`;
# exits 0 only if nothing failed. RUN_BAD_TIMEOUT overrides the per-case timeout (20s).
set -u

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  echo "usage: $0 FABRICSIM_BINARY BAD_DIR [KNOWN_ISSUES_DIR]" >&2
  exit 2
fi
BIN=$1
BAD_DIR=$2
KNOWN_DIR=${3:-}
TIMEOUT=${RUN_BAD_TIMEOUT:-20s}

if [ ! -x "$BIN" ]; then
  echo "FAIL setup: $BIN is not an executable"
  echo "0 passed, 1 failed"
  exit 1
fi
if ! command -v timeout >/dev/null 2>&1; then
  echo "FAIL setup: the 'timeout' command (coreutils) is not available"
  echo "0 passed, 1 failed"
  exit 1
fi

passed=0
failed=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/run_bad.XXXXXX") || { echo "FAIL setup: mktemp"; echo "0 passed, 1 failed"; exit 1; }
trap 'rm -rf "$TMP"' EXIT
OUT=$TMP/stdout
ERR=$TMP/stderr

# run_cmd ARGS...: runs BIN ARGS with a timeout; sets $rc, stderr in $ERR.
run_cmd() {
  # The subshell keeps bash's own "Segmentation fault" notice out of the report.
  (timeout "$TIMEOUT" "$BIN" "$@" </dev/null >"$OUT" 2>"$ERR"; r=$?; exit "$r") 2>/dev/null
  rc=$?
}

# One line of stderr for a report: control characters made visible, length bounded.
stderr_excerpt() {
  head -c 600 "$ERR" | LC_ALL=C tr '\n\t' '  ' | LC_ALL=C tr -c '[:print:]' '?'
}

# why_bad EXPECTED_EXIT FRAGMENTS...: empty if the last run matches, else the reason.
why_bad() {
  local want=$1
  shift
  local reason=""
  if [ "$rc" -eq 124 ]; then
    reason="timed out after $TIMEOUT"
  elif [ "$rc" -ge 128 ]; then
    reason="crashed (signal $((rc - 128)))"
  elif [ "$rc" -eq 0 ] && [ "$want" != 0 ]; then
    reason="accepted the bad input"
  elif [ "$rc" -eq 3 ] && [ "$want" != 3 ]; then
    reason="internal error instead of a bad-input error"
  elif [ "$rc" != "$want" ]; then
    reason="wrong exit code"
  fi
  local frag
  for frag in "$@"; do
    if ! grep -qaF -e "$frag" "$ERR"; then
      reason="${reason:+$reason; }stderr lacks '$frag'"
    fi
  done
  printf '%s' "$reason"
}

# report NAME EXPECTED_EXIT REASON [MODE]: MODE "xfail" for known issues.
report() {
  local name=$1 want=$2 reason=$3 mode=${4:-}
  if [ "$mode" = xfail ]; then
    if [ -z "$reason" ]; then
      echo "XPASS $name: now behaves as expected; move it into the corpus"
    else
      echo "xfail $name: expected exit $want, got exit $rc ($reason), stderr: $(stderr_excerpt)"
    fi
    return
  fi
  if [ -z "$reason" ]; then
    echo "ok $name"
    passed=$((passed + 1))
  else
    echo "FAIL $name: expected exit $want and the expected message, got exit $rc ($reason), stderr: $(stderr_excerpt)"
    failed=$((failed + 1))
  fi
}

# check_case NAME EXPECTED_EXIT FRAGMENT... -- ARGS...: runs BIN ARGS and reports.
check_case() {
  local name=$1 want=$2
  shift 2
  local frags=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    frags+=("$1")
    shift
  done
  shift  # --
  run_cmd "$@"
  report "$name" "$want" "$(why_bad "$want" ${frags[@]+"${frags[@]}"})"
}

# run_yaml_case FILE [xfail|-] [COMMAND]: one corpus file, run as `BIN COMMAND FILE`
# (COMMAND: check, the default, or compare for compare files).
run_yaml_case() {
  local f=$1 mode=${2:-} cmd=${3:-check}
  [ "$mode" = - ] && mode=""
  local name
  name=$(basename "$f" .yaml)
  local want="" frags=() line
  while IFS= read -r line || [ -n "$line" ]; do
    line=${line%$'\r'}
    case "$line" in
      "# expect-exit:"*)
        want=${line#"# expect-exit:"}
        want=${want//[[:space:]]/}
        ;;
      "# expect: "*)
        frags+=("${line#"# expect: "}")
        ;;
      "#"*) ;;
      *) break ;;  # the header ends at the first line that is not a comment
    esac
  done <"$f"
  if ! [[ "$want" =~ ^[0-9]+$ ]] || [ ${#frags[@]} -eq 0 ]; then
    echo "FAIL $name: $f: the header needs '# expect-exit: N' and at least one '# expect: ...' line"
    failed=$((failed + 1))
    return
  fi
  local subst=() frag
  for frag in "${frags[@]}"; do
    subst+=("${frag//@FILE@/$f}")
  done
  run_cmd "$cmd" "$f"
  report "$name" "$want" "$(why_bad "$want" "${subst[@]}")" "$mode"
}

# --- corpus --------------------------------------------------------------------------
shopt -s nullglob
files=("$BAD_DIR"/*.yaml)
if [ ${#files[@]} -eq 0 ]; then
  echo "FAIL corpus: no *.yaml files in $BAD_DIR"
  failed=$((failed + 1))
fi
for f in "${files[@]}"; do
  run_yaml_case "$f"
done

# --- compare files (fabricsim compare FILE), in BAD_DIR/../bad_compare ------------------
COMPARE_DIR=$BAD_DIR/../bad_compare
if [ -d "$COMPARE_DIR" ]; then
  for f in "$COMPARE_DIR"/*.yaml; do
    run_yaml_case "$f" - compare
  done
fi

# --- command-line and file-level cases ------------------------------------------------
# A small valid config: the baseline for the --set and option cases.
GOOD=$TMP/good.yaml
cat >"$GOOD" <<'YAML'
version: 1
name: run_bad_baseline
link_types:
  nvl:
    protocol: nvlink
    lanes: 2
    lane_rate: 100Gb/s
    packet_payload: 128B
    latency: 25ns
    rx_buffer: 8KiB
device_types:
  gpu:
    type: endpoint
    protocol: nvlink
    ports: 1
    memory_bandwidth: 1000GB/s
  sw:
    type: switch
    protocol: nvlink
    ports: 4
    pipeline_latency: 100ns
    egress_buffer: 4KiB
topology:
  type: switched_node
  endpoint_type: gpu
  endpoints: 2
  switch_type: sw
  switches: 1
  links_per_switch: [1]
  link_type: nvl
workload:
  type: allreduce_sweep
  min_bytes: 4KiB
  max_bytes: 8KiB
YAML
check_case valid_baseline 0 -- check "$GOOD"

MISSING=$TMP/no_such_dir/missing.yaml
check_case missing_file 2 "$MISSING" -- check "$MISSING"

BINARY=$TMP/binary.yaml
# 64 bytes: an ELF-like header with NUL bytes, then bytes that are not UTF-8.
printf '\177ELF\002\001\001\000\000\000\000\000\000\000\000\000\003\000\076\000\001\000\000\000\020\153\000\000\000\000\000\000\336\255\276\357\000\377\376\001\002\003\004\005\006\007\010\011\012\013\014\015\016\017\200\201\202\203\204\205\206\207\210\211' >"$BINARY"
check_case binary_file 2 "$BINARY" -- check "$BINARY"

EMPTY=$TMP/empty.yaml
: >"$EMPTY"
check_case empty_file 2 "$EMPTY:1:1:" -- check "$EMPTY"

COMMENTS=$TMP/comments_only.yaml
printf '# nothing but a comment\n\n' >"$COMMENTS"
check_case comments_only_file 2 "$COMMENTS:1:1:" -- check "$COMMENTS"

CFGDIR=$TMP/config_dir.yaml
mkdir -p "$CFGDIR"
check_case directory_as_config 2 "$CFGDIR" -- check "$CFGDIR"

check_case unknown_option 2 "--no-such-option" -- check "$GOOD" --no-such-option
check_case missing_command 2 "missing command" --
check_case unknown_command 2 "frobnicate" -- frobnicate "$GOOD"
check_case check_without_config 2 "exactly one CONFIG" -- check

check_case set_unknown_key 2 "$GOOD:<--set>: workload.max_byte: unknown key 'max_byte'" "did you mean 'max_bytes'?" -- \
  run "$GOOD" --set workload.max_byte=1MiB --quiet --out "$TMP/out_set_unknown"
check_case set_bad_value 2 "$GOOD:<--set>: workload.max_bytes:" "'lots' is not a size" -- \
  check "$GOOD" --set workload.max_bytes=lots
check_case set_without_equals 2 "--set workload" "expected key.path=value" -- \
  check "$GOOD" --set workload
# An empty --set value is located at the --set, not at the key's line in the file.
check_case set_empty_value 2 "$GOOD:<--set>: workload.max_bytes: no value given" -- \
  check "$GOOD" --set workload.max_bytes=
check_case set_control_character 2 "contains a control character or invalid UTF-8 (U+001B" -- \
  check "$GOOD" --set "name=a$(printf '\033')[31mred"
# Endless devices: refused after bounded reading, at the first byte that is not text.
check_case dev_zero 2 "/dev/zero:1:1: a control character (U+0000, a NUL byte)" -- check /dev/zero
# Random bytes: the first one that is not text ends it, located in the file. Only the
# file is fixed: a newline byte can come first (line 2 or more, ~0.4% of runs), and a lone
# carriage return has its own message (~0.7%); both were seen failing this case.
check_case dev_urandom 2 "fabricsim: error: /dev/urandom:" -- check /dev/urandom
# --seed takes every value the config's seed takes, and no other.
check_case seed_largest 0 -- run "$GOOD" --seed 9000000000000000000 --quiet
check_case seed_too_large 2 "--seed takes an integer from 0 to 9000000000000000000" -- \
  run "$GOOD" --seed 9000000000000000001 --quiet
# Faults given on the command line are located at the --set.
check_case set_fault_unknown_port 2 "$GOOD:<--set>: faults.events[0].link: port gpu0.port[3] has no link" -- \
  check "$GOOD" --set 'faults.events=[{type: link_down, link: "gpu0.port[3]", at: 1us}]'
check_case set_fault_time_beyond_limit 2 "$GOOD:<--set>: faults.events[0].at: at 61s is not before simulation.time_limit" -- \
  check "$GOOD" --set 'faults={events: [{type: switch_down, device: sw0, at: 61s}]}'
# Dragonfly routing picks paths from the topology's coordinates: faults are refused there.
DRAGONFLY=$BAD_DIR/../../../configs/eth_dragonfly_1056.yaml
if [ -f "$DRAGONFLY" ]; then
  check_case faults_with_dragonfly_routing 2 "device_types.router.routing: faults with routing: minimal are not modelled" -- \
    check "$DRAGONFLY" --set 'faults.events=[{type: link_down, link: "g0_r0.port[0]", at: 1us}]'
fi
check_case describe_unknown_type 2 "no_such_type" -- describe no_such_type
check_case compare_without_file 2 "compare takes exactly one FILE" -- compare
check_case compare_missing_file 2 "$MISSING" -- compare "$MISSING"

# --- known issues (reported, not counted) ---------------------------------------------
if [ -n "$KNOWN_DIR" ]; then
  for f in "$KNOWN_DIR"/*.yaml; do
    [ -e "$f" ] || continue
    run_yaml_case "$f" xfail
  done
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
