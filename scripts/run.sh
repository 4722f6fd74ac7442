#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to a result: installs what is missing,
# builds in Release and runs a ready example (default configs/dgx_h100.yaml), printing
# the nccl-tests style table. Extra arguments go to `fabricsim run`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
config=${1:-configs/dgx_h100.yaml}
[ $# -gt 0 ] && shift
exec build/fabricsim run "$config" --out out/"$(basename "$config" .yaml)" "$@"
