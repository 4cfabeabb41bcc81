#!/usr/bin/env bash
# Issue 34, items 1 (GPU) and 2, on the GPU machine in one call: builds the cuda preset
# (nbody, nbody_gpu_tests), runs the insertion build's GPU tests, compute-sanitizer
# (racecheck, synccheck, memcheck) on a small insertion build, >= 1000 randomized insertion
# builds against the Morton build's (uniform, Plummer, coincident, nearly coincident, two far
# clusters; N from 1 to 10^7, log scale, most small) in batches each under a timeout (a hang
# is counted, not waited on), then nbody bench tree --device gpu at 1M Plummer: morton and
# insertion, walk in tree and in input order (ms per stage). A short table last.
#   scripts/device_insertion_check.sh            (from the repo root; about 6 minutes)
# BUILDS (default 1000) and BATCH (50) change the sweep.
set -uo pipefail
out=${OUT:-/tmp/nbody-out}
mkdir -p "$out"
builds=${BUILDS:-1000}
batch=${BATCH:-50}
t0=$(date +%s)
cmake --preset cuda >"$out/configure.log" 2>&1 &&
  cmake --build --preset cuda -j16 --target nbody nbody_gpu_tests >"$out/build.log" 2>&1 ||
  { grep -E "error" -A3 "$out/build.log" | head -40; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
tests=./build/cuda/tests/nbody_gpu_tests
nbody=./build/cuda/src/nbody

echo "== GPU tests of the insertion build and the input-order walk"
timeout 300 "$tests" --gtest_filter='GpuTreeInsertion.*' >"$out/insertion_tests.log" 2>&1
tests_rc=$?
grep -E "measured|FAILED|OK \]|tests ran|PASSED" "$out/insertion_tests.log" | tail -20

echo "== compute-sanitizer on an insertion build (N = 5000 Plummer)"
sanitizer_errors=0
for tool in racecheck synccheck memcheck; do
  timeout 300 compute-sanitizer --tool $tool --error-exitcode 9 \
    "$tests" --gtest_filter='GpuTreeInsertion.StagesAreNamedAsTheSeeds' >"$out/sanitizer_$tool.log" 2>&1
  rc=$?
  errors=$(grep -oE "ERROR SUMMARY: [0-9]+" "$out/sanitizer_$tool.log" | awk '{s+=$3} END{print s+0}')
  [[ $rc -ne 0 && $errors -eq 0 ]] && errors="rc $rc"
  echo "$tool: $errors errors (log sanitizer_$tool.log)"
  [[ $errors != 0 ]] && sanitizer_errors=$((sanitizer_errors + 1))
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$out/sanitizer_$tool.log" | head -3
done

echo "== $builds randomized builds, $batch per process, each process under a timeout"
run_builds=0 hangs=0 mismatches=0 failures=0
for ((first = 0; first < builds; first += batch)); do
  NBODY_INSERTION_SWEEP="$first,$batch,$builds" timeout 120 "$tests" \
    --gtest_filter='GpuTreeInsertion.DeviceSweep' >"$out/sweep_$first.log" 2>&1
  rc=$?
  line=$(grep -E "^\[ sweep \]" "$out/sweep_$first.log" | tail -1)
  if [[ $rc -eq 124 || $rc -eq 137 ]]; then
    hangs=$((hangs + 1))
    echo "builds $first..: HANG (timeout)"
  elif [[ -z $line ]]; then
    failures=$((failures + 1))
    echo "builds $first..: no result (rc $rc)"; tail -5 "$out/sweep_$first.log"
  else
    run_builds=$((run_builds + $(awk '{print $5}' <<<"$line")))
    mismatches=$((mismatches + $(awk '{print $7}' <<<"$line")))
  fi
  grep -E "mismatch \]" "$out/sweep_$first.log" | head -5
done
echo "sweep: $(( $(date +%s) - t0 )) s since start"

echo "== nbody bench tree --device gpu, 1M Plummer, float, geometric theta 0.5"
declare -A step
for build in morton insertion; do
  for order in tree input; do
    timeout 120 "$nbody" bench tree --device gpu -n 1048576 --precision float --mac geometric \
      --seconds 2 --tree-build $build --walk-order $order >"$out/bench_${build}_$order.txt" 2>&1
    echo "-- $build, walk in $order order"
    sed -n '/^  stage/,/integrate+/p' "$out/bench_${build}_$order.txt"
    step[$build,$order]=$(tail -1 "$out/bench_${build}_$order.txt" | awk '{print $2}')
  done
done

echo
echo "================ summary ================"
printf '%-34s %s\n' "insertion tests (rc)" "$tests_rc"
printf '%-34s %s\n' "builds run" "$run_builds"
printf '%-34s %s\n' "hangs (batches timed out)" "$hangs"
printf '%-34s %s\n' "batches without a result" "$failures"
printf '%-34s %s\n' "mismatches with Morton" "$mismatches"
printf '%-34s %s\n' "sanitizer tools with errors" "$sanitizer_errors"
for build in morton insertion; do
  for order in tree input; do
    printf '%-34s %s ms/step\n' "bench 1M $build, $order order" "${step[$build,$order]:-?}"
  done
done
echo "total: $(( $(date +%s) - t0 )) s"
