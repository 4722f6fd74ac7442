#!/usr/bin/env bash
# Configures and builds fabricsim in build/ (Release by default; BUILD_TYPE=Debug etc.).
# Extra CMake options can be passed as arguments, e.g. -DFABRICSIM_SANITIZE=ON.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" "$@" >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)"
