#!/usr/bin/env bash
# Issue 35 on a machine with 2 GPUs (nvidia-h100-x2 / nvidia-h200-x2) in one call: builds the
# cuda preset, runs the GPU tests (TESTS: a ctest -R regex; all GPU tests by default), checks
# that GPU ranks own their bodies and compute the one-process tree's forces (2 ranks against
# one process and the direct sum, N = ACC_N, from HDF5 snapshots with accelerations), then
# `nbody bench scaling-mpi --device gpu` (GRAVITY: direct, tree or both). A short table last.
#   scripts/device_domain_check.sh            STAGES="build tests accuracy bench" by default
set -uo pipefail
out=${OUT:-/tmp/nbody-out}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
stages=${STAGES:-build tests accuracy bench}
t0=$(date +%s)
since() { echo "$(($(date +%s) - t0)) s"; }
has() { [[ " $stages " == *" $1 "* ]]; }
cmake --preset cuda >"$out/configure.log" 2>&1 &&
  cmake --build --preset cuda -j"$(nproc)" --target nbody nbody_gpu_tests >"$out/build.log" 2>&1 ||
  { grep -E "error" -A3 "$out/build.log" | head -60; tail -20 "$out/configure.log"; exit 1; }
grep -E "nbody: (MPI|NCCL)" "$out/configure.log"
echo "build: $(since); $(nvidia-smi -L | wc -l) GPUs ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)), $(nproc) cores"
nb=build/cuda/src/nbody
mpi=(mpirun --bind-to none -x NCCL_NVLS_ENABLE -x OMPI_ALLOW_RUN_AS_ROOT -x OMPI_ALLOW_RUN_AS_ROOT_CONFIRM)
gpu_rc=-
if has tests; then
  echo "== GPU tests ${TESTS:-(all)}"
  timeout "${TESTS_TIMEOUT:-330}" ctest --preset cuda -L gpu ${TESTS:+-R "$TESTS"} -j2 --timeout 300 \
    >"$out/ctest.log" 2>&1
  gpu_rc=$?
  grep -E "tests passed|tests failed|\*\*\*Failed|Exception|measured" "$out/ctest.log" | head -40
  if [ -n "${TESTS:-}" ]; then build/cuda/tests/nbody_gpu_tests --gtest_filter="${TESTS}*" 2>&1 |
    grep -E "measured|FAILED|OK \]|Failure|Expected|Which is|actual" | head -60; fi
  echo "gpu tests: rc $gpu_rc, $(since)"
fi
acc="-"
if has accuracy; then
  echo "== forces: 2 GPU ranks against one GPU and the direct sum"
  work=$(mktemp -d)
  args=(run --model plummer --seed 5 --softening 0.01 --dt 1e-5 --steps 1 --device gpu -q
    -n "${ACC_N:-1048576}" --snapshot-every 1 --snapshot-fields acceleration --precision float)
  $nb "${args[@]}" --gravity tree --output-dir "$work/one" >"$out/acc_one.log" 2>&1 &&
    "${mpi[@]}" -np 2 $nb "${args[@]}" --gravity tree --output-dir "$work/two" --json >"$work/two.json" 2>"$out/acc_two.log" &&
    $nb "${args[@]}" --gravity direct --output-dir "$work/direct" >"$out/acc_direct.log" 2>&1
  echo "runs: rc $?, $(since)"; grep -o '"solver": *"[^"]*"' "$work/two.json"
  acc=$(python3 - "$work" <<'PY'
import sys, glob, numpy as np, h5py
w = sys.argv[1]
def load(d):
    f = sorted(glob.glob(f"{w}/{d}/*.hdf5") + glob.glob(f"{w}/{d}/*.h5"))[-1]
    with h5py.File(f) as h:
        g = h["PartType1"]; ids = g["ParticleIDs"][:]; a = g["Accelerations"][:]
    return a[np.argsort(ids)], np.sort(ids)
one, i1 = load("one"); two, i2 = load("two"); ex, i3 = load("direct")
assert (i1 == i2).all() and (i1 == i3).all() and len(np.unique(i2)) == len(i2), "ids differ"
n = lambda v: np.linalg.norm(v, axis=1)
err1 = n(one - ex) / n(ex); err2 = n(two - ex) / n(ex); diff = n(two - one) / n(one)
print(f"tree error median {np.median(err1):.3e} (2 ranks {np.median(err2):.3e}), p99 "
      f"{np.quantile(err1, .99):.3e} ({np.quantile(err2, .99):.3e}); median 2 ranks - 1 = "
      f"{100 * np.median(diff) / np.median(err1):.1f} % of the tree's median error")
PY
)
  echo "$acc"
  rm -rf "$work"
fi
if has bench; then
  echo "== bench scaling-mpi --device gpu, 2 ranks"
  timeout "${BENCH_TIMEOUT:-360}" "${mpi[@]}" -np 2 $nb bench scaling-mpi --device gpu \
    --gravity "${GRAVITY:-both}" ${BENCH_N:+-n "$BENCH_N"} --seconds "${SECONDS_PER:-1.5}" --timings \
    --json >"$out/scaling_gpu.json" 2>"$out/scaling_gpu.err"
  echo "gpu scaling: rc $?, $(since)"
  grep -vE '^\s|^\[|^\]|^\{|^\}' "$out/scaling_gpu.json" | head -40
  tail -5 "$out/scaling_gpu.err"
fi
echo
echo "================ summary ================"
printf '%-34s %s\n' "GPU tests (rc)" "$gpu_rc" "forces, 2 ranks" "$acc"
[ -f "$out/scaling_gpu.json" ] && python3 - "$out/scaling_gpu.json" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
rows = json.loads(text[text.index("\n[") + 1:])
print(f"{'solver':<7} {'scaling':<7} {'P':>3} {'N':>9} {'ms/step':>10} {'eff':>6} {'balance':>8} {'MB/step':>8} {'B/body':>7} {'GB/rank':>8}")
for r in rows:
    print(f"{r['algorithm']:<7} {r['scaling']:<7} {r['ranks']:>3} {r['n']:>9} {r['ms_per_step']:>10.2f} "
          f"{100 * r['efficiency']:>5.1f}% {r['load_balance']:>8.2f} {1e-6 * r['bytes_per_step']:>8.2f} "
          f"{r['gpu_bytes_per_body']:>7.0f} {1e-9 * r['gpu_bytes_per_rank']:>8.2f}")
PY
echo "total: $(since)"
