#!/usr/bin/env bash
# The GPU targets of issue #18 (energies at the solver's cost), after scripts/device_check.sh
# has built build/cuda. Usage (on the GPU machine, from the repo root):
#   scripts/device_energy_targets.sh [N_LARGE]
# 1. Plummer N = 1,048,576, float tree theta 0.5, eps 0.05, 20 steps, --energy auto (=
#    solver): the share of "diagnostics" in the run's time;
# 2. the same over 200 steps with --energy solver and --energy exact: the two drifts (the
#    trajectory is the same bits, only the energy estimate differs);
# 3. with N_LARGE (e.g. 134217728): 10 steps, start to end, generation included.
set -euo pipefail
nb=./build/cuda/src/nbody
out=${OUT:-/tmp/nbody-out}
mkdir -p "$out"
run() { "$nb" run --device gpu --gravity tree --model plummer --softening 0.05 --theta 0.5 -q --json "$@"; }
run -n 1048576 --steps 20 >"$out/energy_1m_20.json"
run -n 1048576 --steps 200 --energy solver >"$out/energy_1m_200_solver.json"
run -n 1048576 --steps 200 --energy exact >"$out/energy_1m_200_exact.json"
if [[ $# -ge 1 ]]; then
  start=$(date +%s%N)
  run -n "$1" --steps 10 >"$out/energy_large.json"
  echo "large run: $(( ($(date +%s%N) - start) / 1000000 )) ms start to end (process start to exit, generation included)"
fi
python3 - "$out" <<'PY'
import json, sys, pathlib
out = pathlib.Path(sys.argv[1])
print(f"{'run':<28} {'n':>10} {'steps':>6} {'method':>7} {'total s':>9} {'diag s':>8} {'diag %':>7} {'ms/step':>8} {'|dE/E|':>10}")
for name in ["energy_1m_20", "energy_1m_200_solver", "energy_1m_200_exact", "energy_large"]:
    p = out / f"{name}.json"
    if not p.exists():
        continue
    j = json.loads(p.read_text())
    t = j["timings"]
    step_ms = 1e3 * (t["gravity"] + t.get("integrate", 0)) / max(j["steps"], 1)
    print(f"{name:<28} {j['n']:>10} {j['steps']:>6} {j['energy_method']:>7} {t['total']:>9.3f} "
          f"{t['diagnostics']:>8.3f} {100 * t['diagnostics'] / t['total']:>6.2f}% {step_ms:>8.2f} "
          f"{j['energy_drift']:>10.3e}")
PY
