#!/usr/bin/env bash
# Runs the libFuzzer targets of fuzz/ (docs/testing.md, "Fuzzing") for a bounded time.
#   scripts/fuzz.sh [SECONDS] [TARGET...]   each TARGET (default: all of text config hdf5)
#                                           for SECONDS (default 30)
#   scripts/fuzz.sh --available             exit 0 when clang can build libFuzzer targets
# Builds the `fuzz` preset (clang, ASan + UBSan, build/fuzz), replays the committed corpus
# and regressions (ctest --preset fuzz; a failure is reported, and the fuzzing still runs),
# then fuzzes each target on its committed corpus
# (fuzz/corpus/T, read only) and a working corpus in build/fuzz/corpus/T, where what the
# fuzzer finds new is kept between runs: the committed corpus never grows by itself.
# A crash, a sanitizer report, a leak, an input slower than FUZZ_TIMEOUT seconds (default
# 10) or a larger allocation than FUZZ_RSS_MB (default 2048) is a finding: its input is
# written to build/fuzz/findings/T/, shown as a hex dump with the stack, and the script
# exits 1. FUZZ_KEEP_GOING=1 goes on after a finding (libFuzzer's fork mode), to collect
# several in one long run. FUZZ_SEED (default 0: a new one each run) fixes libFuzzer's random
# seed. FUZZ_RUNS=N runs N inputs per target instead of SECONDS (which then only caps a slow
# machine), from a fresh working corpus and the committed seeds in name order: with a fixed
# seed that is the same run on every machine, whatever its speed. ./test.sh passes
# FUZZ_SEED=1 FUZZ_RUNS=15000, so CI repeats exactly the mutations of a developer's
# ./test.sh on the same commit (a run timed in seconds did not: CI's faster machine ran
# other inputs, and found what ours had not).
set -euo pipefail
cd "$(dirname "$0")/.."
all_targets=(text config hdf5)

# clang and its libFuzzer runtime (Debian: clang, libclang-rt-dev): link a tiny target.
available() {
  command -v clang++ >/dev/null || return 1
  local dir
  dir=$(mktemp -d)
  printf '%s\n' '#include <cstddef>' '#include <cstdint>' \
    'extern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }' >"$dir/t.cpp"
  local ok=0
  clang++ -fsanitize=fuzzer,address,undefined "$dir/t.cpp" -o "$dir/t" >/dev/null 2>&1 || ok=1
  rm -rf "$dir"
  return $ok
}

if [[ ${1:-} == --available ]]; then
  available
  exit
fi
if ! available; then
  echo "fuzz: clang with libFuzzer not found (scripts/setup.sh installs clang and libclang-rt-dev); not run"
  exit 0
fi

seconds=30
if [[ ${1:-} =~ ^[0-9]+$ ]]; then
  seconds=$1
  shift
fi
targets=("$@")
if ((${#targets[@]} == 0)); then targets=("${all_targets[@]}"); fi
for t in "${targets[@]}"; do
  if [[ ! -d fuzz/corpus/$t ]]; then
    echo "fuzz: unknown target '$t' (targets: ${all_targets[*]})" >&2
    exit 2
  fi
done

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$(nproc)"
failed=()
# A regression that fails again is a finding too; fuzzing goes on (it may find others).
ctest --preset fuzz || failed+=("replay")

# Leaks are findings (not libhdf5's own: fuzz/lsan.supp); UBSan stops at its first report
# (the build has no recovery).
export ASAN_OPTIONS="detect_leaks=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:${UBSAN_OPTIONS:-}"
export LSAN_OPTIONS="suppressions=$PWD/fuzz/lsan.supp:${LSAN_OPTIONS:-}"
keep_going=()
if [[ ${FUZZ_KEEP_GOING:-0} == 1 ]]; then
  keep_going=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
fi

for t in "${targets[@]}"; do
  work=build/fuzz/corpus/$t
  findings=build/fuzz/findings/$t
  log=build/fuzz/logs/$t.log
  mkdir -p "$work" "$findings" "$(dirname "$log")"
  before=$(find "$findings" -type f | sort)
  # Not fuzz/regressions/T: the replay above runs it, and one that still crashes would stop
  # the fuzzer before it starts.
  dirs=("$work" "fuzz/corpus/$t")
  extra=(-max_total_time="$seconds")
  what="$seconds s"
  if [[ -n ${FUZZ_RUNS:-} ]]; then
    # libFuzzer orders its seeds by size with std::sort, which gives the same order only for
    # the same order given: a folder lists its files in an order of the file system's own,
    # so the seeds are named one by one, sorted.
    work=$(mktemp -d)
    dirs=("$work")
    seeds=$(find "fuzz/corpus/$t" -type f | LC_ALL=C sort | paste -sd, -)
    extra=(-runs="$FUZZ_RUNS" -max_total_time="$seconds" -seed_inputs="$seeds")
    what="$FUZZ_RUNS inputs (at most $seconds s)"
  fi
  if [[ -f fuzz/$t.dict ]]; then extra+=(-dict="fuzz/$t.dict"); fi
  # libhdf5 sizes some buffers from a corrupt file's metadata before it checks them (4 GB
  # in H5C_protect for a corrupt object header) and fills only what the file holds: such a
  # malloc is not nbody's to avoid, and costs no memory. Memory really used still counts
  # (-rss_limit_mb), as does any malloc above this limit.
  if [[ $t == hdf5 ]]; then extra+=(-malloc_limit_mb="${FUZZ_HDF5_MALLOC_MB:-16384}"); fi
  echo "== fuzz $t: $what (log $log)"
  t0=$SECONDS
  rc=0
  "build/fuzz/fuzz/fuzz_$t" "${dirs[@]}" "${extra[@]}" "${keep_going[@]}" \
    -seed="${FUZZ_SEED:-0}" -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb="${FUZZ_RSS_MB:-2048}" \
    -artifact_prefix="$findings/" -print_final_stats=1 >"$log" 2>&1 || rc=$?
  runs=$(grep -oE '^#[0-9]+' "$log" | tail -1 || true)  # libFuzzer's count of inputs run
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 || true)
  new=$(comm -13 <(echo "$before") <(find "$findings" -type f | sort) | grep -v '^$' || true)
  echo "   $((SECONDS - t0)) s, ${runs:-#?} inputs run, $cov, exit $rc"
  if [[ -n ${FUZZ_RUNS:-} ]]; then
    if [[ ${runs#\#} != "$FUZZ_RUNS" ]] && ((rc == 0)); then
      echo "   (stopped by the $seconds s cap before $FUZZ_RUNS inputs: not the run CI makes)"
    fi
    rm -rf "$work"
  fi
  if ((rc != 0)) || [[ -n $new ]]; then
    failed+=("$t")
    echo "!! fuzz $t: finding(s); the report (the end of $log):"
    # (|| true: head closing the pipe early is not a failure of this script)
    { grep -E 'ERROR: |SUMMARY: |runtime error|Assertion|^    #[0-9]+ ' "$log" || tail -40 "$log"; } |
      head -40 || true
    for f in $new; do
      echo "-- $f ($(stat -c %s "$f") bytes; replay: build/fuzz/fuzz/fuzz_$t $f)"
      od -A d -t x1z -v "$f" | head -16 || true
    done
  fi
done

if ((${#failed[@]})); then
  echo "fuzz: findings in ${failed[*]}: each becomes a regression test (docs/testing.md, Fuzzing)"
  exit 1
fi
echo "fuzz: ${targets[*]}: nothing found in ${what% (*} each"
