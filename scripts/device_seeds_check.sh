#!/usr/bin/env bash
# Issue 34 on the GPU machine in one call (device time is scarce): builds the cuda preset,
# runs the GPU tests of what the issue touched (the insertion build, the input-order walk, the
# GPU tree, the tree collision search and the collision engine), compute-sanitizer racecheck
# and memcheck on an insertion build, the randomized insertion builds against Morton's of
# GpuTreeInsertion.DeviceSweep (BUILDS, default 1000, each batch under a timeout), then
# `nbody bench seeds --device all` (and its seeds-collisions part) into $OUT/seeds.
# A short table last.
#   scripts/device_seeds_check.sh
set -uo pipefail
out=${OUT:-/tmp/nbody-out}
mkdir -p "$out"
builds=${BUILDS:-1000}
batch=${BATCH:-250}
t0=$(date +%s)
since() { echo "$(($(date +%s) - t0)) s"; }
cmake --preset cuda >"$out/configure.log" 2>&1 &&
  cmake --build --preset cuda -j16 --target nbody nbody_gpu_tests >"$out/build.log" 2>&1 ||
  { grep -E "error" -A3 "$out/build.log" | head -40; exit 1; }
echo "build: $(since)"
nvidia-smi --query-gpu=name --format=csv,noheader
tests=./build/cuda/tests/nbody_gpu_tests
nbody=./build/cuda/src/nbody

echo "== GPU tests (insertion, input-order walk, GPU tree, collisions)"
filter='GpuTreeInsertion.*:GpuTreeContactSearch.*:GpuCollisions.*:*GpuTree.*:*GpuOpeningCriteria.*'
filter+=':GpuActiveForces.*:GpuBlockSteps.*:GpuDeterministic.*:GpuTreeOptions.*:*TreePotentials.*'
timeout 150 "$tests" --gtest_filter="$filter" >"$out/gpu_tests.log" 2>&1
tests_rc=$?
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|tests ran" "$out/gpu_tests.log" | tail -15
echo "tests: $(since)"

echo "== compute-sanitizer on an insertion build (N = 5000 Plummer)"
sanitizer=""
for tool in racecheck memcheck; do
  timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 "$tests" \
    --gtest_filter='GpuTreeInsertion.StagesAreNamedAsTheSeeds' >"$out/sanitizer_$tool.log" 2>&1
  rc=$?
  summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$out/sanitizer_$tool.log" | tr '\n' ' ')
  echo "$tool: rc $rc; $summary"
  sanitizer+="$tool rc $rc ${summary:-no summary}; "
done
echo "sanitizer: $(since)"

echo "== $builds randomized insertion builds against Morton, $batch per process"
run_builds=0 hangs=0 mismatches=0 failures=0
for ((first = 0; first < builds; first += batch)); do
  # the last batches hold the largest N (up to 10^7: seconds a build on the host's side)
  NBODY_INSERTION_SWEEP="$first,$batch,$builds" timeout $((first + batch > 3 * builds / 4 ? 400 : 60)) "$tests" \
    --gtest_filter='GpuTreeInsertion.DeviceSweep' >"$out/sweep_$first.log" 2>&1
  rc=$?
  line=$(grep -E "^\[ sweep \]" "$out/sweep_$first.log" | tail -1)
  if [[ $rc -eq 124 || $rc -eq 137 ]]; then
    hangs=$((hangs + 1))
    echo "builds $first..: TIMEOUT; the last builds it finished:"
    grep -E "^\[ build \]" "$out/sweep_$first.log" | tail -3
  elif [[ -z $line ]]; then
    failures=$((failures + 1))
    echo "builds $first..: no result (rc $rc)"
    grep -vE "^\[ (RUN|  OK) " "$out/sweep_$first.log" | tail -12
  else
    run_builds=$((run_builds + $(awk '{print $5}' <<<"$line")))
    mismatches=$((mismatches + $(awk '{print $7}' <<<"$line")))
  fi
  grep -E "mismatch \]" "$out/sweep_$first.log" | head -5
done
echo "sweep: $(since)"

echo "== nbody bench seeds --device all"
timeout 150 "$nbody" bench seeds --device all -o "$out/seeds" >"$out/seeds.txt" 2>&1
seeds_rc=$?
echo "seeds: rc $seeds_rc, $(since)"

echo
echo "================ summary ================"
printf '%-30s %s\n' "GPU tests (rc)" "$tests_rc"
printf '%-30s %s\n' "sanitizer" "$sanitizer"
printf '%-30s %s\n' "randomized builds run" "$run_builds"
printf '%-30s %s\n' "batches timed out (hangs)" "$hangs"
printf '%-30s %s\n' "batches without a result" "$failures"
printf '%-30s %s\n' "mismatches with Morton" "$mismatches"
printf '%-30s %s\n' "bench seeds (rc)" "$seeds_rc"
# seed 000 table 3.2 and the 1M rows: ms per stage
awk -F, 'NR > 1 && ($5 == 150000 || $5 == 1000000) && $2 == "gpu" {
  printf "%-26s n %-8s %-14s %9.3f ms\n", $1, $5, $6, $7 }' "$out/seeds/seeds.csv" 2>/dev/null
awk -F, 'NR > 1 && $1 == "n" && ($5 == 100000 || $5 == 1000000) {
  printf "collisions %-10s n %-8s detect %8.3f ms, step %8.3f ms\n", $2, $5, $8, $10 }' \
  "$out/seeds/seeds-collisions.csv" 2>/dev/null
echo "total: $(since)"
