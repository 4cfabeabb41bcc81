#!/usr/bin/env bash
# Installs what nbody needs to build and test, from Debian packages, when it is missing.
# Safe to run again: it installs nothing that is already there.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config  # build
  libcli11-dev libfmt-dev nlohmann-json3-dev  # command line, formatting, JSON
  libgtest-dev libgmock-dev libbenchmark-dev  # tests and benchmarks
  python3  # command-line tests
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# A python3 from elsewhere on PATH (pyenv, conda) is as good as Debian's.
if command -v python3 >/dev/null; then
  missing=("${missing[@]/python3}")
fi
missing=($(printf '%s\n' "${missing[@]}" | grep -v '^$' || true))

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all build dependencies present"
fi
