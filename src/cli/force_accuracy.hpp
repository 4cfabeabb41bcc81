#pragma once
// What `nbody accuracy` and `nbody bench theta` share: the float64 direct-sum reference on a
// sample of bodies (computed once, compared with any number of solvers), and one solver
// measured against it: a warm-up evaluation, then timed evaluations, the force errors of the
// first timed one; and the fast direct sum a speed-up is measured against.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "nbody/force_error.hpp"
#include "nbody/gravity.hpp"
#include "nbody/particles.hpp"

namespace nbody::cli {

/// The exact accelerations of the sampled bodies.
struct ForceReference {
  std::vector<std::size_t> indices;  // the sampled bodies, ascending
  ParticleSystem exact;              // a copy of the bodies; float64 direct sum at `indices`
  double seconds = 0;                // wall time of the sampled sum

  /// Relative force errors of `approx` (the same bodies) on the sample.
  [[nodiscard]] ForceErrorStats errors_of(const ParticleSystem& approx) const;
};

/// The float64 direct sum (G and softening of `g`, on g.threads threads) for `sample`
/// bodies drawn with `sample_seed` (0 or >= N: every body; sample_indices()).
[[nodiscard]] ForceReference force_reference(const ParticleSystem& ps, std::size_t sample,
                                             std::uint64_t sample_seed, const GravityOptions& g);

/// How often a solver is timed: at least `min_evaluations`, then more while the timed
/// evaluations have taken less than `budget_seconds`, at most `max_evaluations`.
struct TimingPlan {
  std::size_t min_evaluations = 1;
  std::size_t max_evaluations = 1;
  double budget_seconds = 0;
};

struct SolverMeasurement {
  ForceErrorStats errors;   // of the first timed evaluation
  SolverStats stats;        // of the first timed evaluation
  double seconds = 0;       // wall time of the first timed evaluation (build included)
  double best_seconds = 0;  // the fastest timed evaluation, wall time
  // The timed evaluation with the fastest build + walk (the solver's stages; 0 when it
  // reports none, e.g. the direct sum).
  double best_build_seconds = 0;
  double best_walk_seconds = 0;
  std::size_t evaluations = 0;  // timed evaluations

  /// The fastest build + walk, or the fastest wall time for a solver without stages.
  [[nodiscard]] double best_stage_seconds() const {
    const double stages = best_build_seconds + best_walk_seconds;
    return stages > 0 ? stages : best_seconds;
  }
};

/// Evaluates `solver` on a copy of `ps`: once untimed (first-touch of scratch memory, thread
/// start-up; for the relative opening criterion also the |a_old| the next evaluation opens
/// cells with), then as `plan` says, each evaluation timed. The errors against `reference`
/// are those of the first timed evaluation: the solver's second, as `nbody accuracy` reports.
[[nodiscard]] SolverMeasurement measure_solver(GravitySolver& solver, const ParticleSystem& ps,
                                               const ForceReference& reference,
                                               const TimingPlan& plan = {});

/// The fast direct sum (SIMD + OpenMP on the CPU, the default kernel on a GPU) with the
/// device, threads, G and softening of `g` and the precision of the solver it is compared
/// with: the honest baseline of a speed-up (the float64 reference loop of ForceReference is
/// several times slower). Median of evaluations for about `budget_seconds` after a warm-up,
/// on every body up to kDirectMeasuredMaxN (bench_common.hpp), else on the first
/// kDirectProbeN bodies and scaled by N^2 (the sum's cost does not depend on the positions).
struct DirectBaseline {
  std::string solver;    // e.g. direct-simd-avx2-float
  double seconds = 0;    // one evaluation on all N bodies
  bool measured = true;  // false: timed on `timed_bodies` and scaled
  std::size_t timed_bodies = 0;
};
[[nodiscard]] DirectBaseline time_direct_baseline(const ParticleSystem& ps, const GravityOptions& g,
                                                  double budget_seconds = 0.2);

}  // namespace nbody::cli
