#!/usr/bin/env bash
# Installs the Debian 12 packages tilefuse builds with, then the PyPI packages of the
# Python package (install-python-deps.sh); does nothing when all are present.
set -euo pipefail
here="$(dirname "${BASH_SOURCE[0]}")"
packages=(cmake ninja-build g++ llvm-19-dev libboost1.81-dev doctest-dev libzstd-dev zlib1g-dev libcli11-dev libdlpack-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all Debian dependencies present"
else
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
bash "$here/install-python-deps.sh"
