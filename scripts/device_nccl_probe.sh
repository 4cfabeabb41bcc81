#!/usr/bin/env bash
# Issue 11 on a multi-GPU machine: NCCL's bandwidth between this host's GPUs
# (bench/cuda/nccl_bandwidth.cu) and the transports NCCL chose, then the tree's scaling
# with per-stage timings of rank 0 and the slowest rank. Usage (repo root):
#   scripts/device_nccl_probe.sh [bench args...]
set -uo pipefail
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-/tmp/nbody-out}
mkdir -p "$out"
gpus=$(nvidia-smi -L | wc -l)
nvidia-smi topo -m | head -8
t0=$(date +%s)
# The probe is bench/cuda/nccl_bandwidth.cu, a CMake target when CUDA, MPI and NCCL are found.
{ cmake --preset cuda -DCMAKE_CUDA_ARCHITECTURES=90 -DNBODY_BUILD_BENCHMARKS=ON >"$out/configure.log" 2>&1 &&
  cmake --build build/cuda -j"$(nproc)" --target nbody nccl_bandwidth >"$out/build.log" 2>&1; } ||
  { tail -30 "$out/configure.log" "$out/build.log"; exit 1; }
probe=build/cuda/bench/nccl_bandwidth
echo "build: $(( $(date +%s) - t0 )) s, $gpus GPUs"
mpi=(mpirun --bind-to none -x NCCL_NVLS_ENABLE -x OMPI_ALLOW_RUN_AS_ROOT -x OMPI_ALLOW_RUN_AS_ROOT_CONFIRM)
echo "== NCCL transports (rank 0)"
NCCL_DEBUG=INFO "${mpi[@]}" -x NCCL_DEBUG -np "$gpus" "$probe" >"$out/nccl_info.log" 2>&1
grep -E "NCCL INFO (Channel 00|.*via|Connected all|NCCL_|comm .* nRanks)" "$out/nccl_info.log" | grep -E "^[^ ]*:[0-9]+:[0-9]+ " | head -12
echo "== NCCL bandwidth, P = $gpus"
"${mpi[@]}" -np "$gpus" "$probe"
echo "== bench scaling-mpi"
"${mpi[@]}" -np "$gpus" build/cuda/src/nbody bench scaling-mpi --device gpu --seconds 1 --timings "$@" 2>&1 | grep -v "^\[" | tee "$out/scaling.txt"
