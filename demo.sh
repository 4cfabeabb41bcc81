#!/usr/bin/env bash
# Fresh machine to a running simulation: install what is missing, build Release, and
# collide two Plummer clusters (4096 bodies) with a live progress line and a summary.
# Only what the demo needs: the 6 packages of the build (scripts/setup.sh --minimal) and the
# nbody command (the app preset: no tests, no benchmarks); docs/install.md gives the time.
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh --minimal
cmake --preset app >/dev/null
cmake --build --preset app
mkdir -p runs
nbody=build/app/src/nbody
"$nbody" gen two-clusters -n 4096 --seed 1 --separation 6 --impact 1 -o runs/two_clusters.txt
"$nbody" run -i runs/two_clusters.txt --t-end 8 --dt 0.005 --softening 0.02 --every 400 -o runs/two_clusters_final.txt
