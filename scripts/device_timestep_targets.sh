#!/usr/bin/env bash
# The GPU target of issue #19 (hierarchical time steps), after scripts/device_check.sh has
# built build/cuda. Usage (on the GPU machine, from the repo root):
#   scripts/device_timestep_targets.sh [N] [MODEL]
# MODEL (default hernquist; nfw is the other cusp) with N bodies (default 1,048,576), eps
# 0.01, float tree theta 0.5, to t = 1, exact float64 energies (on the GPU): adaptive steps
# (dt = 1/8, several eta, both --timestep-criterion) and fixed steps over a ladder of dt,
# the smallest populated bin's step among them. Prints one row per run: the
# energy error, the force evaluations per body, the deepest bin, the wall time of the steps.
set -euo pipefail
nb=./build/cuda/src/nbody
out=${OUT:-/tmp/nbody-out}
n=${1:-1048576}
model=${2:-hernquist}
out="$out/$model"
mkdir -p "$out"
run() {
  local name=$1; shift
  "$nb" run --device gpu --gravity tree --model "$model" -n "$n" --seed 1 --softening 0.01 --theta 0.5 \
    --t-end 1 --energy exact -q --json "$@" >"$out/ts_$name.json"
}
for eta in 0.05 0.025 0.0125; do run "adaptive_eta$eta" --timestep adaptive --dt 0.125 --eta "$eta"; done
for eta in 0.2 0.1 0.05 0.025; do
  run "dynamical_eta$eta" --timestep adaptive --timestep-criterion dynamical --dt 0.125 --eta "$eta"
done
for k in 3 4 5 6 7 8; do run "fixed_dt2m$k" --dt "$(python3 -c "print(2**-$k)")"; done
python3 - "$out" <<'PY'
import json, sys, pathlib
out = pathlib.Path(sys.argv[1])
print(f"{'run':<24} {'|dE/E|':>10} {'evals/body':>11} {'deepest':>8} {'steps s':>9} {'gravity s':>10} {'wall s':>8}")
for p in sorted(out.glob("ts_*.json")):
    j = json.loads(p.read_text())
    t = j["timestep"]
    steps = j["timings"].get("gravity", 0) + j["timings"].get("integrate", 0)
    deepest = len(t["bins"]) - 1 if t["bins"] else "-"
    print(f"{p.stem[3:]:<24} {abs(j['energy_drift']):>10.3e} {t['force_evaluations_per_body']:>11.2f} "
          f"{deepest!s:>8} {steps:>9.3f} {j['timings'].get('gravity', 0):>10.3f} {j.get('wall_seconds', 0):>8.3f}")
PY
