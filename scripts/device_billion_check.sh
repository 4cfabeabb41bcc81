#!/usr/bin/env bash
# Issue 36's largest run on a machine with 2 GPUs (nvidia-h200-x2; an 80 GB H100 holds about
# half), and issue 39's on 4 (RANKS=4 BIG_N=2147483648 on nvidia-h200-x4): N bodies (BIG_N,
# default 2^30) on RANKS GPU ranks (default 2), in one call, each stage timed:
#   1. 2 steps with float snapshots at the start and the end (issue 36: a float snapshot of
#      2^30 bodies in <= 30 s), written by the ranks together; the snapshots are then removed
#      (2 x 38.7 GB at 2^30);
#   2. 2 steps and a checkpoint (88 B a body: 94 GB at 2^30);
#   3. a restart from it on the same ranks for 2 more steps, against 4 uninterrupted steps (4.): the
#      same N, energy and momentum within the tree's error (GPU ranks cut anew on a restart;
#      a second checkpoint to compare the states would not fit the disk at 2^30).
# SNAPSHOTS=0 leaves stage 1 out; SNAPSHOTS=only runs stage 1 alone (its timings, no checkpoint). The work folder (BIG_DIR, default /tmp/big) needs ~100 GB
# at 2^30 (~190 GB at 2^31). A dry run on the CPU:
#   DEVICE=cpu BIG_N=20000 scripts/device_billion_check.sh
# Needs a built build/cuda/src/nbody (NBODY sets another; STAGES=build of
# scripts/device_domain_check.sh builds it).
set -uo pipefail
out=${OUT:-/tmp/nbody-out}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export NBODY_IO_TRACE=1  # each file's parts per rank, in the logs (docs/snapshots.md)
nb=${NBODY:-build/cuda/src/nbody}
n=${BIG_N:-1073741824}
w=${BIG_DIR:-/tmp/big}
np=${RANKS:-2}
mpi=(mpirun --bind-to none --oversubscribe -x NCCL_NVLS_ENABLE -x OMPI_ALLOW_RUN_AS_ROOT -x OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
  -x NBODY_IO_TRACE)
common=(--model plummer -n "$n" --seed 1 --softening 0.001 --dt 1e-5 --device "${DEVICE:-gpu}"
  --gravity tree --energy solver --json)
t0=$(date +%s)
stamp() { echo "$1: rc $2, $(($(date +%s) - t0)) s since the start; disk $(df -h "$w" | tail -1 | awk '{print $4}') free"; }
rm -rf "$w" && mkdir -p "$w/snap" "$w/parts" "$w/whole"

if [ "${SNAPSHOTS:-1}" != 0 ]; then
  "${mpi[@]}" -np $np $nb run "${common[@]}" --steps 2 --snapshot-every 2 --snapshot-precision float \
    --output-dir "$w/snap" >"$out/big_snap.json" 2>"$out/big_snap.log"
  stamp "1. 2 steps and 2 float snapshots" $?
  ls -l --time-style=+%T "$w/snap"
  rm -rf "$w/snap"
  if [ "${SNAPSHOTS:-1}" = only ]; then
    grep "io trace" "$out/big_snap.log"
    rm -rf "$w"
    exit 0
  fi
fi

"${mpi[@]}" -np $np $nb run "${common[@]}" --steps 2 --checkpoint-every 2 --output-dir "$w/parts" \
  >"$out/big_first.json" 2>"$out/big_first.log"
stamp "2. 2 steps and a checkpoint" $?
ls -l --time-style=+%T "$w/parts"

"${mpi[@]}" -np $np $nb run "${common[@]}" --restart latest --steps 4 --output-dir "$w/parts" \
  >"$out/big_restart.json" 2>"$out/big_restart.log"
stamp "3. restart and 2 more steps" $?
rm -rf "$w/parts"

"${mpi[@]}" -np $np $nb run "${common[@]}" --steps 4 --output-dir "$w/whole" \
  >"$out/big_whole.json" 2>"$out/big_whole.log"
stamp "4. 4 uninterrupted steps" $?
for f in "$out"/big_*.log; do grep "io trace" "$f"; tail -n 3 "$f"; done

python3 - "$out" "$w" <<'PY'
import json, sys
out, w = sys.argv[1], sys.argv[2]
for name in ("snap", "first", "restart", "whole"):
    try:
        d = json.load(open(f"{out}/big_{name}.json"))
    except Exception as e:
        print(f"{name}: no JSON ({e})"); continue
    t = d.get("timings", {})
    print(f"{name}: N {d['n']}, step {d['step']}, {d['wall_seconds']:.2f} s stepping "
          f"({d['steps_per_second']:.3f} steps/s), io {t.get('io', 0):.1f} s, E {d['energy_end']:.10f}")
runs = {}
for name in ("restart", "whole"):
    try:
        runs[name] = json.load(open(f"{out}/big_{name}.json"))
    except Exception:
        print("the runs to compare did not finish"); sys.exit(1)
r, u = runs["restart"], runs["whole"]
assert r["step"] == u["step"] == 4 and r["n"] == u["n"], "steps or N differ"
de = abs(r["energy_end"] - u["energy_end"]) / abs(u["energy_end"])
dp = max(abs(x - y) for x, y in zip(r["momentum"], u["momentum"]))
print(f"restarted against uninterrupted, step 4: N {r['n']} both, |dE/E| {de:.2e}, |dp| {dp:.2e}")
# The solver's energy (the tree's potentials) differs between runs by ~3e-5 at 2^30 (measured:
# the cuts, from timings, differ); bodies read into the wrong rows move it by O(1), lost or
# doubled ones show in N and the ids' check. Positions are compared at 2^20 and 2^27 by
# scripts/device_ranks_restart_check.sh (a second checkpoint of 2^30 would not fit the disk).
bound = max(r.get("energy_drift_error", 1e-4), u.get("energy_drift_error", 1e-4))
assert de < bound, f"the restarted run strays from the uninterrupted one (bound {bound:.1e})"
print("billion check: passed")
PY
rc=$?
rm -rf "$w"
exit $rc
