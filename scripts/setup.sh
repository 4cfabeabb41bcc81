#!/usr/bin/env bash
# Installs what nbody needs to build and test, from Debian packages, when it is missing.
# Safe to run again: it installs nothing that is already there.
#   scripts/setup.sh            everything: tests, benchmarks, optional features, .venv
#   scripts/setup.sh --minimal  only what the `nbody` command needs to build (the app
#                               preset, ./demo.sh): 6 packages, no .venv
#   scripts/setup.sh --features the minimal set and the optional features of the command:
#                               HDF5 snapshots and checkpoints, --config files, pictures
#                               and movies (nbody render), the viewer (nbody view); no test
#                               tools, no .venv (the README's examples)
set -euo pipefail

minimal=0
features=0
case "${1:-}" in
  --minimal) minimal=1 ;;
  --features) minimal=1 features=1 ;;
  "") ;;
  *)
    echo "usage: scripts/setup.sh [--minimal | --features]" >&2
    exit 2
    ;;
esac

# The REQUIRED finds of CMakeLists.txt; every other library is optional in the build.
minimal_packages=(cmake ninja-build g++ libcli11-dev libfmt-dev nlohmann-json3-dev)
# The optional libraries a user of the command sees (a subset of the full list below).
feature_packages=(pkg-config libhdf5-dev libtomlplusplus-dev libstb-dev ffmpeg libglfw3-dev libimgui-dev
  libgl-dev)
packages=(
  cmake ninja-build g++ pkg-config  # build
  ccache  # compiler cache shared by the presets and re-runs (cmake/NbodyCompilerCache.cmake)
  libcli11-dev libfmt-dev nlohmann-json3-dev  # command line, formatting, JSON
  libgtest-dev libgmock-dev libbenchmark-dev  # tests and benchmarks
  python3 python3-venv  # command-line tests; the project's virtual environment (.venv)
  libhdf5-dev  # snapshots and checkpoints (HDF5, GADGET/SWIFT layout)
  libtomlplusplus-dev  # nbody run --config run.toml
  libopenmpi-dev openmpi-bin  # several processes: mpirun -np P nbody run (optional in the build)
  libstb-dev ffmpeg  # nbody render: PNG writer, MP4 encoding
  libglfw3-dev libimgui-dev libgl-dev  # nbody view (optional in the build)
  xvfb xauth libgl1-mesa-dri  # viewer tests without a display (Mesa's software OpenGL)
  clang libclang-rt-dev  # fuzz targets (scripts/fuzz.sh): clang, libFuzzer and clang's sanitizers
)

if ((features)); then
  packages=("${minimal_packages[@]}" "${feature_packages[@]}")
elif ((minimal)); then
  packages=("${minimal_packages[@]}")
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# A python3 from elsewhere on PATH (pyenv, conda) is as good as Debian's.
if command -v python3 >/dev/null; then
  missing=("${missing[@]/python3}")
  python3 -c "import venv, ensurepip" >/dev/null 2>&1 && missing=("${missing[@]/python3-venv}")
fi
missing=($(printf '%s\n' "${missing[@]}" | grep -v '^$' || true))

# clang-format for scripts/check_format.sh, pinned to major version 14 (Debian bookworm's
# clang-format): its output changes between versions, and the check must give the same
# answer on every machine. Elsewhere, clang-format-14 by name when apt has it.
if ((!minimal)) && ! command -v clang-format-14 >/dev/null &&
  ! { command -v clang-format >/dev/null && clang-format --version | grep -q ' version 14\.'; }; then
  codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}" || true)
  if [[ $codename != bookworm ]] && apt-cache show clang-format-14 >/dev/null 2>&1; then
    missing+=(clang-format-14)
  else
    missing+=(clang-format)
  fi
fi

# matplotlib draws the plots of `nbody bench` (python/nbody_bench_report.py); without it the
# benchmarks still write their CSV, JSON and report. Debian's python3 (or none yet, so apt
# installs Debian's) gets the Debian package: pip refuses to write into it (PEP 668).
# Any other python3 first on PATH (pyenv, conda, a venv) gets it from pip.
pip_matplotlib=0
if ((!minimal)) && ! python3 -c "import matplotlib" >/dev/null 2>&1; then
  python=$(command -v python3 || true)
  if [[ -z $python || $python == /usr/bin/python3 || $python == /bin/python3 ]]; then
    missing+=(python3-matplotlib)
  else
    pip_matplotlib=1
  fi
fi

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all $( ((features)) && echo "feature " || { ((minimal)) && echo "minimal "; } )build dependencies present"
fi

if ((minimal)); then exit 0; fi

if ((pip_matplotlib)); then
  echo "setup: installing matplotlib for $(command -v python3) with pip"
  PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet matplotlib ||
    echo "setup: could not install matplotlib; nbody bench will skip its plots" >&2
fi

# The project's Python tools live in .venv (ignored by git), from PyPI: yt and pynbody
# load our HDF5 snapshots in the tests, h5py writes GADGET-style files for them, numpy and
# matplotlib serve the bench reports. The tests use .venv/bin/python when it exists.
venv="$(cd "$(dirname "$0")/.." && pwd)/.venv"
py_packages=(numpy h5py yt pynbody matplotlib pytest nanobind scikit-build-core)  # the last two build `import nbody`
if [[ ! -x $venv/bin/python ]] || ! $venv/bin/python -c "import numpy, h5py, yt, pynbody, matplotlib, pytest, nanobind, scikit_build_core" >/dev/null 2>&1; then
  echo "setup: creating $venv with ${py_packages[*]} (PyPI)"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  "$venv/bin/python" -m pip install --quiet "${py_packages[@]}"
else
  echo "setup: $venv has the Python tools"
fi

# REBOUND (PyPI), an independent N-body code: the IAS15 tests cross-check final states
# against its IAS15, and bench/ias15_vs_rebound.py measures both. Optional: without it
# those tests say they were skipped.
if ! "$venv/bin/python" -c "import rebound" >/dev/null 2>&1; then
  echo "setup: installing rebound into $venv (PyPI; optional)"
  "$venv/bin/python" -m pip install --quiet rebound ||
    echo "setup: could not install rebound; the REBOUND cross-checks will be skipped" >&2
fi
