#!/usr/bin/env bash
# Issue 36's adaptive-step target on a machine with 2 GPUs (nvidia-h200-x2): N bodies (BIG_N,
# default 134,217,728) with hierarchical time steps on one GPU and on 2 GPU ranks that own their
# bodies, in one call; the strong-scaling efficiency of the steps' time (gravity + integrate),
# printed last. Needs a built build/cuda/src/nbody (NBODY sets another).
#   scripts/device_adaptive_scaling.sh
# A dry run on CPU ranks: DEVICE=cpu BIG_N=20000 scripts/device_adaptive_scaling.sh
set -uo pipefail
out=${OUT:-/tmp/nbody-out}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nb=${NBODY:-build/cuda/src/nbody}
mpi=(mpirun --bind-to none --oversubscribe -x NCCL_NVLS_ENABLE -x OMPI_ALLOW_RUN_AS_ROOT
  -x OMPI_ALLOW_RUN_AS_ROOT_CONFIRM)
args=(--model plummer -n "${BIG_N:-134217728}" --seed 1 --softening 0.001 --device "${DEVICE:-gpu}"
  --gravity tree --timestep adaptive --dt 0.015625 --eta 0.025 --steps "${STEPS:-5}" --json --timings)
for np in 1 2; do
  "${mpi[@]}" -np $np "$nb" run "${args[@]}" >"$out/adaptive_$np.json" 2>"$out/adaptive_$np.log"
  echo "$np rank(s): rc $?"
  grep -E "^(walk|foreign|wait|describe|sort|build|force|integrate) |GPU memory" "$out/adaptive_$np.log"
done
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
seconds = {}
for np in (1, 2):
    j = json.load(open(f"{out}/adaptive_{np}.json"))
    t, ts = j["timings"], j["timestep"]
    seconds[np] = t.get("gravity", 0) + t.get("integrate", 0)
    print(f"{np} rank(s): steps {seconds[np]:.3f} s, substeps {ts['substeps']}, "
          f"{ts['force_evaluations_per_body']:.2f} force evaluations a body, bins {ts['bins']}")
print(f"adaptive steps, strong scaling on 2 ranks: {100 * seconds[1] / (2 * seconds[2]):.1f} % "
      "(issue 36's target: 85 %)")
PY
