#pragma once
// Force-error statistics: how far an approximate solver's accelerations (the tree, float32
// arithmetic, ...) are from the float64 direct sum, body by body. Used by `nbody accuracy`
// and the tests.
//
// The exact reference is the expensive part (O(N^2) for all bodies), so it is computed for a
// random sample of K bodies only: O(K N). The quantiles of K per-body errors estimate those of
// all N well for K ~ 1000 (the tail beyond p99.9 needs K >> 1000 to be meaningful).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "nbody/particles.hpp"

namespace nbody {

/// Distribution of per-body relative force errors. Quantiles use the nearest-rank method
/// (the smallest error e such that at least a fraction p of the sample is <= e), so every
/// reported value is one that some body actually has.
struct ForceErrorStats {
  std::size_t sample = 0;  // number of bodies the statistics are over
  double median = 0;
  double p90 = 0;
  double p99 = 0;
  double p999 = 0;
  double max = 0;
  double rms = 0;  // sqrt(mean(e^2))
};

/// Indices of the bodies to compare: all of 0..n-1 when k == 0 or k >= n; otherwise k
/// distinct indices drawn uniformly (Floyd's algorithm on std::mt19937_64's raw words, so a
/// seed gives the same sample on every machine), sorted ascending.
[[nodiscard]] std::vector<std::size_t> sample_indices(std::size_t n, std::size_t k,
                                                      std::uint64_t seed);

/// Per sampled body i: |a_approx(i) - a_exact(i)| / |a_exact(i)|. Where |a_exact(i)| == 0
/// (a lone body, or one at a symmetric point) the relative error is undefined and the
/// absolute error |a_approx(i) - a_exact(i)| is returned instead. Throws nbody::Error when the
/// systems differ in size or an index is out of range.
[[nodiscard]] std::vector<double> relative_force_errors(const ParticleSystem& approx,
                                                        const ParticleSystem& exact,
                                                        const std::vector<std::size_t>& indices);

/// Median, p90, p99, p99.9, max and rms of the errors (taken by value: it sorts them).
/// A NaN error counts as +infinity, so a solver that produces NaN cannot look accurate.
/// An empty vector gives all zeros.
[[nodiscard]] ForceErrorStats summarize_errors(std::vector<double> errors);

/// Float64 direct-sum accelerations of the bodies in `indices` only (all N bodies attract
/// each of them; the self term is skipped), with Plummer softening, written to
/// out.ax/ay/az at those indices; other entries of `out` are left alone. `out` must have
/// ps.size() bodies (normally a copy of ps). Same arithmetic, in the same order, as the
/// scalar reference DirectSumScalar<double>, so the results are bit-identical to it.
/// OpenMP over the sample; threads == 0 uses OpenMP's default team size.
void direct_accelerations_for(const ParticleSystem& ps, const std::vector<std::size_t>& indices,
                              double G, double softening, ParticleSystem& out, int threads = 0);

}  // namespace nbody
