#!/usr/bin/env bash
# Fuzzes the config loader and the --set parser with libFuzzer (docs/reliability.md, "The
# fuzzed loader"): the harnesses tests/fuzz/fuzz_config.cpp (bytes as a config, compare
# or sweep file) and tests/fuzz/fuzz_set.cpp (lines as --set assignments on a valid
# config), built with clang, AddressSanitizer and UndefinedBehaviorSanitizer.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     default: 60 s, both targets
#   BUILD_DIR=build-fuzz   where to build (configured here if needed: clang, ASan, UBSan)
#   JOBS=N                 parallel fuzzing processes per target (libFuzzer -fork; 1)
#
# The seed corpus is every shipped config, the bad-input corpus (tests/configs/bad*/)
# and tests/fuzz/set_seeds/; what the fuzzer learns is kept in BUILD_DIR/fuzz/corpus_*
# (a later run starts from it). Every input in tests/fuzz/regressions/<target>/ (inputs
# that once crashed) is replayed first. A finding (a crash, an internal error, an error
# message that is not printable text, a hang past 30 s, memory past 2 GiB, a leak) stops
# the run: the input is in BUILD_DIR/fuzz/artifacts/ and the script exits 1. Exits 0
# after SECONDS of fuzzing without a finding, and says how many inputs it ran.
#
# CI runs `scripts/fuzz.sh 30` (both targets: one minute) from scripts/test.sh; the long
# run of docs/reliability.md is `scripts/fuzz.sh 1800` (an hour: 30 minutes per target).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET=${1:-60}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=(fuzz_config fuzz_set)
BUILD=${BUILD_DIR:-build-fuzz}
JOBS=${JOBS:-1}

command -v clang++ >/dev/null || { echo "fuzz: clang++ is missing (scripts/setup.sh installs clang)" >&2; exit 2; }
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  CC=clang CXX=clang++ cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Debug -DFABRICSIM_SANITIZE=ON \
    -DFABRICSIM_FUZZ=ON >/dev/null
fi
cmake --build "$BUILD" -j"$(nproc)" --target "${TARGETS[@]}" >/dev/null

export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
out=$BUILD/fuzz
mkdir -p "$out/artifacts"
status=0
for t in "${TARGETS[@]}"; do
  exe=$BUILD/tests/$t
  corpus=$out/corpus_${t#fuzz_}
  mkdir -p "$corpus"
  case $t in
    fuzz_config) seeds=(configs tests/configs/bad tests/configs/bad_compare) ;;
    fuzz_set) seeds=(tests/fuzz/set_seeds) ;;
    *) echo "fuzz: unknown target $t" >&2; exit 2 ;;
  esac
  # Regressions first: each must pass (libFuzzer runs the files given and exits).
  reg=tests/fuzz/regressions/${t#fuzz_}
  if [ -d "$reg" ] && [ -n "$(ls -A "$reg")" ]; then
    if ! "$exe" "$reg"/* >"$out/$t.regressions.log" 2>&1; then
      echo "fuzz: $t: a regression input fails again (log: $out/$t.regressions.log)"
      tail -20 "$out/$t.regressions.log"
      exit 1
    fi
    echo "fuzz: $t: $(ls "$reg" | wc -l) regression inputs pass"
  fi
  log=$out/$t.log
  args=(-max_total_time="$SECONDS_PER_TARGET" -timeout=30 -rss_limit_mb=2048 -max_len=65536
        -dict=tests/fuzz/config.dict -artifact_prefix="$out/artifacts/$t-" -print_final_stats=1)
  [ "$JOBS" -gt 1 ] && args+=(-fork="$JOBS" -ignore_crashes=0)
  echo "fuzz: $t for ${SECONDS_PER_TARGET} s (log: $log)"
  if "$exe" "${args[@]}" "$corpus" "${seeds[@]}" >"$log" 2>&1; then
    runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' | tail -1)
    echo "fuzz: $t: no finding in ${SECONDS_PER_TARGET} s, ${runs:-?} inputs, corpus $(ls "$corpus" | wc -l) files"
  else
    status=1
    echo "fuzz: $t: FINDING (inputs in $out/artifacts/):"
    grep -E "fuzz finding|ERROR: |SUMMARY|Test unit written" "$log" | head -10
  fi
done
exit $status
