#!/usr/bin/env bash
# Two Plummer spheres (20000 bodies) collide; the Barnes-Hut tree makes this take seconds
# per unit time on two cores. Snapshots every 100 steps in runs/collision_<step>.csv.
set -euo pipefail
nbody=${NBODY:-$(dirname "$0")/../build/release/src/nbody}
mkdir -p runs
"$nbody" run --model two-clusters -n 20000 --separation 6 --impact 1 --gravity tree --theta 0.6 \
  --softening 0.02 --dt 0.005 --t-end 6 --every 100 -o runs/collision.csv
