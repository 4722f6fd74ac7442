#!/usr/bin/env bash
# Installs the Debian 12 packages fabricsim builds with (only what is missing).
set -euo pipefail
pkgs=(build-essential cmake pkg-config libsystemc-dev libyaml-cpp-dev nlohmann-json3-dev
      libgtest-dev googletest)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
