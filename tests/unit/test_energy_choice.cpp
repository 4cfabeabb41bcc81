// --energy tree (a float64 quadrupole tree) against the exact pair sum, and what
// --energy auto picks for a run's plan: the most accurate method that costs little.
#include <gtest/gtest.h>

#include <cmath>

#include "nbody/diagnostics.hpp"
#include "nbody/energy_choice.hpp"
#include "nbody/initial_conditions.hpp"

namespace nbody {
namespace {

ParticleSystem plummer(std::size_t n) {
  ModelOptions m;
  m.model = "plummer";
  m.n = n;
  m.seed = 3;
  return generate(m);
}

TEST(TreeEnergy, WithinAboutAMillionthOfTheExactSumAndOfItsChange) {
  ParticleSystem ps = plummer(4000);
  const double eps = 0.01;
  const double t = kinetic_energy(ps);
  const double w0 = potential_energy(ps, 1.0, eps);
  const double tree0 = tree_potential_energy(ps, 1.0, eps, 0);
  EXPECT_LT(std::abs(tree0 - w0), 2e-6 * std::abs(t + w0));
  // The change of W along the motion: what a drift measures.
  for (std::size_t i = 0; i < ps.size(); ++i) {
    ps.x[i] += 0.2 * ps.vx[i];
    ps.y[i] += 0.2 * ps.vy[i];
    ps.z[i] += 0.2 * ps.vz[i];
  }
  const double w1 = potential_energy(ps, 1.0, eps);
  const double tree1 = tree_potential_energy(ps, 1.0, eps, 0);
  EXPECT_GT(std::abs(w1 - w0), 1e-3 * std::abs(t + w0));  // the motion changed W
  EXPECT_LT(std::abs((tree1 - tree0) - (w1 - w0)), 2e-6 * std::abs(t + w0));
  // a looser tree errs more: the tight angle is what buys the accuracy
  const double loose = tree_potential_energy(ps, 1.0, eps, 0, 0.8);
  EXPECT_GT(std::abs(loose - w1), std::abs(tree1 - w1));
}

TEST(TreeEnergy, ScalesWithGAndLeavesTheBodiesAlone) {
  ParticleSystem ps = plummer(500);
  const ParticleSystem before = ps;
  const double w = tree_potential_energy(ps, 2.0, 0.05, 1);
  EXPECT_NEAR(w, 2.0 * tree_potential_energy(ps, 1.0, 0.05, 1), 1e-12 * std::abs(w));
  EXPECT_EQ(ps.x, before.x);
  EXPECT_EQ(ps.ax, before.ax);
  EXPECT_EQ(tree_potential_energy(ps, 0.0, 0.05, 1), 0.0);
}

EnergyPlan tree_plan(std::size_t n, std::uint64_t steps, std::uint64_t evaluations = 2) {
  EnergyPlan p;
  p.algorithm = GravityAlgorithm::Tree;
  p.precision = Precision::Float;
  p.n = n;
  p.steps = steps;
  p.evaluations = evaluations;
  return p;
}

TEST(EnergyChoice, AutoTakesTheMostAccurateMethodThatFitsTheBudget) {
  // a short tree run: nothing accurate fits, the solver's potentials, with their error
  EnergyChoice c = choose_energy_method(EnergyMethod::Auto, tree_plan(60000, 5));
  EXPECT_EQ(c.method, EnergyMethod::Solver);
  EXPECT_GE(c.drift_error, 1e-5);
  EXPECT_NE(c.reason.find("--energy tree"), std::string::npos) << c.reason;
  // a long one: the float64 tree, within the budget
  c = choose_energy_method(EnergyMethod::Auto, tree_plan(60000, 2000, 12));
  EXPECT_EQ(c.method, EnergyMethod::Tree);
  EXPECT_LE(c.cost_share, kEnergyCostBudget);
  EXPECT_LE(c.drift_error, 1e-6);
  // small and long: the exact sum
  c = choose_energy_method(EnergyMethod::Auto, tree_plan(2000, 1000));
  EXPECT_EQ(c.method, EnergyMethod::Exact);
  // more evaluations (--every 1) push it back to the solver
  c = choose_energy_method(EnergyMethod::Auto, tree_plan(60000, 2000, 2002));
  EXPECT_EQ(c.method, EnergyMethod::Solver);
}

TEST(EnergyChoice, DirectSumTakesItsOwnExactPotentialsAndAskedMethodsStay) {
  EnergyPlan p;
  p.n = 100000;
  p.steps = 1;
  EnergyChoice c = choose_energy_method(EnergyMethod::Auto, p);
  EXPECT_EQ(c.method, EnergyMethod::Solver);
  EXPECT_LE(c.drift_error, 1e-12);
  c = choose_energy_method(EnergyMethod::Exact, tree_plan(1000000, 1));
  EXPECT_EQ(c.method, EnergyMethod::Exact);
  EXPECT_GT(c.cost_share, 1.0);  // and says what it costs
  p.algorithm = GravityAlgorithm::None;
  EXPECT_EQ(choose_energy_method(EnergyMethod::Auto, p).method, EnergyMethod::Solver);
}

TEST(EnergyChoice, GpuTreeRunsTakeTheDeviceTreeWhenItFits) {
  EnergyPlan p = tree_plan(1000000, 100000);  // the exact sum fits over so many steps
  p.device = Device::Gpu;
  EXPECT_EQ(choose_energy_method(EnergyMethod::Auto, p).method, EnergyMethod::Exact);
  p = tree_plan(1000000, 10000);  // it does not over fewer; the device tree does
  p.device = Device::Gpu;
  EXPECT_EQ(choose_energy_method(EnergyMethod::Auto, p).method, EnergyMethod::Tree);
  p = tree_plan(1000000, 10);  // a short run: not even the device tree fits
  p.device = Device::Gpu;
  const EnergyChoice c = choose_energy_method(EnergyMethod::Auto, p);
  EXPECT_EQ(c.method, EnergyMethod::Solver);
  EXPECT_NE(c.reason.find("--energy tree"), std::string::npos) << c.reason;
}

}  // namespace
}  // namespace nbody
