// The jerk criterion (--timestep-criterion jerk): dt_i = eta |a_i| / |da_i/dt|, with the jerk
// summed over every pair (physics/pair_force.hpp's accumulate_pair_jerk; block_steps.cpp); and
// a star with five planets under the dynamical and jerk criteria, one run helper.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "nbody/error.hpp"
#include "nbody/integrator.hpp"
#include "nbody/physics/pair_force.hpp"
#include "nbody/physics/timestep.hpp"
#include "nbody/simulation.hpp"
#include "test_helpers.hpp"

namespace nbody {
namespace {

TEST(JerkStep, CircularOrbitStepIsEtaOverItsFrequency) {
  // A body at r from a point mass M on a circular orbit: |da/dt| = omega |a|, omega = v / r.
  const double M = 2.0, r = 0.7, eta = 0.05;
  const double v = std::sqrt(M / r), omega = v / r;
  double ax = 0, ay = 0, az = 0, jx = 0, jy = 0, jz = 0;
  // The body at (r, 0, 0) moving along +y; the mass at the origin at rest.
  accumulate_pair_acceleration(-r, 0.0, 0.0, M, 0.0, ax, ay, az);
  accumulate_pair_jerk(-r, 0.0, 0.0, 0.0, -v, 0.0, M, 0.0, jx, jy, jz);
  EXPECT_NEAR(wanted_step_jerk(eta, ax, ay, az, jx, jy, jz), eta / omega, 1e-14 * eta / omega);
  EXPECT_TRUE(std::isinf(wanted_step_jerk(eta, ax, ay, az, 0, 0, 0)));
  // The body itself (no separation, no softening) adds nothing.
  accumulate_pair_jerk(0.0, 0.0, 0.0, 1.0, 2.0, 3.0, M, 0.0, jx, jy, jz);
  EXPECT_NEAR(wanted_step_jerk(eta, ax, ay, az, jx, jy, jz), eta / omega, 1e-14 * eta / omega);
}

TEST(JerkStep, PairJerkIsTheTimeDerivativeOfThePairForce) {
  // Central differences of the softened and unsoftened pair force along the relative motion.
  const double dx = 0.3, dy = -0.45, dz = 0.2, dvx = 0.7, dvy = 0.1, dvz = -0.4, m = 1.3;
  for (const double eps : {0.0, 0.05}) {
    double jx = 0, jy = 0, jz = 0;
    accumulate_pair_jerk(dx, dy, dz, dvx, dvy, dvz, m, eps * eps, jx, jy, jz);
    const double h = 1e-5;
    double p[3] = {0, 0, 0}, q[3] = {0, 0, 0};
    accumulate_pair_acceleration(dx + h * dvx, dy + h * dvy, dz + h * dvz, m, eps * eps, p[0], p[1],
                                 p[2]);
    accumulate_pair_acceleration(dx - h * dvx, dy - h * dvy, dz - h * dvz, m, eps * eps, q[0], q[1],
                                 q[2]);
    const double j[3] = {jx, jy, jz};
    for (int c = 0; c < 3; ++c)
      EXPECT_NEAR(j[c], (p[c] - q[c]) / (2 * h), 1e-7 * std::abs(j[c]) + 1e-9) << "eps " << eps;
  }
}

struct PlanetRun {
  std::vector<std::uint64_t> bins;
  std::uint64_t evaluations = 0;
  double drift = 0;
};

PlanetRun run_planets(TimestepCriterion criterion, double eta) {
  SimulationOptions o;
  o.gravity.algorithm = GravityAlgorithm::Direct;
  o.gravity.softening = 0;
  o.integrator.timestep = TimestepMode::Adaptive;
  o.integrator.timestep_criterion = criterion;
  o.integrator.eta = eta;
  Simulation sim(test::star_and_planets(), o);
  const double e0 = sim.diagnostics(EnergyMethod::Exact).total_energy;
  for (int s = 0; s < 20; ++s) sim.step(0.5);
  PlanetRun r;
  r.bins = sim.timestep_stats().bins;
  r.evaluations = sim.timestep_stats().force_evaluations;
  r.drift = std::abs(sim.diagnostics(EnergyMethod::Exact).total_energy / e0 - 1);
  return r;
}

TEST(DynamicalStep, PlanetsTakeTheirOrbitsSteps) {
  // Each planet's step is eta P / (2 pi) from its orbit (|a|^2 / |phi| of a Kepler orbit), so
  // the bins spread over ~5 levels.
  const PlanetRun dyn = run_planets(TimestepCriterion::Dynamical, 0.02);
  // The inner planet: 0.02 / (2 pi) of P = 1 is 0.0032, bin 8 of 0.5 (0.00195).
  EXPECT_EQ(dyn.bins.size(), 9u);
  EXPECT_EQ(dyn.bins.back(), 1u);
  const int populated =
      int(std::count_if(dyn.bins.begin(), dyn.bins.end(), [](auto c) { return c > 0; }));
  EXPECT_GE(populated, 5);
  // The star's step comes from its own orbit about the system (long: its acceleration and
  // potential are the planets' small ones), so its reflex motion is followed coarsely, as
  // with the acceleration rule: the error is that of the star's step, not the planets'.
  std::printf("planets, dynamical criterion: %d bins populated, |dE/E| %.3e (%llu evaluations)\n",
              populated, dyn.drift, (unsigned long long)dyn.evaluations);
  EXPECT_LT(dyn.drift, 2e-5);
}

TEST(JerkStep, TheStarFollowsItsInnerPlanet) {
  // The star's |a| and |phi| are its planets' small pulls, so the acceleration and dynamical
  // criteria give it a long step, and its reflex motion on the inner planet's period is
  // followed coarsely. Its jerk turns with the inner planet: |a| / |da/dt| is that planet's
  // 1 / omega, so the star shares the inner planet's bin, and the energy error is the
  // planets' own.
  const PlanetRun jerk = run_planets(TimestepCriterion::Jerk, 0.02);
  const PlanetRun dyn = run_planets(TimestepCriterion::Dynamical, 0.02);
  // The inner planet: 0.02 / (2 pi) of P = 1 is 0.0032, bin 8 of 0.5 (0.00195): it and the
  // star.
  ASSERT_EQ(jerk.bins.size(), 9u);
  EXPECT_EQ(jerk.bins.back(), 2u);
  std::printf(
      "[ measured ] planets, eta 0.02: jerk |dE/E| %.3e (%llu evaluations), dynamical %.3e "
      "(%llu)\n",
      jerk.drift, (unsigned long long)jerk.evaluations, dyn.drift,
      (unsigned long long)dyn.evaluations);
  EXPECT_LT(jerk.drift, 0.1 * dyn.drift);
}

TEST(JerkStep, CpuDirectSumOnly) {
  // The jerk is summed over every pair on the host: the GPU and the tree are refused, by name.
  for (const bool gpu : {true, false}) {
    SimulationOptions o;
    o.gravity.algorithm = gpu ? GravityAlgorithm::Direct : GravityAlgorithm::Tree;
    o.gravity.device = gpu ? Device::Gpu : Device::Cpu;
    o.integrator.timestep = TimestepMode::Adaptive;
    o.integrator.timestep_criterion = TimestepCriterion::Jerk;
    try {
      Simulation sim(test::star_and_planets(), o);
      ADD_FAILURE() << (gpu ? "the GPU" : "the tree") << " was accepted";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("--timestep-criterion"), std::string::npos) << what;
      EXPECT_NE(what.find(gpu ? "--device cpu" : "--gravity direct"), std::string::npos) << what;
    }
  }
  EXPECT_EQ(parse_timestep_criterion("jerk"), TimestepCriterion::Jerk);
  EXPECT_EQ(to_string(TimestepCriterion::Jerk), "jerk");
}

}  // namespace
}  // namespace nbody
