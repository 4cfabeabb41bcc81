#!/usr/bin/env bash
# Fresh machine to a running simulation: install what is missing, build Release, and
# collide two Plummer clusters (4096 bodies) with a live progress line and a summary.
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release
mkdir -p runs
nbody=build/release/src/nbody
"$nbody" gen two-clusters -n 4096 --seed 1 --separation 6 --impact 1 -o runs/two_clusters.txt
"$nbody" run -i runs/two_clusters.txt --t-end 8 --dt 0.005 --softening 0.02 --every 400 -o runs/two_clusters_final.txt
