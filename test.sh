#!/usr/bin/env bash
# Fresh machine to every test: install what is missing, check the formatting, build, run ctest.
#   ./test.sh              The format check (scripts/check_format.sh, clang-format 14), then
#                          the Release build (all tests), the Python module (pip install . into
#                          .venv, pytest tests/python_module), then a Debug build with
#                          AddressSanitizer + UndefinedBehaviorSanitizer (all tests again),
#                          then, when nvcc is installed, the CUDA build (its GPU tests run
#                          on a machine with a GPU and report themselves skipped elsewhere)
#   NBODY_TEST_QUICK=1 ./test.sh   the format check, Release and the Python module only
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

# The Python module (pyproject.toml): pip install . into .venv, then its pytest suite. CPU
# only (CI has no GPU; the CUDA module is the same code, checked on a GPU machine), in a
# kept build folder so that a second run rebuilds only what changed.
run_python_module() {
  echo "== python module: pip install . (CPU) into .venv, pytest tests/python_module"
  .venv/bin/python -m pip install --quiet --no-build-isolation -C build-dir=build/python-cpu \
    -C cmake.define.NBODY_CUDA=OFF .
  NBODY_EXE=build/release/src/nbody .venv/bin/python -m pytest -q tests/python_module
}

echo "== format: scripts/check_format.sh"
scripts/check_format.sh
run_preset release
run_python_module
if [[ "${NBODY_TEST_QUICK:-0}" != 1 ]]; then
  run_preset debug
  if command -v nvcc >/dev/null; then
    run_preset cuda
  else
    echo "== cuda: nvcc not found, CUDA build not checked"
  fi
fi
