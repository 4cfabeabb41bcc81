#!/usr/bin/env bash
# Old and new builds side by side on the GPU machine, in one call: builds this tree (the
# cuda preset) and an older one (a source copy in $1, e.g. from `git archive`), runs the
# GPU tests of the new build, checks that both give the same bits on the same runs
# (CPU and GPU, every integrator, direct and tree, collisions), and times the GPU
# benchmarks of both, alternating (the GPU instances of the backend suite run too), printing a short table last.
#   scripts/device_compare.sh OLD_SOURCE_DIR [gtest filter]
set -uo pipefail
old_src=$1
tests=${2:-*}
out=${OUT:-/tmp/nbody-out}
mkdir -p "$out"
source "$(dirname "$0")/device_build_old_new.sh"  # sets $new and $old

./build/cuda/tests/nbody_gpu_tests --gtest_filter="$tests" >"$out/gpu_tests.log" 2>&1
test_status=$?
grep -E "FAILED|tests ran|PASSED" "$out/gpu_tests.log" | tail -30
./build/cuda/tests/nbody_backend_tests --gtest_filter='*/gpu' >"$out/backend_gpu_tests.log" 2>&1 || test_status=1
echo "== nbody_backend_tests, GPU instances"
grep -E "^\[ measured \]|FAILED|tests ran|PASSED" "$out/backend_gpu_tests.log" | tail -40

# The same bits: each run's final state (17 significant digits) and its energies.
same=0 differ=0
tmp=$(mktemp -d)
compare() {  # name, run options...
  local name=$1; shift
  "$old" run "$@" -o "$tmp/old.txt" --json >"$tmp/old.json" 2>/dev/null
  "$new" run "$@" -o "$tmp/new.txt" --json >"$tmp/new.json" 2>/dev/null
  if cmp -s "$tmp/old.txt" "$tmp/new.txt" && [[ -s $tmp/new.txt ]]; then
    same=$((same + 1)); echo "same bits   $name"
    return
  fi
  # A run whose old build differs from itself (floating-point atomics) proves nothing.
  "$old" run "$@" -o "$tmp/old2.txt" >/dev/null 2>&1
  if ! cmp -s "$tmp/old.txt" "$tmp/old2.txt"; then
    echo "varies      $name (the old build differs from itself run to run)"
  else
    differ=$((differ + 1)); echo "DIFFERENT   $name"
  fi
}
common=(--model plummer -n 20000 --seed 3 --softening 0.01 --dt 0.001 --steps 20)
for device in cpu "gpu --deterministic"; do
  for integ in leapfrog euler kinematic; do
    compare "$device direct $integ" "${common[@]}" --device $device --integrator $integ
  done
  compare "$device direct leapfrog damping 0.95" "${common[@]}" --device $device --damping 0.95
  compare "$device tree float" "${common[@]}" --device $device --gravity tree
  compare "$device tree quadrupole 2D" "${common[@]}" --device $device --gravity tree --quadrupole --dim 2
  compare "$device bounce" --model uniform-cube -n 5000 --seed 2 --radius 0.02 --velocity 0.5 --steps 30 \
    --softening 0.01 --collisions bounce --restitution 0.8 --collision-iterations 4 --device $device
  compare "$device merge" --model uniform-cube -n 5000 --seed 2 --radius 0.02 --velocity 0.5 --steps 30 \
    --softening 0.01 --collisions merge --device $device
done
compare "gpu direct float 1M" --model plummer -n 1048576 --seed 1 --softening 0.01 --steps 3 --device gpu --precision float

# The benchmarks, old then new then old then new.
bench() {  # label, binary
  local label=$1 bin=$2
  echo "== $label"
  "$bin" bench direct --device gpu -n 1048576 2>&1 | tail -4
  "$bin" bench tree --device gpu 2>&1 | tail -6
  "$bin" bench collisions --device gpu -n 1048576 2>&1 | tail -4
}
{ bench old "$old"; bench new "$new"; bench old "$old"; bench new "$new"; } | tee "$out/bench.log"
echo "bit-for-bit runs: $same same, $differ different; GPU tests exit $test_status"
[[ $test_status == 0 && $differ == 0 ]]
