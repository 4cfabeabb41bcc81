// Energies at the solver's cost, on every backend (issue #18): the energy methods of a
// Simulation (exact, solver, off, and what auto resolves to), the potentials a force
// evaluation computes on request, and the promise that asking for energies never changes
// a trajectory. Also the solver of no gravity (--gravity none, G = 0).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "backend_test.hpp"
#include "nbody/diagnostics.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/simulation.hpp"
#include "unit/test_helpers.hpp"

namespace nbody {
namespace {

using test::expect_same_state;
using test::simulation_options;
using test::tree_options;

constexpr double kSoftening = 0.05;
constexpr double kDt = 1e-3;

ParticleSystem plummer(std::size_t n, std::uint64_t seed = 7) {
  ModelOptions m;
  m.model = "plummer";
  m.n = n;
  m.seed = seed;
  return generate(m);
}

SimulationOptions with_energy(SimulationOptions o, EnergyMethod energy) {
  o.energy = energy;
  return o;
}

SimulationOptions direct_double(Device device) {
  return simulation_options(device, GravityAlgorithm::Direct, Precision::Double, kSoftening);
}

SimulationOptions tree(Device device, Precision precision = Precision::Float, double theta = 0.5) {
  return simulation_options(tree_options(device, precision, theta, 3, false, kSoftening));
}

NBODY_BACKEND_TEST_SUITE(EnergyMethods);

// The direct sum's own potentials are the exact ones up to the rounding of its kernel.
TEST_P(EnergyMethods, SolverEnergyOfTheDirectSumIsTheExactOne) {
  Simulation sim(plummer(2000), direct_double(device()));
  for (int s = 0; s < 3; ++s) sim.step(kDt);
  const Diagnostics exact = sim.diagnostics(EnergyMethod::Exact);
  const Diagnostics solver = sim.diagnostics(EnergyMethod::Solver);
  EXPECT_EQ(exact.energy_method, EnergyMethod::Exact);
  EXPECT_EQ(solver.energy_method, EnergyMethod::Solver);
  EXPECT_NEAR(solver.potential, exact.potential, 1e-11 * std::abs(exact.potential));
  EXPECT_EQ(solver.kinetic, exact.kinetic);
  EXPECT_NEAR(solver.total_energy, exact.total_energy, 1e-11 * std::abs(exact.potential));
}

// The tree's potential energy is an approximation at the level of its force error (a
// few 1e-4 per body at theta 0.5 in float, largely cancelling in the sum over bodies);
// at theta 0 in double it is the exact sum to rounding.
TEST_P(EnergyMethods, SolverEnergyOfTheTreeIsWithinItsAccuracy) {
  Simulation sim(plummer(4000), tree(device()));
  const Diagnostics exact = sim.diagnostics(EnergyMethod::Exact);
  const Diagnostics solver = sim.diagnostics(EnergyMethod::Solver);
  EXPECT_NEAR(solver.potential, exact.potential, 1e-3 * std::abs(exact.potential));
  EXPECT_NE(solver.potential, exact.potential);  // it is the tree's, not the exact sum

  Simulation exact_tree(plummer(1000), tree(device(), Precision::Double, 0.0));
  const double w = exact_tree.diagnostics(EnergyMethod::Exact).potential;
  EXPECT_NEAR(exact_tree.diagnostics(EnergyMethod::Solver).potential, w, 1e-12 * std::abs(w));
}

// --energy tree: the float64 quadrupole tree's W (the CPU's tree, or a GPU run's own tree
// on the device: device_tree_energy.cuh), to ~1e-6 of |E|, with the moments of the
// stepper's own sums; the trajectory does not notice.
TEST_P(EnergyMethods, TreeEnergyIsTheExactOneToAMillionthOnEveryDevice) {
  Simulation sim(plummer(3000), with_energy(tree(device()), EnergyMethod::Tree));
  EXPECT_EQ(sim.energy_method(), EnergyMethod::Tree);
  for (int s = 0; s < 3; ++s) sim.step(kDt);
  const Diagnostics exact = sim.diagnostics(EnergyMethod::Exact);
  const Diagnostics t = sim.diagnostics();
  EXPECT_EQ(t.energy_method, EnergyMethod::Tree);
  EXPECT_NEAR(t.potential, exact.potential, 2e-6 * std::abs(exact.total_energy));
  EXPECT_NE(t.potential, exact.potential);
  EXPECT_EQ(t.kinetic, exact.kinetic);
  EXPECT_EQ(t.momentum.x, exact.momentum.x);
  EXPECT_DOUBLE_EQ(t.total_energy, t.kinetic + t.potential);
  Simulation twin(plummer(3000), tree(device()));
  for (int s = 0; s < 3; ++s) twin.step(kDt);
  expect_same_state(sim.particles(), twin.particles(), "energies asked for");
}

// The per-body potentials a step computed on request reach the host copy (snapshots).
TEST_P(EnergyMethods, RequestedPotentialsReachTheHostCopy) {
  Simulation sim(plummer(1500), with_energy(direct_double(device()), EnergyMethod::Solver));
  sim.step(kDt);
  EXPECT_FALSE(sim.particles().potentials_valid()) << "not asked for: not computed";
  sim.request_potentials();
  sim.step(kDt);
  const ParticleSystem& ps = sim.particles();
  ASSERT_TRUE(ps.potentials_valid());
  const std::vector<double> exact = body_potentials(ps, 1.0, kSoftening);
  ASSERT_EQ(ps.potential.size(), exact.size());
  for (std::size_t i = 0; i < exact.size(); ++i)
    ASSERT_NEAR(ps.potential[i], exact[i], 1e-11 * std::abs(exact[i])) << "body " << i;
}

// Before any step: evaluate_forces() gives the accelerations and potentials of the
// initial positions (what snapshot 0 writes).
TEST_P(EnergyMethods, EvaluateForcesFillsTheInitialState) {
  ParticleSystem start = plummer(1000);
  Simulation sim(start, direct_double(device()));
  sim.evaluate_forces(true);
  const ParticleSystem& ps = sim.particles();
  ASSERT_TRUE(ps.accelerations_valid());
  ASSERT_TRUE(ps.potentials_valid());
  EXPECT_EQ(ps.x, start.x) << "evaluating forces moves nothing";
  const std::vector<double> exact = body_potentials(ps, 1.0, kSoftening);
  for (std::size_t i = 0; i < exact.size(); ++i)
    ASSERT_NEAR(ps.potential[i], exact[i], 1e-11 * std::abs(exact[i])) << "body " << i;
  double a2 = 0;
  for (std::size_t i = 0; i < ps.size(); ++i) a2 += ps.ax[i] * ps.ax[i];
  EXPECT_GT(a2, 0.0);
}

// Energies asked for at every step (potentials with the forces, or a gravity pass of their
// own) leave the trajectory bit for bit as a run that never asks.
TEST_P(EnergyMethods, AskingForEnergiesNeverChangesTheTrajectory) {
  const ParticleSystem start = plummer(1200);
  Simulation quiet(start, tree(device()));
  Simulation asking(start, with_energy(tree(device()), EnergyMethod::Solver));
  for (int s = 0; s < 6; ++s) {
    quiet.step(kDt);
    if (s % 2 == 0) asking.request_potentials();
    asking.step(kDt);
    (void)asking.diagnostics();  // even steps: computed with the forces; odd: a pass of its own
  }
  expect_same_state(asking.particles(), quiet.particles(), "solver energies every step");
}

TEST_P(EnergyMethods, AutoIsExactForTheDirectSumAndSmallTrees) {
  EXPECT_EQ(Simulation(plummer(100), direct_double(device())).energy_method(), EnergyMethod::Exact);
  EXPECT_EQ(Simulation(plummer(100), tree(device())).energy_method(), EnergyMethod::Exact);
  EXPECT_EQ(
      resolve_energy_method(EnergyMethod::Auto, GravityAlgorithm::Tree, kExactEnergyMaxBodies + 1),
      EnergyMethod::Solver);
  EXPECT_EQ(resolve_energy_method(EnergyMethod::Auto, GravityAlgorithm::Direct, 10'000'000),
            EnergyMethod::Exact);
  EXPECT_EQ(resolve_energy_method(EnergyMethod::Off, GravityAlgorithm::Direct, 10),
            EnergyMethod::Off);
}

TEST_P(EnergyMethods, OffComputesNoEnergy) {
  Simulation sim(plummer(500), with_energy(tree(device()), EnergyMethod::Off));
  sim.step(kDt);
  const Diagnostics d = sim.diagnostics();
  EXPECT_FALSE(d.has_energy());
  EXPECT_EQ(d.potential, 0.0);
  EXPECT_GT(d.kinetic, 0.0);
  EXPECT_NEAR(d.total_mass, 1.0, 1e-12);
}

// ---- No gravity -----------------------------------------------------------------------------

NBODY_BACKEND_TEST_SUITE(NoGravity);

// --gravity none and G = 0: bodies fly straight (zero accelerations, zero potential).
TEST_P(NoGravity, BodiesMoveBallistically) {
  const ParticleSystem start = plummer(300);
  for (const bool g_zero : {false, true}) {
    SimulationOptions o = direct_double(device());
    if (g_zero) {
      o.gravity.G = 0;
    } else {
      o.gravity.algorithm = GravityAlgorithm::None;
    }
    Simulation sim(start, o);
    EXPECT_NE(sim.solver_name().find("none"), std::string::npos) << sim.solver_name();
    EXPECT_EQ(sim.energy_method(), EnergyMethod::Solver);
    for (int s = 0; s < 10; ++s) sim.step(0.1);
    const ParticleSystem& ps = sim.particles();
    for (std::size_t i = 0; i < ps.size(); ++i) {
      ASSERT_EQ(ps.vx[i], start.vx[i]);
      ASSERT_EQ(ps.ax[i], 0.0);
      ASSERT_NEAR(ps.x[i], start.x[i] + start.vx[i] * 1.0, 1e-13 * (1 + std::abs(ps.x[i])));
    }
    const Diagnostics d = sim.diagnostics();
    EXPECT_EQ(d.potential, 0.0);
    EXPECT_EQ(d.total_energy, d.kinetic);
  }
}

}  // namespace
}  // namespace nbody
