#!/usr/bin/env bash
# The Pythagorean three-body problem (Burrau 1913; Szebehely & Peters 1967): masses 3, 4, 5
# at rest. A string of close encounters ends with the bodies of mass 4 and 5 leaving as a
# tight binary and mass 3 escaping. IAS15 (docs/ias15.md) picks steps from ~1e-7 to ~0.1 and
# keeps |dE/E| near 1e-11 to t = 70; the fixed-step leapfrog at dt = 1e-4 (700000 steps)
# gains energy at the encounters (|dE/E| ~ 1e3) and ends with 4 and 5 flying apart.
# Writes runs/pythagorean/ (snapshots every 0.01, energy.csv) and runs/pythagorean.png.
set -euo pipefail
# $NBODY, else the release build, else the demo's build (./demo.sh), else nbody on PATH.
nbody=${NBODY:-}
for candidate in "$(dirname "$0")/../build/release/src/nbody" "$(dirname "$0")/../build/app/src/nbody"; do
  if [[ -z $nbody && -x $candidate ]]; then nbody=$candidate; fi
done
nbody=${nbody:-$(command -v nbody || echo nbody)}
data=$(dirname "$0")/data/pythagorean.txt
mkdir -p runs
rm -rf runs/pythagorean

# stats: the JSON keys this example prints, from `nbody run --json` on stdin
stats() {
  python3 -c 'import json, sys
d = json.load(sys.stdin)
print("  |dE/E| = %.2e, %d steps, %d rejected, %.2f s stepping" % (d["energy_drift"], d["steps"],
      d.get("rejected_steps", 0), d["wall_seconds"]))'
}
# outcome FILE: the final state's verdict (binary of the bodies of mass 4 and 5, mass 3 gone);
# fails when it is not that
outcome() {
  python3 - "$1" <<'PY'
import math, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip() and not l.startswith("#")]
(x3, v3, m3), (x4, v4, m4), (x5, v5, m5) = [(r[0:3], r[3:6], r[6]) for r in rows]
r45 = math.dist(x4, x5)
v45 = math.dist(v4, v5)
e45 = 0.5 * m4 * m5 / (m4 + m5) * v45**2 - m4 * m5 / r45  # G = 1
com = [(m4 * a + m5 * b) / (m4 + m5) for a, b in zip(x4, x5)]
vcom = [(m4 * a + m5 * b) / (m4 + m5) for a, b in zip(v4, v5)]
r3 = math.dist(x3, com)
mu = m3 * (m4 + m5) / (m3 + m4 + m5)
e3 = 0.5 * mu * math.dist(v3, vcom) ** 2 - m3 * (m4 + m5) / r3
ok = e45 < 0 and r45 < 2 and e3 > 0 and r3 > 10
print(f"  4-5 separation {r45:.3f}, pair energy {e45:+.3f}; 3 at {r3:.1f} from the pair, "
      f"energy {e3:+.3f} -> {'binary 4-5 formed, 3 escapes' if ok else 'NOT the known outcome'}")
sys.exit(0 if ok else 1)
PY
}

echo "IAS15, default epsilon 1e-9, to t = 70:"
"$nbody" run -i "$data" --integrator ias15 --dt 0.01 --t-end 70 --quiet --json \
  -o runs/pythagorean_ias15.txt | stats
outcome runs/pythagorean_ias15.txt || { echo "IAS15 did not reproduce the known outcome" >&2; exit 1; }

echo "the same with snapshots every 0.01 (for the plot) and energy.csv every 10 steps:"
"$nbody" run -i "$data" --integrator ias15 --dt 0.01 --t-end 70 --snapshot-dt 0.01 \
  --stats-every 10 --output-dir runs/pythagorean --quiet --json | stats

echo "leapfrog, fixed dt = 1e-4, to t = 70:"
"$nbody" run -i "$data" --integrator leapfrog --dt 1e-4 --t-end 70 --quiet --json \
  -o runs/pythagorean_leapfrog.txt | stats
outcome runs/pythagorean_leapfrog.txt || true  # expected to fail

# The plot needs numpy, h5py and matplotlib: $PYTHON, else the repository's .venv, else python3.
py=${PYTHON:-$(dirname "$0")/../.venv/bin/python}
[[ -x $py ]] || py=python3
if "$py" -c 'import numpy, h5py, matplotlib' 2>/dev/null; then
  "$py" "$(dirname "$0")"/../python/nbody_orbit_plot.py runs/pythagorean -o runs/pythagorean.png \
    --labels "m = 3,m = 4,m = 5" --title "Pythagorean three-body problem, IAS15 (epsilon = 1e-9)"
else
  echo "no numpy/h5py/matplotlib in $py: plot skipped (pip install numpy h5py matplotlib)"
fi
