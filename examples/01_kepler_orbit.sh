#!/usr/bin/env bash
# A Kepler orbit (e = 0.5, period 2π) for 100 periods at dt = P/1000 with each integrator.
# Leapfrog keeps |dE/E| near 1e-4 (bounded), semi-implicit Euler near 1e-2 (bounded),
# the kinematic update drifts.
set -euo pipefail
# $NBODY, else the release build, else the demo's build (./demo.sh), else nbody on PATH.
nbody=${NBODY:-}
for candidate in "$(dirname "$0")/../build/release/src/nbody" "$(dirname "$0")/../build/app/src/nbody"; do
  if [[ -z $nbody && -x $candidate ]]; then nbody=$candidate; fi
done
nbody=${nbody:-$(command -v nbody || echo nbody)}
for integrator in leapfrog euler kinematic; do
  drift=$("$nbody" run --model kepler --e 0.5 --t-end 628.3185307179586 --dt 0.006283185307179587 \
            --integrator "$integrator" --quiet --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["energy_drift"])')
  printf '%-10s |dE/E| after 100 orbits = %s\n' "$integrator" "$drift"
done
