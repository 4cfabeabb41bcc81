#!/usr/bin/env bash
# Issue 35/39 on a machine with 2 or 4 GPUs, in one call: the pieces' split near the centre of
# mass (NBODY_DOMAIN_PIECE_SPLIT=2, docs/distributed.md "Three cures tried") against the
# pieces as they are (0). Builds the cuda preset; runs the thread-rank tests with the split on
# (the forces against one process, the essential trees with fixed cuts); then for each mode
# `nbody bench scaling-mpi --device gpu --gravity tree` on every GPU, and one traced step of
# N bodies (TRACE_N, default 2^26) for the bytes each rank sends. A short table last.
#   scripts/device_piece_split_check.sh
# Another of the domain's experiment variables the same way: VAR names it, MODES its values
# (the first is the default; the thread-rank tests run with the last), e.g. the received
# trees walked as one:
#   VAR=NBODY_DOMAIN_MERGE MODES="0 1" scripts/device_piece_split_check.sh
set -uo pipefail
var=${VAR:-NBODY_DOMAIN_PIECE_SPLIT}
modes=(${MODES:-0 2})
last=${modes[${#modes[@]}-1]}
out=${OUT:-/tmp/nbody-out}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
t0=$(date +%s)
since() { echo "$(($(date +%s) - t0)) s"; }
cmake --preset cuda -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/configure.log" 2>&1 &&
  cmake --build build/cuda -j"$(nproc)" --target nbody nbody_gpu_tests >"$out/build.log" 2>&1 ||
  { grep -E "error" -A3 "$out/build.log" | head -60; tail -20 "$out/configure.log"; exit 1; }
gpus=$(nvidia-smi -L | wc -l)
echo "build: $(since); $gpus GPUs ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1))"
nb=build/cuda/src/nbody
echo "== thread ranks, $var=$last"
env "$var=$last" timeout 300 build/cuda/tests/nbody_gpu_tests \
  --gtest_filter='GpuDomain.*:GpuReceiverPieces.*:GpuEssentialTree.*' 2>&1 |
  grep -E "measured.*(tree error|split)|OK \]|FAILED|PASSED|Failure|Expected|actual" | tee "$out/tests.txt"
mpi=(mpirun --bind-to none -x NCCL_NVLS_ENABLE -x OMPI_ALLOW_RUN_AS_ROOT -x OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
  -x "$var")
for mode in "${modes[@]}"; do
  echo "== $var=$mode: bytes sent ($(since))"
  env "$var=$mode" NBODY_DOMAIN_TRACE=1 timeout 300 "${mpi[@]}" -x NBODY_DOMAIN_TRACE -np "$gpus" $nb run \
    --model plummer -n "${TRACE_N:-67108864}" --seed 1 --softening 0.001 --dt 1e-5 --steps 4 \
    --device gpu --gravity tree -q 2>&1 | grep "domain rank" | tail -n "$gpus" |
    sed -E 's/\| ms:.*\| exchange/| exchange/' | tee "$out/trace_$mode.txt"
  echo "== $var=$mode: bench scaling-mpi ($(since))"
  env "$var=$mode" timeout 500 "${mpi[@]}" -np "$gpus" $nb bench \
    scaling-mpi --device gpu --gravity tree --seconds 1 --timings 2>&1 | grep -v "^\[" |
    tee "$out/scaling_$mode.txt"
done
echo "== summary ($(since)): MB sent a step by all ranks; tree step and efficiency"
for mode in "${modes[@]}"; do
  mb=$(awk '{for (i = 1; i <= NF; i++) if ($i == "MB" && $(i + 1) == "out") s += $(i - 1)} END {printf "%.1f", s}' \
    "$out/trace_$mode.txt")
  echo "mode $mode: ${mb} MB"
  grep -E "^tree +(strong|weak)" "$out/scaling_$mode.txt" | sed "s/^/  mode $mode: /"
done
