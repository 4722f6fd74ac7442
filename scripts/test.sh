#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to a tested build: installs what is missing,
# builds in Release with warnings as errors and runs the whole suite (unit, model, system
# tests and the bad-config corpus), each test in its own process; then builds with clang,
# AddressSanitizer + UndefinedBehaviorSanitizer, runs the unit, model and a set of system
# tests under them, and fuzzes the config loader. Exits non-zero on any failure.
#   LABEL=unit|model|system   run one label only (Release stage)
#   SANITIZE=0                skip the sanitizer stage and the fuzzers
#   FUZZ_SECONDS=N            fuzz each target for N s (default 30)
#   SAN_BUILD_DIR=DIR         the sanitizer build's directory (default build-san)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh -DFABRICSIM_WERROR=ON
args=(--output-on-failure -j"$(nproc)" --timeout 900)
[ -n "${LABEL:-}" ] && args+=(-L "$LABEL")
(cd "${BUILD_DIR:-build}" && ctest "${args[@]}")

[ "${SANITIZE:-1}" = 0 ] && exit 0

# The sanitizer stage: clang with AddressSanitizer + UndefinedBehaviorSanitizer and libFuzzer's
# coverage (docs/reliability.md, "The sanitizer stage"). One build serves the tests and the
# fuzzers: the unit and model tests, the system tests below (the fabricsim binary under the
# sanitizers, on the whole bad-input corpus, faults, replay, Ethernet loss recovery, functional
# runs), then the config loader and --set parser fuzzed for FUZZ_SECONDS each.
san=${SAN_BUILD_DIR:-build-san}
echo "== sanitizer stage (clang, ASan + UBSan) in $san"
if [ ! -f "$san/CMakeCache.txt" ]; then
  CC=clang CXX=clang++ cmake -S . -B "$san" -DCMAKE_BUILD_TYPE=Debug -DFABRICSIM_SANITIZE=ON \
        -DFABRICSIM_FUZZ=ON -DFABRICSIM_WERROR=ON >/dev/null
fi
cmake --build "$san" -j"$(nproc)" --target unit_tests model_tests system_tests fabricsim \
      fuzz_config fuzz_set
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# The 1-to-33-rank schedule sweeps run up to 12 ranks here (the same code paths; the
# Release stage above runs all 33): under the sanitizers their 13-33 rank cases alone cost
# ~13 CPU-minutes. The TPU v4 pod tests build the whole 4,096-chip pod (8,240 devices,
# 39,936 links): over a minute each in a sanitizer build; the Release stage runs them.
# CostClasses.SameCostsAndPicksAsEveryRankOnTheShippedConfigs costs every candidate of
# every shipped config twice (26 s in Release, near its 300 s limit under the sanitizers on
# a loaded machine); the other CostClasses tests run the same code here.
(cd "$san" && ctest --output-on-failure -j"$(nproc)" --timeout 900 -L 'unit|model' \
         -E 'Ranks1To33/.*/n(1[3-9]|2[0-9]|3[0-3])( |$)|^TpuPod\.(V4Pod|CircuitsWireTheSlice)|^CostClasses\.SameCostsAndPicksAsEveryRankOnTheShippedConfigs$')
# System tests from every family whose code handles loss, faults, hostile input or exact
# data: the fabricsim binary under the sanitizers on the whole bad-input corpus, faults and
# their recovery, link-level replay, Ethernet drops and retransmission, functional runs of
# every collective. Left to the Release stage: the timing-sensitive signal and wall-limit
# tests, and the longer runs of these families (over ~8 s each here, 10-30x Release).
system='^(bad_configs|Faults\.|Compare\.|Cli\.|LinkRetrySystem\.|UALinkReplaySystem\.'
system+='|EthernetIncast\.|EthernetSwitchRuns\.|EthernetDeterminism\.|Formats/ProtocolWire\.'
system+='|Ranks/Functional\.|Training\.MoeSkew|Library/EveryCollective\.)'
slow='^(Faults\.(NoSparePathStopsNamingTheCut|LostCapacityExplainsTheExtraTime)'
slow+='|Compare\.TableMatchesIndividualRuns|UALinkReplaySystem\.Pod8.*'
slow+='|EthernetIncast\.(NoCcOnALossySwitch.*|NsccKeepsLineRate.*|Nscc128To1)'
slow+='|Library/EveryCollective\.ExactOnTheFabricFor2To9Ranks/all_reduce_(ring|halving_doubling))$'
(cd "$san" && ctest --output-on-failure -j"$(nproc)" --timeout 900 -L system -R "$system" \
         -E "$slow")
BUILD_DIR=$san scripts/fuzz.sh "${FUZZ_SECONDS:-30}"
