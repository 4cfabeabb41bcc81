// Simulation's state on every backend: the diagnostics, the host copy (particles() reads
// without marking edits, edit_particles() is uploaded before the next step, positions()),
// and the integrators' arithmetic (a Simulation step gives the bits of the integrator
// driving the backend's solver). reconfigure() and the options: test_simulation_options.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "backend/simulation_test_helpers.hpp"
#include "backend_test.hpp"
#include "nbody/diagnostics.hpp"
#include "nbody/simulation.hpp"
#include "simulation/stepper.hpp"
#include "unit/test_helpers.hpp"

namespace nbody {
namespace {

using simulation_test::direct;
using simulation_test::kDt;
using simulation_test::kSoftening;
using test::expect_same_state;
using test::integrator_options;

// ---- Diagnostics ----------------------------------------------------------------------------

/// The backend's diagnostics against compute_diagnostics (float64 on the CPU) of the same
/// state, to 1e-12 of each quantity's scale (momenta can cancel to ~0: their errors are
/// measured against the sums of magnitudes).
void expect_diagnostics_match(const Diagnostics& got, const Diagnostics& cpu,
                              const ParticleSystem& ps) {
  double p_scale = 0, l_scale = 0, r_scale = 0;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    const double v = std::hypot(ps.vx[i], ps.vy[i], ps.vz[i]);
    const double r = std::hypot(ps.x[i], ps.y[i], ps.z[i]);
    p_scale += ps.mass[i] * v;
    l_scale += ps.mass[i] * r * v;
    r_scale += ps.mass[i] * r;
  }
  r_scale /= cpu.total_mass;
  constexpr double tol = 1e-12;
  EXPECT_NEAR(got.total_mass, cpu.total_mass, tol * cpu.total_mass);
  EXPECT_NEAR(got.kinetic, cpu.kinetic, tol * std::abs(cpu.kinetic));
  EXPECT_NEAR(got.potential, cpu.potential, tol * std::abs(cpu.potential));
  EXPECT_NEAR(got.total_energy, cpu.total_energy,
              tol * (std::abs(cpu.kinetic) + std::abs(cpu.potential)));
  EXPECT_NEAR(got.virial_ratio, cpu.virial_ratio, tol * std::abs(cpu.virial_ratio) + 1e-300);
  for (auto [g, c, scale] :
       {std::tuple{got.momentum.x, cpu.momentum.x, p_scale},
        std::tuple{got.momentum.y, cpu.momentum.y, p_scale},
        std::tuple{got.momentum.z, cpu.momentum.z, p_scale},
        std::tuple{got.angular_momentum.x, cpu.angular_momentum.x, l_scale},
        std::tuple{got.angular_momentum.y, cpu.angular_momentum.y, l_scale},
        std::tuple{got.angular_momentum.z, cpu.angular_momentum.z, l_scale},
        std::tuple{got.com.x, cpu.com.x, r_scale}, std::tuple{got.com.y, cpu.com.y, r_scale},
        std::tuple{got.com.z, cpu.com.z, r_scale},
        std::tuple{got.com_velocity.x, cpu.com_velocity.x, p_scale / cpu.total_mass},
        std::tuple{got.com_velocity.y, cpu.com_velocity.y, p_scale / cpu.total_mass},
        std::tuple{got.com_velocity.z, cpu.com_velocity.z, p_scale / cpu.total_mass}}) {
    EXPECT_NEAR(g, c, tol * scale);
  }
}

NBODY_BACKEND_TEST_SUITE(SimulationDiagnostics);

TEST_P(SimulationDiagnostics, EqualComputeDiagnosticsOfTheSameState) {
  for (std::size_t n : {1, 2, 3, 1000, 4097}) {
    for (Precision p : {Precision::Float, Precision::Double}) {
      SCOPED_TRACE("N = " + std::to_string(n) + " " + std::string(to_string(p)));
      Simulation sim(test::random_system(n, 17 + n), direct(device(), p), IntegratorOptions{});
      expect_diagnostics_match(sim.diagnostics(),
                               compute_diagnostics(sim.particles(), 1.0, kSoftening),
                               sim.particles());
      for (int s = 0; s < 20; ++s) sim.step(kDt);
      const Diagnostics d = sim.diagnostics();
      const ParticleSystem& ps = sim.particles();
      expect_diagnostics_match(d, compute_diagnostics(ps, 1.0, kSoftening), ps);
    }
  }
}

TEST_P(SimulationDiagnostics, UseTheRunsGAndSoftening) {
  GravityOptions g = direct(device());
  g.G = 6.67430e-11;
  g.softening = 0.3;
  Simulation sim(test::random_system(500, 4), g, IntegratorOptions{});
  sim.step(kDt);
  const ParticleSystem& ps = sim.particles();
  expect_diagnostics_match(sim.diagnostics(), compute_diagnostics(ps, g.G, g.softening), ps);
}

// ---- The host copy --------------------------------------------------------------------------

NBODY_BACKEND_TEST_SUITE(HostCopy);

TEST_P(HostCopy, ParticlesAfterStepsAreTheSteppersState) {
  const ParticleSystem start = test::random_system(777, 8);
  Simulation sim(start, direct(device()), IntegratorOptions{});
  ParticleSystem own = start;  // a stepper of the same options, stepped alone
  const std::unique_ptr<Stepper> stepper = make_stepper(sim.options(), nullptr);
  stepper->upload(own);
  double t = start.time;
  for (int s = 0; s < 50; ++s) {
    sim.step(kDt);
    stepper->step(kDt, false);
    t += kDt;  // as the integrators advance ps.time
  }
  EXPECT_EQ(sim.time(), t);  // without a copy from the device
  EXPECT_EQ(sim.size(), start.size());
  EXPECT_EQ(sim.steps_done(), 50u);
  stepper->download(own);
  expect_same_state(sim.particles(), own, "particles() after 50 steps");
  EXPECT_EQ(sim.particles().id, start.id);
  EXPECT_TRUE(sim.particles().accelerations_valid());
  EXPECT_EQ(sim.time(), sim.particles().time);
}

TEST_P(HostCopy, EditsAreUploadedBeforeTheNextStep) {
  const GravityOptions g = direct(device(), Precision::Float);
  const IntegratorOptions i = integrator_options(IntegratorScheme::Euler, 0.95);
  Simulation sim(test::random_system(600, 9), g, i);
  Simulation untouched(test::random_system(600, 9), g, i);
  for (int s = 0; s < 10; ++s) {
    sim.step(kDt);
    untouched.step(kDt);
  }
  {
    ParticleSystem& ps = sim.edit_particles();
    ps.vx[0] += 1.0;
    ps.x[5] = 0.25;
    ps.mass[7] *= 3.0;
    ps.invalidate_accelerations();  // positions edited
  }
  const ParticleSystem edited = sim.particles();
  Simulation fresh(edited, g, i);  // the edited state, uploaded by a new simulation
  // The diagnostics see the edit too.
  const double kinetic = compute_diagnostics(edited, 1.0, kSoftening).kinetic;
  EXPECT_NEAR(sim.diagnostics().kinetic, kinetic, 1e-12 * kinetic);
  for (int s = 0; s < 10; ++s) {
    sim.step(kDt);
    fresh.step(kDt);
    untouched.step(kDt);
  }
  expect_same_state(sim.particles(), fresh.particles(), "edited then stepped");
  EXPECT_NE(sim.particles().x[0], untouched.particles().x[0]);
  EXPECT_EQ(sim.steps_done(), 20u);
}

TEST_P(HostCopy, ReadingDoesNotMarkTheStateEdited) {
  // A run that reads particles() after every step ends with the bits of one that never
  // reads. On the GPU a read is a download: were it taken as an edit, the next step would
  // upload the host copy again. To see that it is not, the reader's host copy is scribbled
  // on (through the const reference: the object itself is not const) after a read: on the
  // GPU the device state, not the scribble, is what steps on. (On the CPU the host copy is
  // the state, so there is nothing to scribble on.)
  const ParticleSystem start = test::random_system(300, 12);
  Simulation reader(start, direct(device()), IntegratorOptions{});
  Simulation never(start, direct(device()), IntegratorOptions{});
  for (int s = 0; s < 20; ++s) {
    reader.step(kDt);
    never.step(kDt);
    const ParticleSystem& seen = reader.particles();
    ASSERT_EQ(seen.time, never.time());
    if (on_gpu() && s == 10) {
      auto& scribble = const_cast<ParticleSystem&>(seen);
      scribble.vx[0] += 1.0;
      scribble.x[1] = 0.5;
    }
    std::vector<float> xyz;
    reader.positions(xyz);
  }
  EXPECT_EQ(reader.steps_done(), never.steps_done());
  expect_same_state(reader.particles(), never.particles(), "read after every step vs never read");
}

TEST_P(HostCopy, PositionsAreTheParticlesPositionsAsFloat) {
  Simulation sim(test::random_system(1001, 13), direct(device()), IntegratorOptions{});
  auto expect_positions = [&](const std::string& when) {
    std::vector<float> xyz;
    sim.positions(xyz);  // before particles(): on the GPU from the device when stale
    const ParticleSystem& ps = sim.particles();
    ASSERT_EQ(xyz.size(), 3 * ps.size()) << when;
    for (std::size_t i = 0; i < ps.size(); ++i) {
      ASSERT_EQ(xyz[3 * i], float(ps.x[i])) << when << " body " << i;
      ASSERT_EQ(xyz[3 * i + 1], float(ps.y[i])) << when << " body " << i;
      ASSERT_EQ(xyz[3 * i + 2], float(ps.z[i])) << when << " body " << i;
    }
  };
  expect_positions("at the start");
  for (int s = 0; s < 5; ++s) sim.step(kDt);
  expect_positions("after steps");
  expect_positions("read again");
  sim.edit_particles().x[3] = 0.125;
  expect_positions("after an edit");
  std::vector<float> xyz;
  sim.positions(xyz);
  EXPECT_EQ(xyz[9], 0.125f);
  sim.step(kDt);
  expect_positions("after an edit and a step");
}

// ---- The integrators' arithmetic ------------------------------------------------------------

NBODY_BACKEND_TEST_SUITE(Stepping);

TEST_P(Stepping, SameBitsAsTheIntegratorDrivingTheSolver) {
  // Simulation's step is the integrator's float64 arithmetic (physics/integration.hpp) around
  // the backend's force evaluation: make_integrator() stepping a ParticleSystem with the
  // solver of the same options (on the GPU the per-call solver: the same kernels on the same
  // inputs) gives the same bits. On the GPU this is the resident stepper against the CPU
  // integrators.
  for (const IntegratorScheme scheme : test::kAllSchemes) {
    for (double damping : {1.0, 0.95}) {
      for (Precision p : {Precision::Float, Precision::Double}) {
        const std::string what = std::string(to_string(scheme)) + " damping " +
                                 std::to_string(damping) + " " + std::string(to_string(p));
        SCOPED_TRACE(what);
        ParticleSystem reference = test::random_system(500, 99);
        const GravityOptions g = direct(device(), p);
        const IntegratorOptions i = integrator_options(scheme, damping);
        auto solver = make_gravity_solver(g);
        auto integrator = make_integrator(i);
        Simulation sim(reference, g, i);
        for (int s = 0; s < 50; ++s) {
          integrator->step(reference, *solver, kDt);
          sim.step(kDt);
        }
        expect_same_state(sim.particles(), reference, what);
      }
    }
  }
}

}  // namespace
}  // namespace nbody
