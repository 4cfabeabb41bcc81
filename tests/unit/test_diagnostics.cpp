// Diagnostics against hand-computed and published values.
#include <gtest/gtest.h>

#include <cmath>

#include "nbody/diagnostics.hpp"
#include "nbody/initial_conditions.hpp"
#include "test_helpers.hpp"

namespace nbody {
namespace {

TEST(Diagnostics, TwoBodiesByHand) {
  ParticleSystem ps;
  ps.add({{1, 0, 0}, {0, 2, 0}, 1.0, 0, 0});
  ps.add({{-1, 0, 0}, {0, -1, 0}, 2.0, 0, 0});
  const double eps = 0.5;
  const Diagnostics d = compute_diagnostics(ps, 3.0, eps);
  EXPECT_DOUBLE_EQ(d.total_mass, 3.0);
  EXPECT_DOUBLE_EQ(d.kinetic, 0.5 * 1 * 4 + 0.5 * 2 * 1);
  EXPECT_DOUBLE_EQ(d.potential, -3.0 * 1 * 2 / std::sqrt(4 + eps * eps));
  EXPECT_DOUBLE_EQ(d.total_energy, d.kinetic + d.potential);
  EXPECT_DOUBLE_EQ(d.virial_ratio, 2 * d.kinetic / std::abs(d.potential));
  EXPECT_DOUBLE_EQ(d.momentum.y, 0.0);
  EXPECT_DOUBLE_EQ(d.angular_momentum.z, 1 * (1 * 2) + 2 * (-1 * -1));  // m (x vy - y vx)
  EXPECT_DOUBLE_EQ(d.com.x, (1.0 - 2.0) / 3.0);
  EXPECT_DOUBLE_EQ(d.com_velocity.y, 0.0);
}

TEST(Diagnostics, FigureEightEnergyAndAngularMomentum) {
  ModelOptions m;
  m.model = "figure-eight";
  const Diagnostics d = compute_diagnostics(generate(m), 1.0, 0.0);
  EXPECT_NEAR(d.total_energy, -1.2871419918, 1e-8);
  EXPECT_NEAR(d.angular_momentum.z, 0.0, 1e-8);
}

TEST(Diagnostics, PlummerInHenonUnits) {
  ModelOptions m;
  m.model = "plummer";
  m.n = 10000;
  m.seed = 1;
  const Diagnostics d = compute_diagnostics(generate(m), 1.0, 0.0);
  EXPECT_NEAR(d.total_energy, -0.25, 0.03 * 0.25);
  EXPECT_NEAR(d.virial_ratio, 1.0, 0.03);
  EXPECT_NEAR(d.total_mass, 1.0, 1e-12);
}

TEST(Diagnostics, ParallelPotentialEqualsSerialSum) {
  const ParticleSystem ps = test::random_system(3001, 11);
  double serial = 0;
  for (std::size_t i = 0; i < ps.size(); ++i)
    for (std::size_t j = i + 1; j < ps.size(); ++j)
      serial -= ps.mass[i] * ps.mass[j] /
                std::hypot(ps.x[i] - ps.x[j], ps.y[i] - ps.y[j], ps.z[i] - ps.z[j]);
  EXPECT_NEAR(potential_energy(ps, 1.0, 0.0), serial, 1e-12 * std::abs(serial));
}

TEST(Diagnostics, RelativeDrift) {
  EXPECT_DOUBLE_EQ(relative_energy_drift(-2.0, -1.0), 0.5);
  EXPECT_DOUBLE_EQ(relative_energy_drift(0.0, 1e-3), 1e-3);
}

}  // namespace
}  // namespace nbody
