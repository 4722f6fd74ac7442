#!/usr/bin/env bash
# Installs the Debian 12 packages fabricsim builds with (only what is missing).
set -euo pipefail
pkgs=(build-essential cmake pkg-config libsystemc-dev libyaml-cpp-dev nlohmann-json3-dev
      libgtest-dev googletest
      libprotobuf-dev protobuf-compiler       # Chakra traces (workload type chakra)
      openmpi-bin libopenmpi-dev              # mpirun fabricsim sweep
      clang libclang-rt-14-dev                # the fuzzers (libFuzzer) and the sanitizer stage
      chromium chromium-driver python3)       # the report's browser test
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm fetches the report's charting library; any npm will do (a machine may have Node.js
# from elsewhere, whose npm is not Debian's package).
command -v npm >/dev/null || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

# The report's charting library, vendored from npm at build time (pinned by the lock file).
if [ ! -f third_party/echarts/node_modules/echarts/dist/echarts.min.js ]; then
  echo "setup: installing the report's charting library (npm ci in third_party/echarts)"
  (cd "$(dirname "$0")/../third_party/echarts" && npm ci --no-audit --no-fund --ignore-scripts --silent)
fi
