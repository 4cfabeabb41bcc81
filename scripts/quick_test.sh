#!/usr/bin/env bash
# The quick loop (docs/testing.md): rebuild what a change touched and run the tests of its
# areas, in the release preset (or another one: PRESET=debug runs them under the sanitizers).
#   scripts/quick_test.sh                 the areas of the files changed since the last commit
#                                         (git diff HEAD, and new files git does not ignore)
#   scripts/quick_test.sh tree io         the areas named (ctest labels, docs/testing.md)
#   scripts/quick_test.sh -R Kepler       anything after -R is a ctest name regex instead
# The long physics scenarios (label physics) run too when their area is named or touched.
# Needs a configured preset: ./test.sh or `cmake --preset release` once.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${PRESET:-release}
jobs=$(nproc)

# The ctest labels of one changed path ("" when none fits): its area, and the backend suite
# (every physics test through Simulation) for the solvers, integrators and collisions.
area_of() {
  case $1 in
    src/tree/* | include/nbody/physics/opening_criterion.hpp | include/nbody/physics/multipole.hpp | \
      include/nbody/physics/moments.hpp | tests/unit/test_tree*.cpp | tests/unit/test_joined_trees.cpp | \
      tests/unit/test_opening_criteria.cpp | \
      tests/unit/test_force_error.cpp | src/diagnostics/force_error.cpp) echo tree parallel backend ;;
    tests/unit/*essential_tree*) echo parallel ;;
    src/gravity/* | include/nbody/physics/pair_force.hpp | include/nbody/gravity.hpp | \
      tests/unit/test_pair_force.cpp | tests/unit/test_direct_sum.cpp | tests/unit/test_shared_forces.cpp | \
      tests/unit/test_solver_potential.cpp | tests/unit/*active_forces*) echo gravity backend ;;
    src/integrators/* | include/nbody/physics/integration.hpp | include/nbody/physics/timestep.hpp | \
      include/nbody/integrator.hpp | tests/unit/test_ias15*.cpp | tests/unit/test_integrators.cpp) echo integrators backend ;;
    src/io/* | include/nbody/io.hpp | include/nbody/snapshot.hpp | tests/unit/test_io*.cpp | \
      tests/unit/io_test_helpers.hpp | tests/unit/*checkpoint_share* | tests/unit/*test_particle_* | \
      tests/unit/test_snapshot*.cpp | tests/unit/test_run_options.cpp | tests/unit/test_config_file.cpp) echo io ;;
    src/ic/* | src/diagnostics/* | src/core/* | include/nbody/initial_conditions.hpp | \
      include/nbody/diagnostics.hpp | include/nbody/particles.hpp | tests/unit/test_initial_conditions*.cpp | \
      tests/unit/test_diagnostics.cpp | tests/unit/test_particles.cpp) echo ic ;;
    src/collisions/* | include/nbody/collisions.hpp | include/nbody/physics/collision_response.hpp | \
      tests/unit/test_collision*.cpp | tests/unit/collision_test_helpers.hpp) echo collisions backend ;;
    src/render/* | tests/unit/test_render.cpp) echo render ;;
    src/simulation/* | include/nbody/simulation.hpp | tests/backend/* | tests/backend_test.hpp) echo backend ;;
    src/cli/* | src/viewer/* | tests/cli/* | python/*) echo cli ;;
    *) echo "" ;;
  esac
}

if [[ ${1:-} == -R ]]; then
  shift
  select=(-R "$*")
else
  labels=("$@")
  if ((${#labels[@]} == 0)); then
    mapfile -t changed < <({ git diff --name-only HEAD; git ls-files --others --exclude-standard; } | sort -u)
    for f in "${changed[@]}"; do
      for a in $(area_of "$f"); do labels+=("$a"); done
    done
    mapfile -t labels < <(printf '%s\n' "${labels[@]}" | grep -v '^$' | sort -u)
    if ((${#labels[@]} == 0)); then
      echo "quick_test: no area to match the changes (${changed[*]:-none}); running label sanitize"
      labels=(sanitize)
    fi
  fi
  # A label no test has would select nothing and pass: refuse it, naming the known ones.
  [[ -f build/$preset/CTestTestfile.cmake ]] || cmake --preset "$preset" >/dev/null
  known=$(ctest --preset "$preset" --print-labels 2>/dev/null | sed -n 's/^  //p' | tr '\n' ' ')
  for l in "${labels[@]}"; do
    if [[ " $known " != *" $l "* ]]; then
      echo "quick_test: error: label '$l': no test has it (labels: ${known% })" >&2
      exit 2
    fi
  done
  # ctest -L is a regular expression: anchored, so `ic` is not a part of `physics`.
  select=(-L "^($(IFS='|'; echo "${labels[*]}"))\$")
fi

echo "quick_test: building the $preset preset"
[[ -f build/$preset/build.ninja ]] || cmake --preset "$preset" >/dev/null
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! cmake --build --preset "$preset" -j "$jobs" >"$log" 2>&1; then
  grep -vE '^\[[0-9]+/[0-9]+\] (Building|Linking)' "$log"
  exit 1
fi
echo "quick_test: ctest --preset $preset ${select[*]}"
# The selection replaces the preset's own label filter (debug: sanitize).
ctest --preset "$preset" -j "$jobs" "${select[@]}"
