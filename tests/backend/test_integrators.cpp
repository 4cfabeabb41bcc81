// The integrators on every backend, through Simulation: against analytic solutions and
// conservation laws (values in docs/reference-values.md, measured with REBOUND). The GPU
// integrates with the same float64 operations (physics/integration.hpp) and the direct sum
// is float64 by default on both devices, so the bounds are the same for both.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>
#include <utility>

#include "backend_test.hpp"
#include "nbody/diagnostics.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/simulation.hpp"
#include "unit/test_helpers.hpp"

namespace nbody {
namespace {

using test::integrator_options;
using test::simulation_options;

constexpr double kTwoPi = 2 * std::numbers::pi;
constexpr double kFigureEightPeriod = 6.32591398;
constexpr double kKeplerPhaseErrorPerOrbit = 8.85e-4;  // measured at dt = P/1000, e = 0.5

Simulation model_simulation(const std::string& model, Device device, IntegratorScheme scheme,
                            double damping = 1.0) {
  ModelOptions m;
  m.model = model;
  return Simulation(generate(m), simulation_options(device, GravityAlgorithm::Direct,
                                                    Precision::Auto, 0.0, scheme, damping));
}

/// Largest distance of any body from where it started.
double return_error(const ParticleSystem& a, const ParticleSystem& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, std::hypot(a.x[i] - b.x[i], a.y[i] - b.y[i], a.z[i] - b.z[i]));
  }
  return worst;
}

double kepler_return_error(Device device, IntegratorScheme scheme, int steps_per_period,
                           int periods) {
  Simulation sim = model_simulation("kepler", device, scheme);
  const ParticleSystem start = sim.particles();
  const double dt = kTwoPi / steps_per_period;
  for (int s = 0; s < steps_per_period * periods; ++s) sim.step(dt);
  return return_error(sim.particles(), start);
}

struct EnergyHistory {
  double max_first = 0;  // largest |dE/E| over the first tenth of the run
  double max_last = 0;   // ... over the last tenth
  double max_all = 0;
};

/// |dE/E| after every step, from the backend's own diagnostics.
EnergyHistory kepler_energy(Device device, IntegratorScheme scheme, int steps_per_period,
                            int periods) {
  Simulation sim = model_simulation("kepler", device, scheme);
  const double e0 = sim.diagnostics().total_energy;
  const double dt = kTwoPi / steps_per_period;
  const long total = long(steps_per_period) * periods;
  EnergyHistory h;
  for (long s = 1; s <= total; ++s) {
    sim.step(dt);
    const double drift = relative_energy_drift(e0, sim.diagnostics().total_energy);
    h.max_all = std::max(h.max_all, drift);
    if (s <= total / 10) h.max_first = std::max(h.max_first, drift);
    if (s > total - total / 10) h.max_last = std::max(h.max_last, drift);
  }
  return h;
}

NBODY_BACKEND_TEST_SUITE(Kepler);

TEST_P(Kepler, LeapfrogReturnsAfterOneAndTenPeriodsWithErrorOfOrderDtSquared) {
  for (int periods : {1, 10}) {
    const double coarse = kepler_return_error(device(), IntegratorScheme::Leapfrog, 1000, periods);
    const double fine = kepler_return_error(device(), IntegratorScheme::Leapfrog, 2000, periods);
    std::printf(
        "[ measured ] %s leapfrog, %d periods: return error %.3e at P/1000, %.3e at P/2000\n",
        std::string(to_string(device())).c_str(), periods, coarse, fine);
    // Second order: halving dt divides the error by 4.
    EXPECT_NEAR(coarse / fine, 4.0, 0.4) << periods << " periods";
    // The error is the orbital phase error, growing linearly with the number of orbits;
    // bound it 10% above what was measured at dt = P/1000.
    EXPECT_LT(coarse, 1.1 * kKeplerPhaseErrorPerOrbit * periods) << periods << " periods";
  }
}

TEST_P(Kepler, EulerReturnsAfterOnePeriodWithErrorOfOrderDtSquared) {
  // Symplectic Euler is conjugate to a second-order method: its energy error is first
  // order, but after a whole period it returns with an error of order dt^2.
  const double coarse = kepler_return_error(device(), IntegratorScheme::Euler, 1000, 1);
  const double fine = kepler_return_error(device(), IntegratorScheme::Euler, 2000, 1);
  std::printf("[ measured ] %s euler: return error %.3e at P/1000, %.3e at P/2000\n",
              std::string(to_string(device())).c_str(), coarse, fine);
  EXPECT_NEAR(coarse / fine, 4.0, 0.4);
}

TEST_P(Kepler, LeapfrogEnergyErrorBoundedOverHundredOrbits) {
  const EnergyHistory h = kepler_energy(device(), IntegratorScheme::Leapfrog, 1000, 100);
  EXPECT_LT(h.max_all, 1.2e-4);  // REBOUND: 1.07e-4 at dt = P/1000
  EXPECT_GT(h.max_all, 1e-6);    // the test measures something
  // No secular growth: the error oscillates with the orbit, it does not accumulate.
  EXPECT_LT(h.max_last, 1.05 * h.max_first);
}

TEST_P(Kepler, EulerEnergyErrorBoundedButFirstOrder) {
  const EnergyHistory h = kepler_energy(device(), IntegratorScheme::Euler, 1000, 100);
  EXPECT_LT(h.max_all, 1.5e-2);  // REBOUND: ~9e-3 at dt = P/1000, bounded
  EXPECT_GT(h.max_all, 1e-3);    // first order: far worse than the leapfrog
  EXPECT_LT(h.max_last, 1.05 * h.max_first);
  // First order: halving dt halves the energy error.
  const EnergyHistory fine = kepler_energy(device(), IntegratorScheme::Euler, 2000, 10);
  EXPECT_NEAR(h.max_first / fine.max_all, 2.0, 0.2);
}

TEST_P(Kepler, KinematicIsFirstOrderAndDriftsSecularly) {
  const double coarse = kepler_return_error(device(), IntegratorScheme::Kinematic, 1000, 1);
  const double fine = kepler_return_error(device(), IntegratorScheme::Kinematic, 2000, 1);
  EXPECT_NEAR(coarse / fine, 2.0, 0.3);
  // Not symplectic: the energy error keeps growing from orbit to orbit.
  const EnergyHistory h = kepler_energy(device(), IntegratorScheme::Kinematic, 1000, 20);
  EXPECT_GT(h.max_last, 3 * h.max_first);
}

NBODY_BACKEND_TEST_SUITE(FigureEight);

TEST_P(FigureEight, LeapfrogReturnsAfterOnePeriod) {
  Simulation sim = model_simulation("figure-eight", device(), IntegratorScheme::Leapfrog);
  const ParticleSystem start = sim.particles();
  const int steps = 10000;
  for (int s = 0; s < steps; ++s) sim.step(kFigureEightPeriod / steps);
  // REBOUND: 2.0e-6 at T/10^4; the issue asks for 1e-3.
  EXPECT_LT(return_error(sim.particles(), start), 1e-5);
}

NBODY_BACKEND_TEST_SUITE(Integrators);

TEST_P(Integrators, LeapfrogIsTimeReversible) {
  const ParticleSystem start = test::random_system(50, 7);
  Simulation sim(start,
                 simulation_options(device(), GravityAlgorithm::Direct, Precision::Auto, 0.05));
  for (int s = 0; s < 200; ++s) sim.step(1e-3);
  ParticleSystem& p = sim.edit_particles();
  for (std::size_t i = 0; i < p.size(); ++i) {
    p.vx[i] = -p.vx[i];
    p.vy[i] = -p.vy[i];
    p.vz[i] = -p.vz[i];
  }
  for (int s = 0; s < 200; ++s) sim.step(1e-3);
  EXPECT_LT(return_error(sim.particles(), start), 1e-11);
}

TEST_P(Integrators, DirectSumConservesMomentumToRoundOff) {
  for (const ForceKernel kernel : test::direct_kernels(device())) {
    for (const IntegratorScheme scheme : test::kAllSchemes) {
      SCOPED_TRACE(std::string(to_string(kernel)) + " " + std::string(to_string(scheme)));
      GravityOptions g =
          test::gravity_options(device(), GravityAlgorithm::Direct, Precision::Auto, 0.01);
      g.kernel = kernel;
      Simulation sim(test::random_system(500, 3), g, integrator_options(scheme));
      const Vec3 p0 = sim.diagnostics().momentum;
      for (int s = 0; s < 100; ++s) sim.step(1e-3);
      const ParticleSystem& p = sim.particles();
      double scale = 0;  // sum |m v| at the end: the size of the terms being summed
      for (std::size_t k = 0; k < p.size(); ++k) {
        scale += p.mass[k] * std::hypot(p.vx[k], p.vy[k], p.vz[k]);
      }
      const Vec3 p1 = compute_diagnostics(p, 1, 0.01).momentum;
      EXPECT_LT(std::hypot(p1.x - p0.x, p1.y - p0.y, p1.z - p0.z), 1e-13 * scale);
    }
  }
}

TEST_P(Integrators, DampingScalesVelocitiesOncePerStep) {
  for (const IntegratorScheme scheme : test::kAllSchemes) {
    ParticleSystem ps;
    ps.add({{0, 0, 0}, {1, -2, 0.5}, 1.0, 0, 0});  // a lone body: no force
    Simulation sim(ps, test::simulation_options(test::gravity_options(device()),
                                                integrator_options(scheme, 0.95)));
    sim.step(0.1);
    sim.step(0.1);
    EXPECT_DOUBLE_EQ(sim.particles().vx[0], 0.95 * 0.95) << to_string(scheme);
    EXPECT_DOUBLE_EQ(sim.particles().vy[0], -2 * 0.95 * 0.95) << to_string(scheme);
  }
}

/// One step of `scheme` from the Kepler start; returns the state before (with the
/// accelerations the run's stepper gives there: for two bodies on the CPU the scalar
/// float64 sum, host_stepper.cpp) and after, to compare with the scheme's defining formulas.
std::pair<ParticleSystem, ParticleSystem> one_kepler_step(Device device, IntegratorScheme scheme,
                                                          double dt) {
  Simulation sim = model_simulation("kepler", device, scheme);
  sim.evaluate_forces(false);
  ParticleSystem before = sim.particles();
  sim.step(dt);
  return {before, sim.particles()};
}

TEST_P(Integrators, SemiImplicitEulerMatchesItsDefinition) {
  // v1 = v0 + a(x0) dt, x1 = x0 + v1 dt (seed 001, eq. 1.5).
  const double dt = 0.01;
  const auto [p0, p1] = one_kepler_step(device(), IntegratorScheme::Euler, dt);
  const double v1 = p0.vy[0] + p0.ay[0] * dt;
  EXPECT_DOUBLE_EQ(p1.vy[0], v1);
  EXPECT_DOUBLE_EQ(p1.y[0], p0.y[0] + v1 * dt);
}

TEST_P(Integrators, KinematicMatchesItsDefinition) {
  // x1 = x0 + (v0 + a0 dt/2) dt, v1 = v0 + a0 dt (seed 000, eq. 2.5-2.6).
  const double dt = 0.01;
  const auto [p0, p1] = one_kepler_step(device(), IntegratorScheme::Kinematic, dt);
  EXPECT_NEAR(p1.x[0], p0.x[0] + (p0.vx[0] + p0.ax[0] * dt / 2) * dt, 1e-15);
  EXPECT_DOUBLE_EQ(p1.vx[0], p0.vx[0] + p0.ax[0] * dt);
}

}  // namespace
}  // namespace nbody
