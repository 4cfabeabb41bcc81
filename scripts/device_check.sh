#!/usr/bin/env bash
# What one call of the GPU machine runs: build the cuda preset, run the GPU tests (the
# GPU-only suite nbody_gpu_tests and the GPU instances of the backend suite
# nbody_backend_tests), run the GPU benchmarks, print a short table last. Usage (on the GPU
# machine, from the repo root):
#   scripts/device_check.sh [gtest filter]
# The filter applies to both binaries (the backend suite's GPU instances are those named
# */gpu: the filter is intersected with that). Needs .gtest/ (Debian's GoogleTest sources)
# when the machine has no GoogleTest.
set -euo pipefail
tests=${1:-*}
out=${OUT:-/tmp/nbody-out}
mkdir -p "$out"
t0=$(date +%s)
cmake --preset cuda -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build build/cuda -j16 --target nbody nbody_gpu_tests nbody_backend_tests >"$out/build.log" 2>&1 || { grep -E "error|Error" -A3 "$out/build.log" | head -60; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,power.limit --format=csv,noheader
# The whole logs go to $OUT; the summaries (and every failure) are printed.
status=0
./build/cuda/tests/nbody_gpu_tests --gtest_filter="$tests" >"$out/gpu_tests.log" 2>&1 || status=$?
echo "== nbody_gpu_tests"
grep -E "^\[ measured \]|FAILED|SKIPPED|tests ran|PASSED" "$out/gpu_tests.log" | tail -60
# gtest filters: positive patterns, then '-' and negative ones; keep the caller's and
# require the GPU instance.
case $tests in
  *-*) backend_filter="${tests%%-*}"; negative="-${tests#*-}" ;;
  *) backend_filter=$tests; negative= ;;
esac
backend_filter="$(echo "${backend_filter:-*}" | sed 's#:#/gpu:#g; s#$#/gpu#; s#/gpu/gpu#/gpu#g')$negative"
./build/cuda/tests/nbody_backend_tests --gtest_filter="$backend_filter" >"$out/backend_gpu_tests.log" 2>&1 || status=$?
echo "== nbody_backend_tests --gtest_filter=$backend_filter"
grep -E "^\[ measured \]|FAILED|SKIPPED|tests ran|PASSED" "$out/backend_gpu_tests.log" | tail -60
exit $status
