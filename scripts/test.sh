#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to a tested build: installs what is missing,
# builds in Release with warnings as errors, and runs the whole suite (unit, model,
# system tests and the bad-config corpus), each test in its own process. Exits non-zero
# on any failure. LABEL=unit (or model, system) runs one label only.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh -DFABRICSIM_WERROR=ON
cd "${BUILD_DIR:-build}"
args=(--output-on-failure -j"$(nproc)" --timeout 900)
[ -n "${LABEL:-}" ] && args+=(-L "$LABEL")
ctest "${args[@]}"
