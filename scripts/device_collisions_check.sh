#!/usr/bin/env bash
# Issue 21 on the GPU machine, in one call: builds this tree (cuda preset) and an older one
# (a source copy in $1, e.g. from `git archive`), runs the GPU tests, compares the CPU and
# the GPU on collisions under gravity (a bouncing and a merging pair, a merging cloud), and
# times `nbody bench collisions --device gpu` at 1,048,576 bodies, old and new alternating.
#   scripts/device_collisions_check.sh OLD_SOURCE_DIR
set -uo pipefail
old_src=$1
out=${OUT:-/tmp/nbody-out}
mkdir -p "$out"
source "$(dirname "$0")/device_build_old_new.sh"  # sets $new and $old
status=0
./build/cuda/tests/nbody_gpu_tests >"$out/gpu_tests.log" 2>&1 || status=1
echo "== nbody_gpu_tests"
grep -E "FAILED|tests ran|PASSED" "$out/gpu_tests.log" | tail -20
./build/cuda/tests/nbody_backend_tests --gtest_filter='*/gpu' >"$out/backend_gpu_tests.log" 2>&1 || status=1
echo "== nbody_backend_tests, GPU instances"
grep -E "measured \] (gpu (elastic|merging|inelastic)|.*block steps: GPU)|FAILED|tests ran|PASSED" "$out/backend_gpu_tests.log" | tail -30

echo "== CPU and GPU on the same runs (G = 1)"
printf -- '-0.3333333333333333 0 0 0 0 0 1 0.1\n0.6666666666666666 0.05 0 0 0 0 0.5 0.07\n' >"$out/pair.txt"
row() {  # label, args...
  local label=$1; shift
  for device in cpu gpu; do
    "$new" run "$@" --device $device --json -q | python3 -c "
import json, sys
j = json.load(sys.stdin); c = j.get('collisions', {})
print(f\"$label $device: |dE/E| {j['energy_drift']:.3e}  |d(E + lost)/E| {c.get('energy_balance', 0):.3e}  contacts {c.get('contacts')} merges {c.get('merges')}\")"
  done
}
for dt in 0.001 0.0005; do
  row "bounce pair dt $dt" -i "$out/pair.txt" --collisions bounce --t-end 10 --dt $dt
  row "merge pair dt $dt" -i "$out/pair.txt" --collisions merge --t-end 3 --dt $dt
done
"$new" gen uniform-sphere -n 2000 --seed 1 --radius 0.02 --size 1 -o "$out/cloud.txt" >/dev/null
for step in "0.01 5e-4" "0.005 1.25e-4"; do
  set -- $step
  row "bounce pair, block steps dt $1 eta $2" -i "$out/pair.txt" --collisions bounce --t-end 10 \
    --dt $1 --timestep adaptive --eta $2
done
row "merging cloud 2000 dt 0.0005" -i "$out/cloud.txt" --collisions merge --t-end 1.5 --dt 0.0005
row "merging cloud 2000 adaptive" -i "$out/cloud.txt" --collisions merge --t-end 1.5 --dt 0.004 --timestep adaptive --softening 0.001

echo "== bench collisions --device gpu -n 1048576 (old, new, old, new)"
for bin in "$old" "$new" "$old" "$new"; do
  echo "-- $bin"
  "$bin" bench collisions --device gpu -n 1048576 2>&1 | tail -3
done
exit $status
