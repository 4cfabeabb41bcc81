// Integrators against analytic solutions and conservation laws (values in
// docs/reference-values.md, measured with REBOUND).
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "nbody/diagnostics.hpp"
#include "nbody/error.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/simulation.hpp"
#include "test_helpers.hpp"

namespace nbody {
namespace {

constexpr double kTwoPi = 2 * std::numbers::pi;
constexpr double kFigureEightPeriod = 6.32591398;
constexpr double kKeplerPhaseErrorPerOrbit = 8.85e-4;  // measured at dt = P/1000, e = 0.5

Simulation make_sim(const std::string& model, IntegratorScheme scheme, ForceKernel kernel = ForceKernel::Scalar,
                    double damping = 1.0) {
  ModelOptions m;
  m.model = model;
  GravityOptions g;
  g.kernel = kernel;
  IntegratorOptions i;
  i.scheme = scheme;
  i.damping = damping;
  return Simulation(generate(m), g, i);
}

/// Largest distance of any body from where it started.
double return_error(const ParticleSystem& a, const ParticleSystem& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, std::hypot(a.x[i] - b.x[i], a.y[i] - b.y[i], a.z[i] - b.z[i]));
  }
  return worst;
}

double kepler_return_error(IntegratorScheme scheme, int steps_per_period, int periods) {
  Simulation sim = make_sim("kepler", scheme);
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

EnergyHistory kepler_energy(IntegratorScheme scheme, int steps_per_period, int periods) {
  Simulation sim = make_sim("kepler", scheme);
  const double e0 = compute_diagnostics(sim.particles(), 1.0, 0.0).total_energy;
  const double dt = kTwoPi / steps_per_period;
  const long total = long(steps_per_period) * periods;
  EnergyHistory h;
  for (long s = 1; s <= total; ++s) {
    sim.step(dt);
    const double e = kinetic_energy(sim.particles()) + potential_energy(sim.particles(), 1.0, 0.0);
    const double drift = relative_energy_drift(e0, e);
    h.max_all = std::max(h.max_all, drift);
    if (s <= total / 10) h.max_first = std::max(h.max_first, drift);
    if (s > total - total / 10) h.max_last = std::max(h.max_last, drift);
  }
  return h;
}

TEST(Leapfrog, KeplerReturnsAfterOneAndTenPeriodsWithErrorScalingAsDtSquared) {
  for (int periods : {1, 10}) {
    const double coarse = kepler_return_error(IntegratorScheme::Leapfrog, 1000, periods);
    const double fine = kepler_return_error(IntegratorScheme::Leapfrog, 2000, periods);
    // Second order: halving dt divides the error by 4.
    EXPECT_NEAR(coarse / fine, 4.0, 0.4) << periods << " periods";
    // The error is the orbital phase error, growing linearly with the number of orbits;
    // bound it 10% above what was measured at dt = P/1000.
    EXPECT_LT(coarse, 1.1 * kKeplerPhaseErrorPerOrbit * periods) << periods << " periods";
  }
}

TEST(Leapfrog, FigureEightReturnsAfterOnePeriod) {
  Simulation sim = make_sim("figure-eight", IntegratorScheme::Leapfrog);
  const ParticleSystem start = sim.particles();
  const int steps = 10000;
  for (int s = 0; s < steps; ++s) sim.step(kFigureEightPeriod / steps);
  // REBOUND: 2.0e-6 at T/10^4; the issue asks for 1e-3.
  EXPECT_LT(return_error(sim.particles(), start), 1e-5);
}

TEST(Leapfrog, KeplerEnergyErrorBoundedOverHundredOrbits) {
  const EnergyHistory h = kepler_energy(IntegratorScheme::Leapfrog, 1000, 100);
  EXPECT_LT(h.max_all, 1.2e-4);  // REBOUND: 1.07e-4 at dt = P/1000
  EXPECT_GT(h.max_all, 1e-6);    // the test measures something
  // No secular growth: the error oscillates with the orbit, it does not accumulate.
  EXPECT_LT(h.max_last, 1.05 * h.max_first);
}

TEST(SymplecticEuler, KeplerEnergyErrorBoundedButFirstOrder) {
  const EnergyHistory h = kepler_energy(IntegratorScheme::Euler, 1000, 100);
  EXPECT_LT(h.max_all, 1.5e-2);  // REBOUND: ~9e-3 at dt = P/1000, bounded
  EXPECT_GT(h.max_all, 1e-3);    // first order: far worse than the leapfrog
  EXPECT_LT(h.max_last, 1.05 * h.max_first);
  // First order: halving dt halves the energy error. (Its return error after a full
  // period shrinks as dt^2: symplectic Euler is conjugate to a second-order method.)
  const EnergyHistory fine = kepler_energy(IntegratorScheme::Euler, 2000, 10);
  EXPECT_NEAR(h.max_first / fine.max_all, 2.0, 0.2);
}

TEST(Kinematic, KeplerIsFirstOrderAndDriftsSecularly) {
  const double coarse = kepler_return_error(IntegratorScheme::Kinematic, 1000, 1);
  const double fine = kepler_return_error(IntegratorScheme::Kinematic, 2000, 1);
  EXPECT_NEAR(coarse / fine, 2.0, 0.3);
  // Not symplectic: the energy error keeps growing from orbit to orbit.
  const EnergyHistory h = kepler_energy(IntegratorScheme::Kinematic, 1000, 20);
  EXPECT_GT(h.max_last, 3 * h.max_first);
}

TEST(Leapfrog, TimeReversible) {
  ParticleSystem ps = test::random_system(50, 7);
  GravityOptions g;
  g.softening = 0.05;
  Simulation sim(ps, g, IntegratorOptions{});
  for (int s = 0; s < 200; ++s) sim.step(1e-3);
  ParticleSystem& p = sim.edit_particles();
  for (std::size_t i = 0; i < p.size(); ++i) {
    p.vx[i] = -p.vx[i];
    p.vy[i] = -p.vy[i];
    p.vz[i] = -p.vz[i];
  }
  for (int s = 0; s < 200; ++s) sim.step(1e-3);
  EXPECT_LT(return_error(p, ps), 1e-11);
}

TEST(Integrators, DirectSumConservesMomentumToRoundOff) {
  for (const ForceKernel kernel : {ForceKernel::Scalar, ForceKernel::Fast}) {
    for (const IntegratorScheme scheme :
         {IntegratorScheme::Leapfrog, IntegratorScheme::Euler, IntegratorScheme::Kinematic}) {
      ParticleSystem ps = test::random_system(500, 3);
      GravityOptions g;
      g.kernel = kernel;
      g.softening = 0.01;
      IntegratorOptions i;
      i.scheme = scheme;
      Simulation sim(ps, g, i);
      const Vec3 p0 = compute_diagnostics(sim.particles(), 1, 0.01).momentum;
      double scale = 0;  // sum |m v| at the end: the size of the terms being summed
      for (int s = 0; s < 100; ++s) sim.step(1e-3);
      const ParticleSystem& p = sim.particles();
      for (std::size_t k = 0; k < p.size(); ++k) scale += p.mass[k] * std::hypot(p.vx[k], p.vy[k], p.vz[k]);
      const Vec3 p1 = compute_diagnostics(p, 1, 0.01).momentum;
      EXPECT_LT(std::hypot(p1.x - p0.x, p1.y - p0.y, p1.z - p0.z), 1e-13 * scale) << to_string(kernel) << " " << to_string(scheme);
    }
  }
}

TEST(Integrators, DampingScalesVelocitiesOncePerStep) {
  for (const IntegratorScheme scheme :
       {IntegratorScheme::Leapfrog, IntegratorScheme::Euler, IntegratorScheme::Kinematic}) {
    ParticleSystem ps;
    ps.add({{0, 0, 0}, {1, -2, 0.5}, 1.0, 0, 0});  // a lone body: no force
    IntegratorOptions i;
    i.scheme = scheme;
    i.damping = 0.95;
    Simulation sim(ps, GravityOptions{}, i);
    sim.step(0.1);
    sim.step(0.1);
    EXPECT_DOUBLE_EQ(sim.particles().vx[0], 0.95 * 0.95) << to_string(scheme);
    EXPECT_DOUBLE_EQ(sim.particles().vy[0], -2 * 0.95 * 0.95) << to_string(scheme);
  }
}

/// One step of `scheme` from the Kepler start; returns the state before (with its
/// accelerations) and after, to compare with the scheme's defining formulas.
std::pair<ParticleSystem, ParticleSystem> one_kepler_step(IntegratorScheme scheme, double dt) {
  Simulation sim = make_sim("kepler", scheme);
  ParticleSystem before = sim.particles();
  GravityOptions g;
  g.kernel = ForceKernel::Scalar;
  make_gravity_solver(g)->compute_accelerations(before);
  sim.step(dt);
  return {before, sim.particles()};
}

TEST(Integrators, SemiImplicitEulerMatchesItsDefinition) {
  // v1 = v0 + a(x0) dt, x1 = x0 + v1 dt (seed 001, eq. 1.5).
  const double dt = 0.01;
  const auto [p0, p1] = one_kepler_step(IntegratorScheme::Euler, dt);
  const double v1 = p0.vy[0] + p0.ay[0] * dt;
  EXPECT_DOUBLE_EQ(p1.vy[0], v1);
  EXPECT_DOUBLE_EQ(p1.y[0], p0.y[0] + v1 * dt);
}

TEST(Integrators, KinematicMatchesItsDefinition) {
  // x1 = x0 + (v0 + a0 dt/2) dt, v1 = v0 + a0 dt (seed 000, eq. 2.5-2.6).
  const double dt = 0.01;
  const auto [p0, p1] = one_kepler_step(IntegratorScheme::Kinematic, dt);
  EXPECT_NEAR(p1.x[0], p0.x[0] + (p0.vx[0] + p0.ax[0] * dt / 2) * dt, 1e-15);
  EXPECT_DOUBLE_EQ(p1.vx[0], p0.vx[0] + p0.ax[0] * dt);
}

TEST(Integrators, UnknownSchemeAndBadDampingAreErrors) {
  EXPECT_THROW((void)parse_integrator_scheme("rk4"), Error);
  IntegratorOptions i;
  i.scheme = IntegratorScheme::Leapfrog;
  i.damping = 0.0;
  EXPECT_THROW((void)make_integrator(i), Error);
}

}  // namespace
}  // namespace nbody
