// The momentum-conserving hierarchical scheme (--timestep hierarchical, hold_steps.hpp):
// the leapfrog bit for bit with every body in bin 0; total momentum kept to rounding where
// the block steps of --timestep adaptive lose it to the integration error; energy as
// accurate as the block steps'; the refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "nbody/error.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/simulation.hpp"

namespace nbody {
namespace {

SimulationOptions options(TimestepMode mode, double eta) {
  SimulationOptions o;
  o.gravity.softening = 0.01;
  o.gravity.precision = Precision::Double;
  o.integrator.timestep = mode;
  o.integrator.eta = eta;
  return o;
}

/// |P| over sum m |v|: the momentum left, relative to what could cancel.
double momentum_left(const ParticleSystem& ps) {
  double px = 0, py = 0, pz = 0, scale = 0;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    px += ps.mass[i] * ps.vx[i];
    py += ps.mass[i] * ps.vy[i];
    pz += ps.mass[i] * ps.vz[i];
    scale += ps.mass[i] * std::hypot(ps.vx[i], ps.vy[i], ps.vz[i]);
  }
  return std::hypot(px, py, pz) / scale;
}

TEST(HoldSteps, EveryBodyInBinZeroIsTheLeapfrog) {
  const ParticleSystem start = generate({.model = "plummer", .n = 300, .seed = 9});
  Simulation hold(start, options(TimestepMode::Hierarchical, 1e6));
  Simulation fixed(start, options(TimestepMode::Fixed, 1e6));
  for (int s = 0; s < 20; ++s) {
    hold.step(0.01);
    fixed.step(0.01);
  }
  ASSERT_EQ(hold.timestep_stats().bins.size(), 1u);
  for (std::size_t i = 0; i < start.size(); ++i) {
    ASSERT_EQ(hold.particles().x[i], fixed.particles().x[i]) << i;
    ASSERT_EQ(hold.particles().vz[i], fixed.particles().vz[i]) << i;
  }
}

TEST(HoldSteps, MomentumKeptToRoundingWhereBlockStepsLoseIt) {
  const ParticleSystem start = generate({.model = "plummer", .n = 500, .seed = 9});
  Simulation hold(start, options(TimestepMode::Hierarchical, 0.002));
  Simulation block(start, options(TimestepMode::Adaptive, 0.002));
  const double p0 = momentum_left(start);
  for (int s = 0; s < 10; ++s) {
    hold.step(0.05);
    block.step(0.05);
  }
  EXPECT_GE(hold.timestep_stats().bins.size(), 3u) << "the bins must differ for a real test";
  const double hold_drift = std::abs(momentum_left(hold.particles()) - p0);
  const double block_drift = std::abs(momentum_left(block.particles()) - p0);
  EXPECT_LT(hold_drift, 1e-14);
  EXPECT_GT(block_drift, 100 * hold_drift + 1e-13);
}

TEST(HoldSteps, EnergyAsTheBlockSteps) {
  const ParticleSystem start = generate({.model = "plummer", .n = 400, .seed = 9});
  Simulation hold(start, options(TimestepMode::Hierarchical, 0.005));
  Simulation block(start, options(TimestepMode::Adaptive, 0.005));
  const double e0 = hold.diagnostics().total_energy;
  for (int s = 0; s < 16; ++s) {
    hold.step(1.0 / 16);
    block.step(1.0 / 16);
  }
  const double hold_error = std::abs(hold.diagnostics().total_energy / e0 - 1);
  const double block_error = std::abs(block.diagnostics().total_energy / e0 - 1);
  EXPECT_LT(hold_error, 1e-3) << "block steps: " << block_error;
  EXPECT_LT(hold_error, 3 * block_error + 1e-6) << "block steps: " << block_error;
}

TEST(HoldSteps, Refusals) {
  const ParticleSystem start = generate({.model = "plummer", .n = 50, .seed = 9});
  auto message = [&](SimulationOptions o, ParticleSystem ps = {}) -> std::string {
    try {
      Simulation sim(ps.empty() ? start : ps, o);
      sim.step(0.01);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  SimulationOptions o = options(TimestepMode::Hierarchical, 0.01);
  o.collisions.model = CollisionModel::Merge;
  EXPECT_NE(message(o).find("--collisions"), std::string::npos) << message(o);
  o = options(TimestepMode::Hierarchical, 0.01);
  o.integrator.timestep_criterion = TimestepCriterion::Dynamical;
  EXPECT_NE(message(o).find("--timestep-criterion"), std::string::npos) << message(o);
  o = options(TimestepMode::Hierarchical, 0.01);
  o.integrator.scheme = IntegratorScheme::Euler;
  EXPECT_NE(message(o).find("needs --integrator leapfrog"), std::string::npos) << message(o);
  o = options(TimestepMode::Hierarchical, 0.01);
  o.gravity.device = Device::Gpu;
  EXPECT_NE(message(o).find("--timestep: runs on the CPU"), std::string::npos) << message(o);
  ParticleSystem with_tests = start;
  with_tests.n_active = 10;
  EXPECT_NE(message(options(TimestepMode::Hierarchical, 0.01), with_tests).find("test particles"),
            std::string::npos);
}

}  // namespace
}  // namespace nbody
