#!/usr/bin/env bash
# The Sun and the four giant planets (Hairer, Lubich & Wanner's outer solar system, epoch
# 5 September 1994; examples/data/outer_solar_system.txt) with IAS15 in AU, days and solar
# masses (G = 2.95912208286e-4). 10^6 days (2738 years, 16 orbits of Neptune) take a fraction
# of a second with |dE/E| ~ 1e-15; --dt 10 days is only the first step's guess (IAS15 then
# takes ~120-day steps). A shorter run (2x10^5 days) writes snapshots every 40 days for the
# plot runs/outer_solar_system.png (heliocentric: the file's centre of mass drifts).
set -euo pipefail
# $NBODY, else the release build, else the demo's build (./demo.sh), else nbody on PATH.
nbody=${NBODY:-}
for candidate in "$(dirname "$0")/../build/release/src/nbody" "$(dirname "$0")/../build/app/src/nbody"; do
  if [[ -z $nbody && -x $candidate ]]; then nbody=$candidate; fi
done
nbody=${nbody:-$(command -v nbody || echo nbody)}
data=$(dirname "$0")/data/outer_solar_system.txt
G=2.95912208286e-4
mkdir -p runs
rm -rf runs/outer_solar_system

stats() {
  python3 -c 'import json, sys
d = json.load(sys.stdin)
print("  |dE/E| = %.2e, %d steps (%.0f to %.0f days), %d rejected, %.2f s stepping" % (
      d["energy_drift"], d["steps"], d["dt_min"], d["dt_max"], d.get("rejected_steps", 0),
      d["wall_seconds"]))'
}

for rule in global prs23; do
  echo "IAS15 ($rule step rule), 10^6 days:"
  "$nbody" run -i "$data" --G "$G" --integrator ias15 --ias15-adaptive "$rule" --dt 10 \
    --t-end 1e6 --quiet --json | stats
done

echo "IAS15, 2x10^5 days with snapshots every 40 days and energy.csv every 10 steps:"
"$nbody" run -i "$data" --G "$G" --integrator ias15 --dt 10 --t-end 2e5 --snapshot-dt 40 \
  --stats-every 10 --output-dir runs/outer_solar_system --quiet --json | stats

py=${PYTHON:-$(dirname "$0")/../.venv/bin/python}
[[ -x $py ]] || py=python3
if "$py" -c 'import numpy, h5py, matplotlib' 2>/dev/null; then
  "$py" "$(dirname "$0")"/../python/nbody_orbit_plot.py runs/outer_solar_system \
    -o runs/outer_solar_system.png --center 1 --labels "Sun,Jupiter,Saturn,Uranus,Neptune" \
    --title "Outer solar system, IAS15, 2e5 days (AU, heliocentric)"
else
  echo "no numpy/h5py/matplotlib in $py: plot skipped (pip install numpy h5py matplotlib)"
fi
