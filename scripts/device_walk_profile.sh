#!/usr/bin/env bash
# The GPU tree under the microscope, in one call of the GPU machine: builds the cuda
# preset's nbody (and, given OLD_SOURCE_DIR, an older tree's, for side-by-side times),
# measures accuracy and time of the opening criteria at 1M (Plummer, eps 0.05, float),
# with the walk's second pass at several budgets, and reads the walk kernels' hardware
# counters with Nsight Compute (clocks left alone). Usage, from the repo root:
#   scripts/device_walk_profile.sh [OLD_SOURCE_DIR]
# Full logs and ncu reports go to $OUT; a short table is printed last.
set -uo pipefail
out=${OUT:-/tmp/nbody-out}
mkdir -p "$out"
build() {  # source dir, build dir
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNBODY_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DNBODY_BUILD_TESTS=OFF -DNBODY_BUILD_BENCHMARKS=OFF >"$out/configure_$(basename "$2").log" 2>&1 &&
    cmake --build "$2" -j16 --target nbody >"$out/build_$(basename "$2").log" 2>&1 ||
    { grep -E "error" -A3 "$out/build_$(basename "$2").log" | head -40; exit 1; }
}
t0=$(date +%s)
build . build/profile-new
new=./build/profile-new/src/nbody
old=
if [[ $# -ge 1 ]]; then build "$1" build/profile-old; old=./build/profile-old/src/nbody; fi
echo "build: $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader
common=(--model plummer -n 1048576 --softening 0.05 --device gpu --precision float --sample 4096)
row() {  # label, binary, options...
  local label=$1 bin=$2; shift 2
  "$bin" accuracy "${common[@]}" "$@" >"$out/acc.txt" 2>&1
  printf '%-44s %s\n' "$label" "$(awk '/median/{m=$2} /^  p99 /{p=$2} /interactions per/{i=$4}
    /solver time/{t=$3; b=$8; w=$11} END{printf "median %s p99 %s int/body %5.0f total %6.2f build %5.2f walk %5.2f ms", m, p, i, t*1e3, b*1e3, w*1e3}' "$out/acc.txt")"
}
# Rows: COMPARE_ROWS (old and new) and NEW_ROWS (new only), ';'-separated option lists.
compare_rows=${COMPARE_ROWS:-"--theta 0.5;--theta 0.5 --quadrupole;--theta 0.3;--mac relative --alpha 0.004"}
new_rows=${NEW_ROWS:-"--mac relative --alpha 0.005;--mac relative --alpha 0.0005;--mac relative --alpha 0.0002"}
{
IFS=';' read -ra rows <<<"$compare_rows"
for mac in "${rows[@]}"; do
  [[ -n $old ]] && row "old $mac" "$old" $mac
  row "new $mac" "$new" $mac
done
IFS=';' read -ra rows <<<"$new_rows"
for mac in "${rows[@]}"; do row "new $mac" "$new" $mac; done
for bin in $old $new; do
  echo "== $bin bench tree --device gpu -n 1048576 (theta 0.5)"
  "$bin" bench tree --device gpu -n 1048576 2>&1 | tail -3
done
echo "== direct sum, 1M float"
"$new" bench direct --device gpu -n 1048576 2>&1 | tail -3
} | tee "$out/table.txt"
[[ ${NCU:-0} == 1 ]] || exit 0
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[[ -n $ncu ]] || { echo "no ncu"; exit 0; }
for mac in "--theta 0.5" "--mac relative --alpha 0.004"; do
  tag=$(echo "$mac" | tr -dc 'a-z0-9.')
  "$ncu" --clock-control none --metrics gpu__time_duration.sum --print-units base --csv "$new" accuracy \
    "${common[@]}" $mac >"$out/ncu_all_$tag.csv" 2>&1
  echo "== ncu $mac: kernel times of the last evaluation (us)"
  python3 - "$out/ncu_all_$tag.csv" <<'PY'
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
done
