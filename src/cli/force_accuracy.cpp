// The float64 reference on a sample of bodies and a solver measured against it (`nbody
// accuracy`, `nbody bench theta`).
#include "cli/force_accuracy.hpp"

#include <algorithm>
#include <chrono>

#include "cli/bench/bench_common.hpp"

namespace nbody::cli {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

ForceErrorStats ForceReference::errors_of(const ParticleSystem& approx) const {
  return summarize_errors(relative_force_errors(approx, exact, indices));
}

ForceReference force_reference(const ParticleSystem& ps, std::size_t sample,
                               std::uint64_t sample_seed, const GravityOptions& g) {
  ForceReference r;
  r.indices = sample_indices(ps.size(), sample, sample_seed);
  r.exact = ps;
  const auto start = Clock::now();
  direct_accelerations_for(ps, r.indices, g.G, g.softening, r.exact, g.threads);
  r.seconds = seconds_since(start);
  return r;
}

SolverMeasurement measure_solver(GravitySolver& solver, const ParticleSystem& ps,
                                 const ForceReference& reference, const TimingPlan& plan) {
  ParticleSystem approx = ps;
  solver.compute_accelerations(approx);  // warm-up; the relative criterion's |a_old|
  SolverMeasurement m;
  double timed = 0, best_stages = 0;
  while (m.evaluations < std::max<std::size_t>(plan.min_evaluations, 1) ||
         (timed < plan.budget_seconds && m.evaluations < plan.max_evaluations)) {
    const auto start = Clock::now();
    solver.compute_accelerations(approx);
    const double seconds = seconds_since(start);
    const SolverStats stats = solver.stats();
    const double stages = stats.build_seconds + stats.walk_seconds;
    if (m.evaluations == 0) {
      m.errors = reference.errors_of(approx);
      m.stats = stats;
      m.seconds = seconds;
      m.best_seconds = seconds;
    }
    m.best_seconds = std::min(m.best_seconds, seconds);
    if (m.evaluations == 0 || stages < best_stages) {
      best_stages = stages;
      m.best_build_seconds = stats.build_seconds;
      m.best_walk_seconds = stats.walk_seconds;
    }
    timed += seconds;
    ++m.evaluations;
  }
  return m;
}

DirectBaseline time_direct_baseline(const ParticleSystem& ps, const GravityOptions& g,
                                    double budget_seconds) {
  GravityOptions d = g;
  d.algorithm = GravityAlgorithm::Direct;
  d.kernel = ForceKernel::Fast;
  d.precision = resolve_precision(g.precision, g.algorithm);
  auto direct = make_gravity_solver(d);
  DirectBaseline b;
  b.solver = direct->name();
  b.measured = ps.size() <= bench::kDirectMeasuredMaxN;
  ParticleSystem probe = ps;
  if (!b.measured) probe.resize(bench::kDirectProbeN);
  b.timed_bodies = probe.size();
  const double scale = double(ps.size()) / double(probe.size());
  b.seconds = bench::time_evaluations(*direct, probe, budget_seconds) * scale * scale;
  return b;
}

}  // namespace nbody::cli
