#!/usr/bin/env bash
# Fresh machine to every test: install what is missing, check the formatting, build, run ctest.
# What each stage checks and what it costs: docs/testing.md.
#   ./test.sh              The format check (scripts/check_format.sh, clang-format 14), then
#                          the Release build with every CPU test, the Python module (pip
#                          install . into .venv, pytest tests/python_module), then a Debug
#                          build with AddressSanitizer + UndefinedBehaviorSanitizer running
#                          every test but the long physics scenarios (label `sanitize`), then,
#                          when nvcc is installed, the CUDA build with the GPU tests (label
#                          `gpu`: they report themselves skipped without a GPU) and the CUDA
#                          build's host paths (label `cuda`), then each fuzz target on 15000 inputs
#                          (scripts/fuzz.sh: clang + libFuzzer, skipped when they are not
#                          installed; NBODY_FUZZ_RUNS sets the count). ccache, when
#                          installed, serves every object compiled before with the same flags.
#   NBODY_TEST_QUICK=1 ./test.sh   the format check, Release and the Python module only
#   scripts/quick_test.sh          after a change: rebuild, run the tests of the touched areas
set -euo pipefail
cd "$(dirname "$0")"
jobs=$(nproc)
t_start=$SECONDS
stage_times=()

# Runs a stage and records its wall time for the table at the end.
stage() {
  local name=$1
  shift
  local t0=$SECONDS
  echo "== $name"
  "$@"
  stage_times+=("$(printf '%-34s %4d s' "$name" $((SECONDS - t0)))")
}

build_preset() {
  cmake --preset "$1" >/dev/null
  cmake --build --preset "$1" -j "$jobs"
}
test_preset() { ctest --preset "$1" -j "$jobs"; }

# The Python module (pyproject.toml): pip install . into .venv, then its pytest suite. CPU
# only (CI has no GPU; the CUDA module is the same code, checked on a GPU machine), in a
# kept build folder so that a second run rebuilds only what changed.
python_module() {
  # CC and CXX as the presets find them: scikit-build-core otherwise takes Python's (g++),
  # another compiler name to ccache, and the `nbody` command's objects (pyproject.toml builds
  # it too) would be compiled again instead of coming from the release build's.
  CC=${CC:-cc} CXX=${CXX:-c++} .venv/bin/python -m pip install --quiet --no-build-isolation -C build-dir=build/python-cpu \
    -C cmake.define.NBODY_CUDA=OFF .
  NBODY_EXE=build/release/src/nbody .venv/bin/python -m pytest -q tests/python_module
}

stage "setup: scripts/setup.sh" scripts/setup.sh
if command -v ccache >/dev/null; then ccache --zero-stats >/dev/null; fi
stage "format: scripts/check_format.sh" scripts/check_format.sh
stage "release build" build_preset release
stage "release tests (every CPU test)" test_preset release
stage "python module (pip install ., pytest)" python_module
if [[ "${NBODY_TEST_QUICK:-0}" != 1 ]]; then
  stage "debug build (ASan + UBSan)" build_preset debug
  stage "debug tests (label sanitize)" test_preset debug
  if command -v nvcc >/dev/null; then
    stage "cuda build" build_preset cuda
    stage "cuda tests (labels gpu, cuda)" test_preset cuda
  else
    echo "== cuda: nvcc not found, CUDA build not checked"
  fi
  if scripts/fuzz.sh --available; then
    stage "fuzz (3 targets, ${NBODY_FUZZ_RUNS:-15000} inputs each)" env FUZZ_SEED="${FUZZ_SEED:-1}" \
      FUZZ_RUNS="${NBODY_FUZZ_RUNS:-15000}" scripts/fuzz.sh 300
  else
    echo "== fuzz: clang with libFuzzer not found, fuzz targets not run"
  fi
fi
echo "== done: every stage passed"
printf '%s\n' "${stage_times[@]}"
printf '%-34s %4d s\n' "total" $((SECONDS - t_start))
if command -v ccache >/dev/null; then ccache --show-stats | grep -iE "hits|misses" | head -4 || true; fi
