#!/usr/bin/env bash
# Fresh machine to every test: install what is missing, build, run ctest.
#   ./test.sh              Release build (all tests), then a Debug build with
#                          AddressSanitizer + UndefinedBehaviorSanitizer (all tests again),
#                          then, when nvcc is installed, the CUDA build (its GPU tests run
#                          on a machine with a GPU and report themselves skipped elsewhere)
#   NBODY_TEST_QUICK=1 ./test.sh   Release only
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
jobs=$(nproc)

run_preset() {
  local preset=$1
  echo "== $preset build"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$jobs"
  echo "== $preset tests"
  ctest --preset "$preset" -j "$jobs"
}

run_preset release
if [[ "${NBODY_TEST_QUICK:-0}" != 1 ]]; then
  run_preset debug
  if command -v nvcc >/dev/null; then
    run_preset cuda
  else
    echo "== cuda: nvcc not found, CUDA build not checked"
  fi
fi
