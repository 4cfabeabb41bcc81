#!/usr/bin/env bash
# The tree's figures of issue #22 in one call of the GPU machine: builds nbody (cuda
# preset), times full steps at 1M for the configurations named in BENCH_ROWS (';'-separated
# nbody bench tree options), draws the Pareto fronts of every criterion and order
# (nbody bench theta --device gpu; JSON and PNG into $OUT), and reads the hardware counters
# of the walk and of the direct-sum kernel with Nsight Compute (NCU=0 skips them).
#   scripts/device_tree_report.sh
set -uo pipefail
out=${OUT:-/tmp/nbody-out}
mkdir -p "$out"
t0=$(date +%s)
cmake -S . -B build/report -G Ninja -DCMAKE_BUILD_TYPE=Release -DNBODY_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DNBODY_BUILD_TESTS=OFF -DNBODY_BUILD_BENCHMARKS=OFF >"$out/configure.log" 2>&1 &&
  cmake --build build/report -j16 --target nbody >"$out/build.log" 2>&1 ||
  { grep -E "error" -A3 "$out/build.log" | head -40; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
nbody=./build/report/src/nbody
rows=${BENCH_ROWS-"--mac geometric --theta 0.5"}  # set empty: no bench tree rows
IFS=';' read -ra configs <<<"$rows"
{
for c in "${configs[@]}"; do
  echo "== bench tree --device gpu -n 1048576 $c"
  "$nbody" bench tree --device gpu -n 1048576 --seconds 2 $c 2>&1 | grep -A8 "^N = " | head -9
done
} | tee "$out/bench_tree.txt"
echo "== bench theta --device gpu"
"$nbody" bench theta --device gpu --seconds 0.5 ${THETA_ARGS:-} --json "$out/pareto_gpu.json" \
  --plot "$out/tree_pareto_gpu.png" 2>"$out/bench_theta.log" | tee "$out/bench_theta.txt"
tail -3 "$out/bench_theta.log"
[[ ${NCU:-1} == 1 ]] || exit 0
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
metrics=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__inst_executed.avg.per_cycle_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,l1tex__throughput.avg.pct_of_peak_sustained_active,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__average_warp_latency_issue_stalled_short_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_math_pipe_throttle.ratio,smsp__average_warp_latency_issue_stalled_wait.ratio,smsp__average_warp_latency_issue_stalled_barrier.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio
echo "== ncu: the walk (geometric theta 0.5), then the direct sum's fast float kernel"
"$ncu" --clock-control none -k regex:tree_walk -c 1 --metrics "$metrics" "$nbody" accuracy --model plummer \
  -n 1048576 --softening 0.05 --device gpu --precision float --sample 64 --mac geometric --theta 0.5 >"$out/ncu_walk.txt" 2>&1
"$ncu" --clock-control none -k regex:'direct_(fast|mutual)' -c 1 --metrics "$metrics" "$nbody" bench direct \
  --device gpu -n 1048576 --precision float --kernel fast --seconds 0.5 >"$out/ncu_direct.txt" 2>&1
for f in "$out/ncu_walk.txt" "$out/ncu_direct.txt"; do
  grep -E "^  [a-z_:<>]+.*\(|gpu__|launch__|sm__|smsp__|l1tex__|lts__|dram__" "$f" | grep -v "^==" | head -20
done
# The kernels of one step's force evaluation (the last of nbody accuracy's two), by time.
kernel_times=${KERNEL_TIMES:---mac relative --alpha 0.005}
"$ncu" --clock-control none --metrics gpu__time_duration.sum --print-units base --csv "$nbody" accuracy \
  --model plummer -n 1048576 --softening 0.05 --device gpu --precision float --sample 64 \
  $kernel_times >"$out/ncu_times.csv" 2>&1
echo "== ncu $kernel_times: kernel times of the last evaluation (us)"
python3 - "$out/ncu_times.csv" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head = rows[0]; k = head.index("Kernel Name"); v = head.index("Metric Value")
rows = rows[1:]
start = max(i for i, r in enumerate(rows) if "DeviceReduceKernel" in r[k])  # the last evaluation
t = collections.OrderedDict()
for r in rows[start:]:
    name = r[k].replace("nbody::", "").replace("(anonymous namespace)::", "").replace("cuda_gravity::", "")
    name = name.split("(")[0].split("<")[0] if "tree_walk" not in name else name.split("(")[0]
    t.setdefault(name[:80], []).append(float(r[v].replace(",", "")) / 1e3)
for name, us in t.items():
    print(f"   {name:80s} x{len(us):3d} {sum(us):9.1f}")
print(f"   {'total':80s}      {sum(sum(u) for u in t.values()):9.1f}")
PY
echo "== direct sum, 1M float (pairs/s)"
"$nbody" bench direct --device gpu -n 1048576 --precision float --kernel fast --seconds 0.5 2>&1 | tail -3
