#!/usr/bin/env bash
# Issue 9 on the GPU machine: the GPU tests, then restart == uninterrupted through the
# command line with --device gpu --deterministic, then the cost of --deterministic.
# Usage (repo root, GPU machine): scripts/device_restart_check.sh [gtest filter]
set -uo pipefail
out=${OUT:-/tmp/nbody-out}
mkdir -p "$out"
scripts/device_check.sh "${1:-*}" || echo "GPU TESTS FAILED"
[[ -x build/cuda/src/nbody ]] || { echo "no nbody binary: the build failed"; exit 1; }
nb=build/cuda/src/nbody
work=$(mktemp -d)
echo "== restart vs uninterrupted, --device gpu --deterministic"
for setup in "direct -n 20000 --precision float" "tree -n 50000" "direct -n 20000 --radius 0.004 --collisions merge"; do
  base=(--model plummer --seed 4 --softening 0.01 --dt 0.002 --device gpu --deterministic -q --stats-every 5 --gravity $setup)
  rm -rf "$work"/*
  $nb run "${base[@]}" --steps 40 --output-dir "$work/whole" -o "$work/whole/final.txt"
  $nb run "${base[@]}" --steps 17 --checkpoint-every 17 --output-dir "$work/parts"
  $nb run "${base[@]}" --steps 40 --output-dir "$work/parts" --restart latest -o "$work/parts/final.txt"
  if cmp -s "$work/whole/final.txt" "$work/parts/final.txt" && cmp -s "$work/whole/energy.csv" "$work/parts/energy.csv"; then
    echo "restart $setup: IDENTICAL"
  else
    echo "restart $setup: DIFFERENT"
  fi
  # and run after run
  $nb run "${base[@]}" --steps 40 --output-dir "$work/again" -o "$work/again/final.txt"
  cmp -s "$work/whole/final.txt" "$work/again/final.txt" && echo "repeat $setup: IDENTICAL" || echo "repeat $setup: DIFFERENT"
done
echo "== cost of --deterministic (direct sum, float, N = 2^20, 10 steps)"
for flag in "" "--deterministic"; do
  $nb run --model plummer -n 1048576 --seed 1 --softening 0.01 --steps 10 --device gpu --precision float $flag --json -q \
    | python3 -c "import json,sys; j=json.load(sys.stdin); print(f'direct float 2^20 {\"$flag\" or \"default\":>16}: {j[\"timings\"][\"gravity\"]/j[\"steps\"]*1e3:.1f} ms/step gravity, {j[\"steps_per_second\"]:.2f} steps/s')" 2>&1 || true
done
rm -rf "$work"
