// Timing helpers and bodies shared by the bench suites.
#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/bench/bench_common.hpp"
#include "nbody/build_info.hpp"
#include "nbody/error.hpp"
#include "nbody/gravity.hpp"
#include "nbody/initial_conditions.hpp"

namespace nbody::cli::bench {

/// Median seconds of one force evaluation, repeated for about `budget` seconds.
double time_evaluations(GravitySolver& solver, ParticleSystem& ps, double budget) {
  using Clock = std::chrono::steady_clock;
  solver.compute_accelerations(ps);  // warm-up: page in scratch buffers, spin up threads
  std::vector<double> samples;
  const auto start = Clock::now();
  while (samples.size() < 3 ||
         (std::chrono::duration<double>(Clock::now() - start).count() < budget &&
          samples.size() < 1000)) {
    const auto t0 = Clock::now();
    solver.compute_accelerations(ps);
    samples.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::nth_element(samples.begin(), samples.begin() + std::ptrdiff_t(samples.size() / 2),
                   samples.end());
  return samples[samples.size() / 2];
}

/// Median of `values` (reorders them).
double median_of(std::vector<double> values) {
  std::nth_element(values.begin(), values.begin() + std::ptrdiff_t(values.size() / 2),
                   values.end());
  return values[values.size() / 2];
}

ParticleSystem bench_bodies(std::size_t n) {
  ModelOptions model;
  model.model = "uniform-cube";
  model.n = n;
  model.seed = 42;
  return generate(model);
}

std::string criterion_label(const GravityOptions& g) {
  switch (g.mac) {
    case OpeningCriterion::Relative:
      return fmt::format("mac relative, alpha = {:g} (first evaluation theta = {:g})", g.alpha,
                         g.theta);
    case OpeningCriterion::Bmax:
      return fmt::format("mac bmax, theta = {:g}", g.theta);
    default:
      return fmt::format("theta = {:g}", g.theta);
  }
}

}  // namespace nbody::cli::bench
