#include "cli/trajectory_errors.hpp"

#include "nbody/simulation.hpp"

namespace nbody::cli {

/// Σ|x - x0|² and Σ|v - v0|² after K leapfrog steps with the solver at theta and at theta = 0
/// from the same start: how the force errors accumulate into the trajectories.
std::pair<double, double> trajectory_errors(const ParticleSystem& start,
                                            const GravityOptions& options, std::uint64_t steps,
                                            double dt) {
  GravityOptions exact_options = options;
  exact_options.theta = 0;
  Simulation approx(start, options, IntegratorOptions{});
  Simulation exact(start, exact_options, IntegratorOptions{});
  for (std::uint64_t s = 0; s < steps; ++s) {
    approx.step(dt);
    exact.step(dt);
  }
  const ParticleSystem& p = approx.particles();
  const ParticleSystem& q = exact.particles();
  double dx2 = 0, dv2 = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    dx2 += (p.x[i] - q.x[i]) * (p.x[i] - q.x[i]) + (p.y[i] - q.y[i]) * (p.y[i] - q.y[i]) +
           (p.z[i] - q.z[i]) * (p.z[i] - q.z[i]);
    dv2 += (p.vx[i] - q.vx[i]) * (p.vx[i] - q.vx[i]) + (p.vy[i] - q.vy[i]) * (p.vy[i] - q.vy[i]) +
           (p.vz[i] - q.vz[i]) * (p.vz[i] - q.vz[i]);
  }
  return {dx2, dv2};
}

}  // namespace nbody::cli
