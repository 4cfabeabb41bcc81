#!/usr/bin/env bash
# Barnes-Hut accuracy on a Plummer sphere (N = 20000, no softening): median and p99 relative
# force error against a float64 direct sum, for several opening angles.
set -euo pipefail
# $NBODY, else the release build, else the demo's build (./demo.sh), else nbody on PATH.
nbody=${NBODY:-}
for candidate in "$(dirname "$0")/../build/release/src/nbody" "$(dirname "$0")/../build/app/src/nbody"; do
  if [[ -z $nbody && -x $candidate ]]; then nbody=$candidate; fi
done
nbody=${nbody:-$(command -v nbody || echo nbody)}
printf '%-6s %-12s %-24s %-24s\n' theta moments median p99
for theta in 0.3 0.5 0.7 1.0; do
  for q in "" --quadrupole; do
    "$nbody" accuracy --model plummer -n 20000 --theta "$theta" $q --json 2>/dev/null |
      python3 -c "import json,sys; d=json.load(sys.stdin); print(f\"{d['theta']:<6} {'quadrupole' if '$q' else 'monopole':<12} {d['median']:<24.3e} {d['p99']:<24.3e}\")"
  done
done
