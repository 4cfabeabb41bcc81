#!/usr/bin/env bash
# Checks that the project's C++ and CUDA files (tracked by git under src/, include/, tests/,
# bench/ and fuzz/) are formatted as .clang-format says; ./test.sh runs it before the builds.
#   scripts/check_format.sh         list the files that are off; exit 1 when there are any
#   scripts/check_format.sh --fix   rewrite those files in place (clang-format -i)
# clang-format's output changes between major versions, so the check is pinned to 14, the
# version Debian bookworm ships (scripts/setup.sh installs it): clang-format-14 when present,
# else clang-format. It says which version it used.
set -euo pipefail
cd "$(dirname "$0")/.."

fix=0
case "${1:-}" in
  "") ;;
  --fix) fix=1 ;;
  -h | --help)
    sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *)
    echo "check_format: unknown argument '$1' (use --fix, or nothing to check)" >&2
    exit 2
    ;;
esac

wanted_major=14
if command -v clang-format-$wanted_major >/dev/null; then
  clang_format=clang-format-$wanted_major
elif command -v clang-format >/dev/null; then
  clang_format=clang-format
else
  echo "check_format: clang-format not found (scripts/setup.sh installs Debian's clang-format)" >&2
  exit 2
fi
version=$("$clang_format" --version)
echo "check_format: $version ($(command -v "$clang_format"))"
if [[ ! $version =~ version\ $wanted_major\. ]]; then
  echo "check_format: warning: not clang-format $wanted_major; its output may differ from the" \
    "pinned version's" >&2
fi

# Third-party code is not ours to format: none is vendored today; add its folder here if
# some ever is (as a git pathspec, e.g. ':!src/third_party/').
excluded=()
mapfile -t files < <(git ls-files -- \
  'src/*.cpp' 'src/*.hpp' 'src/*.cu' 'src/*.cuh' 'src/*.h' \
  'include/*.cpp' 'include/*.hpp' 'include/*.cu' 'include/*.cuh' 'include/*.h' \
  'tests/*.cpp' 'tests/*.hpp' 'tests/*.cu' 'tests/*.cuh' 'tests/*.h' \
  'bench/*.cpp' 'bench/*.hpp' 'bench/*.cu' 'bench/*.cuh' 'bench/*.h' \
  'fuzz/*.cpp' 'fuzz/*.hpp' \
  "${excluded[@]}")
if ((${#files[@]} == 0)); then
  echo "check_format: no C++/CUDA files found" >&2
  exit 2
fi

# Tracked files deleted in the working tree (git rm not yet run) are skipped.
present=()
for f in "${files[@]}"; do [[ -f $f ]] && present+=("$f"); done

# One clang-format per file, two at a time per core: a file is off when the dry run
# reports a change (exit status non-zero with --Werror).
mapfile -t off < <(printf '%s\0' "${present[@]}" |
  xargs -0 -P "$(($(nproc) * 2))" -n 1 sh -c \
    '"$0" --style=file --dry-run --Werror "$1" >/dev/null 2>&1 || printf "%s\n" "$1"' \
    "$clang_format" | sort)

if ((${#off[@]} == 0)); then
  echo "check_format: all ${#present[@]} files match .clang-format"
  exit 0
fi

if ((fix)); then
  "$clang_format" --style=file -i "${off[@]}"
  echo "check_format: reformatted ${#off[@]} of ${#present[@]} files:"
  printf '  %s\n' "${off[@]}"
  exit 0
fi

echo "check_format: ${#off[@]} of ${#present[@]} files do not match .clang-format:"
printf '  %s\n' "${off[@]}"
echo "Fix them with: scripts/check_format.sh --fix" \
  "(runs $clang_format --style=file -i on these files)"
exit 1
