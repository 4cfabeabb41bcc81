// Collisions with hierarchical (block) time steps (issue #21), on every backend. Between
// substeps only the bodies of the deepest bin are at the middle of their step, where the
// leapfrog's velocities are centred in time (physics/timestep.hpp, the contacts). Bounces
// are therefore resolved only between two such bodies (the gate), and bodies found in
// contact go to that bin; merges go at once, with every velocity moved to the stage's time.
// The step size of block steps is set by eta as much as by dt: dt_i = sqrt(2 eta |phi_i|) /
// |a_i| without softening, so halving dt and quartering eta halves every body's step (the
// same bins, each half as long). The order is measured that way.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "backend_test.hpp"
#include "nbody/diagnostics.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/simulation.hpp"
#include "unit/collision_test_helpers.hpp"

namespace nbody {
namespace {

using test::collision_options;
using test::falling_pair;
using test::gravity_options;
using test::simulation_options;

NBODY_BACKEND_TEST_SUITE(CollisionsInBlockSteps);

struct PairRun {
  double drift = 0;    // |E1 - E0| / |E0|
  double balance = 0;  // |E1 + lost - E0| / |E0|
  std::uint64_t contacts = 0;
  std::uint64_t substeps = 0;
  ParticleSystem end;
};

PairRun run_pair(Device device, CollisionModel model, double restitution, double t_end, double dt,
                 double eta) {
  IntegratorOptions adaptive;
  adaptive.timestep = TimestepMode::Adaptive;
  adaptive.eta = eta;
  Simulation sim(falling_pair(), simulation_options(gravity_options(device), adaptive,
                                                    collision_options(model, restitution)));
  const double e0 = sim.diagnostics(EnergyMethod::Exact).total_energy;
  const auto steps = static_cast<int>(std::lround(t_end / dt));
  for (int s = 0; s < steps; ++s) sim.step(dt);
  const double e1 = sim.diagnostics(EnergyMethod::Exact).total_energy;
  const CollisionTotals& t = sim.collision_totals();
  return {std::abs((e1 - e0) / e0), std::abs((e1 + t.energy_lost - e0) / e0), t.contacts,
          sim.timestep_stats().substeps, sim.particles()};
}

/// (dt, eta) with every step halved from one to the next.
constexpr double kSteps[][2] = {{0.01, 5e-4}, {0.005, 1.25e-4}, {0.0025, 3.125e-5}};

TEST_P(CollisionsInBlockSteps, ElasticBounceIsSecondOrderInTheStep) {
  // Before the gate, a bounce between bins cost |dE/E| ~ 1e-2 at every step (6.0e-2, 2.8e-2,
  // 2.8e-2 here): the longer-step body was resolved a quarter into its step, where its
  // velocity is off by a dt / 2.
  std::vector<double> drifts;
  // The two bodies want steps 1.4x apart (masses 1 and 0.5): they meet in different bins.
  for (const auto& [dt, eta] : kSteps) {
    const PairRun r = run_pair(device(), CollisionModel::Bounce, 1.0, 10.0, dt, eta);
    std::printf(
        "[ measured ] %s elastic pair, block steps dt %g eta %g: |dE/E| %.3e, %llu "
        "substeps, %llu contacts\n",
        std::string(to_string(device())).c_str(), dt, eta, r.drift,
        static_cast<unsigned long long>(r.substeps), static_cast<unsigned long long>(r.contacts));
    EXPECT_GE(r.contacts, 5u);               // it bounces, again and again
    EXPECT_GT(r.substeps, 1.2 * 10.0 / dt);  // and the bins are used
    EXPECT_EQ(r.balance, r.drift);           // nothing booked: elastic
    drifts.push_back(r.drift);
  }
  EXPECT_LT(drifts[1], 3e-3);
  EXPECT_GT(drifts[0] / drifts[1], 3.5);
  EXPECT_GT(drifts[1] / drifts[2], 3.5);
}

TEST_P(CollisionsInBlockSteps, MergeBooksItsEnergyAtSecondOrder) {
  // Without the velocities moved to the stage's time: 3.2e-2, 1.5e-2, 7.1e-3 (first order).
  std::vector<double> balances;
  for (const auto& [dt, eta] : kSteps) {
    const PairRun r = run_pair(device(), CollisionModel::Merge, 1.0, 3.0, dt, eta);
    std::printf("[ measured ] %s merging pair, block steps dt %g eta %g: |d(E + lost)/E| %.3e\n",
                std::string(to_string(device())).c_str(), dt, eta, r.balance);
    EXPECT_EQ(r.end.size(), 1u);
    EXPECT_GT(r.drift, 0.5);  // the pair's binding energy went into the books
    balances.push_back(r.balance);
  }
  EXPECT_GT(balances[0] / balances[1], 3.5);
  EXPECT_GT(balances[1] / balances[2], 3.5);
}

TEST_P(CollisionsInBlockSteps, InelasticBounceBooksItsLoss) {
  std::vector<double> balances;
  for (const auto& [dt, eta] : kSteps) {
    const PairRun r = run_pair(device(), CollisionModel::Bounce, 0.5, 5.0, dt, eta);
    std::printf(
        "[ measured ] %s inelastic pair (e = 0.5), block steps dt %g eta %g: |dE/E| "
        "%.3e, |d(E + lost)/E| %.3e\n",
        std::string(to_string(device())).c_str(), dt, eta, r.drift, r.balance);
    EXPECT_GT(r.drift, 1e-2);  // energy left the bodies ...
    balances.push_back(r.balance);
  }
  EXPECT_GT(balances[0] / balances[1], 3.0);  // ... and the books say how much
  EXPECT_GT(balances[1] / balances[2], 3.0);
}

TEST_P(CollisionsInBlockSteps, MergingCloudClosesTheBooks) {
  // A cold cloud of 1000 bodies collapsing and merging to one, eps = 0.001: the collapse
  // spreads the bins. (`nbody run --timestep adaptive` on such clouds: |d(E + lost)/E|
  // 2e-5 to 6e-4 before the velocities were moved to the stage's time, 1e-5 to 1.2e-4
  // after; one cloud is one chaotic sample, so the test asks for the 1e-3.)
  ModelOptions m;
  m.model = "uniform-sphere";
  m.n = 1000;
  m.seed = 3;
  m.radius = 0.025;
  IntegratorOptions adaptive;
  adaptive.timestep = TimestepMode::Adaptive;
  Simulation sim(generate(m),
                 simulation_options(
                     gravity_options(device(), GravityAlgorithm::Direct, Precision::Auto, 0.001),
                     adaptive, collision_options(CollisionModel::Merge)));
  const double e0 = sim.diagnostics(EnergyMethod::Exact).total_energy;
  for (int s = 0; s < 375; ++s) sim.step(4e-3);
  const std::uint64_t substeps = sim.timestep_stats().substeps;  // since the start
  const double e1 = sim.diagnostics(EnergyMethod::Exact).total_energy;
  const CollisionTotals& t = sim.collision_totals();
  const double balance = std::abs((e1 + t.energy_lost - e0) / e0);
  std::printf(
      "[ measured ] %s merging cloud, block steps: %llu merges, %llu substeps in 375 "
      "steps, |d(E + lost)/E| %.3e\n",
      std::string(to_string(device())).c_str(), static_cast<unsigned long long>(t.merges),
      static_cast<unsigned long long>(substeps), balance);
  EXPECT_GT(t.merges, 900u);
  EXPECT_GT(substeps, 450u);  // the bins were used
  EXPECT_LT(balance, 1e-3);
}

NBODY_GPU_TEST_SUITE(CollisionsInBlockStepsCpuVsGpu);

TEST_P(CollisionsInBlockStepsCpuVsGpu, GpuFollowsTheCpu) {
  for (const CollisionModel model : {CollisionModel::Bounce, CollisionModel::Merge}) {
    const PairRun cpu = run_pair(Device::Cpu, model, 1.0, 10.0, 0.005, 1.25e-4);
    const PairRun gpu = run_pair(Device::Gpu, model, 1.0, 10.0, 0.005, 1.25e-4);
    ASSERT_EQ(gpu.end.size(), cpu.end.size());
    EXPECT_EQ(gpu.contacts, cpu.contacts);
    EXPECT_EQ(gpu.substeps, cpu.substeps);
    double worst = 0;
    for (std::size_t i = 0; i < cpu.end.size(); ++i) {
      worst = std::max({worst, std::abs(gpu.end.x[i] - cpu.end.x[i]),
                        std::abs(gpu.end.y[i] - cpu.end.y[i]),
                        std::abs(gpu.end.vx[i] - cpu.end.vx[i])});
    }
    std::printf("[ measured ] %s, block steps: GPU - CPU at t = 10: %.3e, |dE/E| %.3e and %.3e\n",
                std::string(to_string(model)).c_str(), worst, gpu.drift, cpu.drift);
    EXPECT_LT(worst, 1e-9);
    EXPECT_NEAR(gpu.balance, cpu.balance, 1e-9);
  }
}

}  // namespace
}  // namespace nbody
