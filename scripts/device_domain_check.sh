#!/usr/bin/env bash
# Issue 35 on a GPU machine with many cores (nvidia-h100-x2: 2 GPUs, 32 cores) in one call:
# builds the cuda preset, runs the GPU tests (the replicated GPU path, which the decomposed
# CPU path must leave as it was), checks `mpirun -np 2 --device gpu` against one process,
# then measures the CPU domain decomposition's strong and weak scaling on the host's cores
# (`nbody bench scaling-mpi --device cpu`, RANKS ranks of THREADS OpenMP threads). A short
# table last.
#   scripts/device_domain_check.sh
set -uo pipefail
out=${OUT:-/tmp/nbody-out}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
t0=$(date +%s)
since() { echo "$(($(date +%s) - t0)) s"; }
cmake --preset cuda >"$out/configure.log" 2>&1 &&
  cmake --build --preset cuda -j"$(nproc)" --target nbody nbody_gpu_tests >"$out/build.log" 2>&1 ||
  { grep -E "error" -A3 "$out/build.log" | head -40; tail -20 "$out/configure.log"; exit 1; }
grep -E "nbody: (MPI|NCCL)" "$out/configure.log"
echo "build: $(since); $(nvidia-smi -L | wc -l) GPUs, $(nproc) cores"
nb=build/cuda/src/nbody
mpi=(mpirun --bind-to none -x NCCL_NVLS_ENABLE -x OMPI_ALLOW_RUN_AS_ROOT -x OMPI_ALLOW_RUN_AS_ROOT_CONFIRM)

echo "== GPU tests"
timeout 330 ctest --preset cuda -L gpu -j4 --timeout 300 >"$out/ctest.log" 2>&1
gpu_rc=$?
grep -E "tests passed|tests failed|\*\*\*Failed" "$out/ctest.log" | head -8
echo "gpu tests: rc $gpu_rc, $(since)"

echo "== mpirun -np 2 --device gpu against one process (replicated)"
work=$(mktemp -d)
args=(run --model plummer --seed 5 --softening 0.01 --dt 0.001 --steps 10 --device gpu -q --gravity tree -n 200000)
$nb "${args[@]}" -o "$work/one.txt" && "${mpi[@]}" -np 2 $nb "${args[@]}" -o "$work/two.txt"
cmp -s "$work/one.txt" "$work/two.txt" && gpu_mpi="identical" || gpu_mpi="DIFFERS"
echo "gpu tree, 2 ranks: $gpu_mpi"

echo "== CPU domain decomposition: bench scaling-mpi --device cpu"
threads=${THREADS:-2}
ranks=${RANKS:-$(($(nproc) / threads))}
OMP_NUM_THREADS=$threads timeout 240 "${mpi[@]}" -x OMP_NUM_THREADS -np "$ranks" $nb bench scaling-mpi \
  --device cpu -n "${N:-32768}" --seconds 1 --json >"$out/scaling_cpu.json" 2>"$out/scaling_cpu.err"
echo "cpu scaling: rc $?, $(since)"
rm -rf "$work"

echo
echo "================ summary ================"
printf '%-34s %s\n' "GPU tests (rc)" "$gpu_rc" "gpu tree, mpirun -np 2" "$gpu_mpi"
python3 - "$out/scaling_cpu.json" "$threads" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
rows = json.loads(text[text.index("["):])
print(f"CPU ranks of {sys.argv[2]} threads (domain decomposition from 2 ranks)")
print(f"{'solver':<7} {'scaling':<7} {'P':>3} {'N':>9} {'ms/step':>10} {'eff':>6} {'balance':>8} {'work':>6} {'MB/step':>8}")
for r in rows:
    print(f"{r['algorithm']:<7} {r['scaling']:<7} {r['ranks']:>3} {r['n']:>9} {r['ms_per_step']:>10.2f} "
          f"{100 * r['efficiency']:>5.1f}% {r['load_balance']:>8.2f} {r['work_imbalance']:>6.2f} "
          f"{1e-6 * r['bytes_per_step']:>8.2f}")
PY
echo "total: $(since)"
