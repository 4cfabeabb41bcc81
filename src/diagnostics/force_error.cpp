// Force-error statistics against a float64 direct sum on a sample of bodies.
#include "nbody/force_error.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <random>

#include <fmt/format.h>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "nbody/error.hpp"
#include "nbody/physics/pair_force.hpp"

namespace nbody {

namespace {

/// Uniform integer in [0, range) from raw engine words by rejection, not
/// std::uniform_int_distribution, whose algorithm differs between standard libraries (the
/// sample must be the same everywhere for a seed, like the initial conditions).
std::uint64_t uniform_below(std::mt19937_64& engine, std::uint64_t range) {
  // Words below 2^64 mod range would make small results slightly more likely: reject them.
  const std::uint64_t threshold = (std::uint64_t(0) - range) % range;
  std::uint64_t word = engine();
  while (word < threshold) word = engine();
  return word % range;
}

/// The nearest-rank p-quantile of sorted values, p = num/den. Integer arithmetic for the
/// rank, so that e.g. p = 0.999 with 1000 values is exactly rank 999, not 999.0000000001.
double nearest_rank(const std::vector<double>& sorted, std::size_t num, std::size_t den) {
  const std::size_t n = sorted.size();
  const std::size_t rank = std::max<std::size_t>(1, (num * n + den - 1) / den);  // ceil(p n), >= 1
  return sorted[std::min(rank, n) - 1];
}

}  // namespace

std::vector<std::size_t> sample_indices(std::size_t n, std::size_t k, std::uint64_t seed) {
  std::vector<std::size_t> out;
  if (k == 0 || k >= n) {
    out.resize(n);
    std::iota(out.begin(), out.end(), std::size_t(0));
    return out;
  }
  // Floyd's algorithm: k draws, each accepted, every k-subset equally likely. A byte per
  // body marks the chosen ones; scanning it gives them sorted.
  std::mt19937_64 engine(seed);
  std::vector<unsigned char> chosen(n, 0);
  for (std::size_t j = n - k; j < n; ++j) {
    const auto t = static_cast<std::size_t>(uniform_below(engine, std::uint64_t(j) + 1));
    chosen[chosen[t] ? j : t] = 1;
  }
  out.reserve(k);
  for (std::size_t i = 0; i < n; ++i) {
    if (chosen[i]) out.push_back(i);
  }
  return out;
}

std::vector<double> relative_force_errors(const ParticleSystem& approx, const ParticleSystem& exact,
                                          const std::vector<std::size_t>& indices) {
  if (approx.size() != exact.size()) {
    throw Error(fmt::format("force errors: the systems have {} and {} bodies", approx.size(),
                            exact.size()));
  }
  std::vector<double> errors;
  errors.reserve(indices.size());
  for (const std::size_t i : indices) {
    if (i >= exact.size()) {
      throw Error(
          fmt::format("force errors: body index {} out of range ({} bodies)", i, exact.size()));
    }
    const double dx = approx.ax[i] - exact.ax[i];
    const double dy = approx.ay[i] - exact.ay[i];
    const double dz = approx.az[i] - exact.az[i];
    const double diff = std::sqrt(dx * dx + dy * dy + dz * dz);
    const double norm = std::sqrt(exact.ax[i] * exact.ax[i] + exact.ay[i] * exact.ay[i] +
                                  exact.az[i] * exact.az[i]);
    // A zero exact force has no scale to divide by: report the absolute error (documented).
    errors.push_back(norm > 0 ? diff / norm : diff);
  }
  return errors;
}

ForceErrorStats summarize_errors(std::vector<double> errors) {
  ForceErrorStats s;
  s.sample = errors.size();
  if (errors.empty()) return s;
  for (double& e : errors) {
    if (std::isnan(e)) e = std::numeric_limits<double>::infinity();
  }
  std::sort(errors.begin(), errors.end());
  s.median = nearest_rank(errors, 1, 2);
  s.p90 = nearest_rank(errors, 9, 10);
  s.p99 = nearest_rank(errors, 99, 100);
  s.p999 = nearest_rank(errors, 999, 1000);
  s.max = errors.back();
  double sum_sq = 0;
  for (const double e : errors) sum_sq += e * e;
  s.rms = std::sqrt(sum_sq / double(errors.size()));
  return s;
}

void direct_accelerations_for(const ParticleSystem& ps, const std::vector<std::size_t>& indices,
                              double G, double softening, ParticleSystem& out, int threads) {
  const std::size_t n = ps.size();
  if (out.size() != n) {
    throw Error(fmt::format("direct reference: output has {} bodies, input {}", out.size(), n));
  }
  for (const std::size_t i : indices) {
    if (i >= n)
      throw Error(fmt::format("direct reference: body index {} out of range ({} bodies)", i, n));
  }
  const double eps2 = softening * softening;
  const auto count = static_cast<std::ptrdiff_t>(indices.size());
#if defined(_OPENMP)
  const int team = threads > 0 ? threads : omp_get_max_threads();
  // Dynamic: each sampled body costs the same O(N), but sharing the cores with other work
  // makes static chunks finish unevenly. Different bodies write different entries of out.
#pragma omp parallel for schedule(dynamic, 4) num_threads(team) if (count > 1)
#else
  (void)threads;
#endif
  for (std::ptrdiff_t s = 0; s < count; ++s) {
    const std::size_t i = indices[static_cast<std::size_t>(s)];
    const double xi = ps.x[i], yi = ps.y[i], zi = ps.z[i];
    double ax = 0, ay = 0, az = 0;
    // The same loop as DirectSumScalar<double>: j ascending, self term skipped, G applied
    // once at the end, so the reference is that solver's result bit for bit.
    for (std::size_t j = 0; j < n; ++j) {
      if (j == i) continue;
      accumulate_pair_acceleration<double>(ps.x[j] - xi, ps.y[j] - yi, ps.z[j] - zi, ps.mass[j],
                                           eps2, ax, ay, az);
    }
    out.ax[i] = G * ax;
    out.ay[i] = G * ay;
    out.az[i] = G * az;
  }
}

}  // namespace nbody
