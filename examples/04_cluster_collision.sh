#!/usr/bin/env bash
# Two Plummer spheres (20000 bodies) collide; the Barnes-Hut tree makes this take seconds
# per unit time on two cores. Snapshots every 100 steps in runs/collision_<step>.csv.
set -euo pipefail
# $NBODY, else the release build, else the demo's build (./demo.sh), else nbody on PATH.
nbody=${NBODY:-}
for candidate in "$(dirname "$0")/../build/release/src/nbody" "$(dirname "$0")/../build/app/src/nbody"; do
  if [[ -z $nbody && -x $candidate ]]; then nbody=$candidate; fi
done
nbody=${nbody:-$(command -v nbody || echo nbody)}
mkdir -p runs
"$nbody" run --model two-clusters -n 20000 --separation 6 --impact 1 --gravity tree --theta 0.6 \
  --softening 0.02 --dt 0.005 --t-end 6 --every 100 -o runs/collision.csv
