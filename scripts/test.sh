#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to a tested build: installs what is missing,
# builds in Release with warnings as errors and runs the whole suite (unit, model, system
# tests and the bad-config corpus), each test in its own process; then builds the unit
# tests with AddressSanitizer + UndefinedBehaviorSanitizer and runs them. Exits non-zero
# on any failure.
#   LABEL=unit|model|system   run one label only (Release stage)
#   SANITIZE=0                skip the sanitizer stage
#   SANITIZE=all              run unit and model tests under the sanitizers (slower)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh -DFABRICSIM_WERROR=ON
args=(--output-on-failure -j"$(nproc)" --timeout 900)
[ -n "${LABEL:-}" ] && args+=(-L "$LABEL")
(cd "${BUILD_DIR:-build}" && ctest "${args[@]}")

case "${SANITIZE:-unit}" in
  0) exit 0 ;;
  all) targets=(unit_tests model_tests); labels="unit|model" ;;
  *) targets=(unit_tests); labels="unit" ;;
esac
echo "== sanitizer stage (ASan + UBSan): ${targets[*]}"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DFABRICSIM_SANITIZE=ON \
      -DFABRICSIM_WERROR=ON >/dev/null
cmake --build build-asan -j"$(nproc)" --target "${targets[@]}"
# The 1-to-33-rank schedule sweeps run up to 12 ranks here (the same code paths; the
# Release stage above runs all 33): under the sanitizers their 13-33 rank cases alone cost
# ~13 CPU-minutes. The TPU v4 pod tests build the whole 4,096-chip pod (8,240 devices,
# 39,936 links): over a minute each in a sanitizer build; the Release stage runs them.
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
   ctest --output-on-failure -j"$(nproc)" --timeout 900 -L "$labels" \
         -E 'Ranks1To33/.*/n(1[3-9]|2[0-9]|3[0-3])( |$)|^TpuPod\.(V4Pod|CircuitsWireTheSlice)')
