#!/usr/bin/env bash
# Issue 11 on a multi-GPU machine (nvidia-h200-x2 / -x4): build with MPI + NCCL, check that
# P ranks give one process's result, then the scaling benchmark. Usage (repo root):
#   scripts/device_mpi_check.sh [bench args...]
set -uo pipefail
out=${OUT:-/tmp/nbody-out}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
gpus=$(nvidia-smi -L | wc -l)
t0=$(date +%s)
cmake --preset cuda -DCMAKE_CUDA_ARCHITECTURES=90 -DNBODY_BUILD_TESTS=OFF -DNBODY_BUILD_BENCHMARKS=OFF >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
grep -E "nbody: (MPI|NCCL|CUDA)" "$out/configure.log"
cmake --build build/cuda -j"$(nproc)" --target nbody >"$out/build.log" 2>&1 || { grep -E "error" -A3 "$out/build.log" | head -40; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s, $gpus GPUs"
nb=build/cuda/src/nbody
$nb --version | grep -E "GPU|mpi"
mpi=(mpirun --bind-to none -x NCCL_NVLS_ENABLE -x OMPI_ALLOW_RUN_AS_ROOT -x OMPI_ALLOW_RUN_AS_ROOT_CONFIRM)
work=$(mktemp -d)
echo "== P ranks vs one process (--device gpu, float)"
for setup in "tree -n 300000 --theta 0.5" "direct -n 100000" "direct -n 100000 --deterministic"; do
  args=(run --model plummer --seed 5 --softening 0.01 --dt 0.001 --steps 10 --device gpu --precision float -q --gravity $setup)
  $nb "${args[@]}" -o "$work/one.txt"
  for p in 2 $gpus; do
    "${mpi[@]}" -np $p $nb "${args[@]}" -o "$work/p$p.txt" || echo "mpirun -np $p FAILED"
    python3 - "$work/one.txt" "$work/p$p.txt" "$setup" "$p" <<'PY'
import sys, numpy as np
a, b = np.loadtxt(sys.argv[1]), np.loadtxt(sys.argv[2])
same = open(sys.argv[1], 'rb').read() == open(sys.argv[2], 'rb').read()
d = np.abs(a[:, :3] - b[:, :3]).max() / np.abs(a[:, :3]).max()
print(f"{sys.argv[3]:<36} P = {sys.argv[4]}: {'IDENTICAL' if same else 'differs'}, max position difference / extent {d:.2e}")
PY
  done
done
echo "== bench scaling-mpi (--device gpu, float, theta 0.5)"
"${mpi[@]}" -np $gpus $nb bench scaling-mpi --device gpu --seconds 1 "$@" 2>&1 | grep -v "^\[" | tee "$out/scaling.txt"
rm -rf "$work"
