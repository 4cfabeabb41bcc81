#!/usr/bin/env bash
# The figure-eight three-body orbit: after one period T = 6.32591398 the bodies are back
# where they started (to ~2e-6 at dt = T/10^4).
set -euo pipefail
# $NBODY, else the release build, else the demo's build (./demo.sh), else nbody on PATH.
nbody=${NBODY:-}
for candidate in "$(dirname "$0")/../build/release/src/nbody" "$(dirname "$0")/../build/app/src/nbody"; do
  if [[ -z $nbody && -x $candidate ]]; then nbody=$candidate; fi
done
nbody=${nbody:-$(command -v nbody || echo nbody)}
mkdir -p runs
"$nbody" gen figure-eight -o runs/eight_start.txt --quiet
"$nbody" run -i runs/eight_start.txt --t-end 6.32591398 --dt 6.32591398e-4 -o runs/eight_end.txt --quiet
python3 - <<'PY'
import math
rows = lambda p: [list(map(float, l.split()))[:3] for l in open(p) if not l.startswith("#")]
err = max(math.dist(a, b) for a, b in zip(rows("runs/eight_start.txt"), rows("runs/eight_end.txt")))
print(f"largest distance from the start after one period: {err:.2e}")
PY
