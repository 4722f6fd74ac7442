#!/usr/bin/env bash
# Installs the build tree into a fresh prefix and builds + runs tests/consumer against it.
#   run.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1; src=$2
prefix=$(mktemp -d /tmp/fabricsim_install.XXXXXX)
work=$(mktemp -d /tmp/fabricsim_consumer.XXXXXX)
trap 'rm -rf "$prefix" "$work"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in bin/fabricsim share/fabricsim/configs/dgx_h100.yaml share/doc/fabricsim/README.md \
         lib/cmake/fabricsim/fabricsimConfig.cmake include/fabricsim/models/link/port.h; do
  [ -e "$prefix/$f" ] || { echo "install_consumer: $f is not installed"; exit 1; }
done
"$prefix/bin/fabricsim" check "$prefix/share/fabricsim/configs/minimal.yaml"
cmake -S "$src/tests/consumer" -B "$work" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work" -j2 >/dev/null
"$work/consumer" "$prefix/share/fabricsim/configs/minimal.yaml"
echo "install_consumer: installed tree and consumer OK"
