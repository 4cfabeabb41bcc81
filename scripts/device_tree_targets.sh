#!/usr/bin/env bash
# Issue #22's targets in one call of the GPU machine: builds nbody from this tree (into
# build/report, which scripts/device_tree_report.sh reuses) and from an older source copy,
# then per configuration the accuracy (nbody accuracy: median and p99 force error on 4096
# sampled bodies, build + walk time of one evaluation) and the time of a full step (nbody
# bench tree --device gpu: its softening is 0.05 too), Plummer N = 1,048,576, eps = 0.05,
# float. Usage, from the repo root:
#   scripts/device_tree_targets.sh OLD_SOURCE_DIR
# OLD_SOURCE_DIR: e.g. mkdir -p .snap/old && git archive REV | tar -x -C .snap/old (.snap is
# ignored; name it in the device call's carry). OLD_ROWS and NEW_ROWS (';'-separated option
# lists) override the configurations; the default old rows use theta alone (builds before
# --mac). A short table is printed last.
set -uo pipefail
out=${OUT:-/tmp/nbody-out}
mkdir -p "$out"
build() {  # source dir, build dir
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNBODY_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DNBODY_BUILD_TESTS=OFF -DNBODY_BUILD_BENCHMARKS=OFF >"$out/configure_$(basename "$2").log" 2>&1 &&
    cmake --build "$2" -j16 --target nbody >"$out/build_$(basename "$2").log" 2>&1 ||
    { grep -E "error" -A3 "$out/build_$(basename "$2").log" | head -40; exit 1; }
}
[[ $# -eq 1 ]] || { echo "usage: $0 OLD_SOURCE_DIR" >&2; exit 2; }
t0=$(date +%s)
build . build/report
build "$1" build/targets-old
echo "build (new and old): $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
new=./build/report/src/nbody
old=./build/targets-old/src/nbody
common=(--model plummer -n 1048576 --softening 0.05 --device gpu --precision float)
row() {  # label, binary, options...
  local label=$1 bin=$2; shift 2
  "$bin" accuracy "${common[@]}" --sample 4096 "$@" >"$out/acc.txt" 2>&1 || { tail -3 "$out/acc.txt"; return; }
  local acc step
  acc=$(awk '/median/{m=$2} /^  p99 /{p=$2} /solver time/{t=$3} END{printf "%s  %s  %6.2f", m, p, t*1e3}' "$out/acc.txt")
  "$bin" bench tree --device gpu -n 1048576 --precision float --seconds 2 "$@" >"$out/bench.txt" 2>&1
  step=$(tail -1 "$out/bench.txt" | awk '{print $2}')  # the summary line: N, ms/step, ...
  printf '%-50s %s  %8s\n' "$label" "$acc" "${step:-?}"
  cat "$out/bench.txt" >>"$out/bench_all.txt"
}
old_rows=${OLD_ROWS:-"--theta 0.5;--theta 0.25;--theta 0.5 --quadrupole"}
new_rows=${NEW_ROWS:-"--mac geometric --theta 0.5;--mac relative --alpha 0.005;--mac relative --alpha 0.004;--mac relative --alpha 0.0005;--mac geometric --theta 0.5 --quadrupole;--mac geometric --theta 0.7 --quadrupole;--mac relative --alpha 0.004 --quadrupole;--mac relative --alpha 0.003 --quadrupole"}
{
printf '%-50s %-9s  %-9s  %6s  %8s\n' "configuration" "median" "p99" "eval ms" "step ms"
IFS=';' read -ra rows <<<"$old_rows"
for r in "${rows[@]}"; do row "old $r" "$old" $r; done
IFS=';' read -ra rows <<<"$new_rows"
for r in "${rows[@]}"; do row "new $r" "$new" $r; done
} | tee "$out/targets.txt"
