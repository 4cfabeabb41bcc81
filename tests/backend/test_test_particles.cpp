// Test particles (REBOUND's N_active and testparticle_type) on every backend, through
// Simulation: the test particles feel the active bodies alone, never each other; with type
// 0 the active bodies move exactly as without them (bit for bit), with type 1 they also
// feel the test particles; the forces are checked against a long double sum.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <random>
#include <string>
#include <vector>

#include "backend_test.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/simulation.hpp"

namespace nbody {
namespace {

using test::gravity_options;
using test::simulation_options;
using test::tree_options;

NBODY_BACKEND_TEST_SUITE(TestParticles);

/// A cluster of `active` bodies of mass 1/active in a unit ball and `tests` test particles
/// of mass `test_mass` (a multiple of the actives' when > 0, to see type 0 ignore it)
/// around them.
ParticleSystem cluster_with_tests(std::size_t active, std::size_t tests, double test_mass) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  ParticleSystem ps;
  for (std::size_t i = 0; i < active + tests; ++i) {
    const double scale = i < active ? 1.0 : 2.0;
    ps.add(Body{{scale * u(rng), scale * u(rng), scale * u(rng)},
                {0.1 * u(rng), 0.1 * u(rng), 0.1 * u(rng)},
                i < active ? 1.0 / double(active) : test_mass,
                0,
                0});
  }
  ps.n_active = active;
  return ps;
}

struct Reference {
  std::vector<double> ax, ay, az, phi;
};

/// Body i's acceleration and potential in long double from the sources j in [from, to).
Reference reference(const ParticleSystem& ps, double eps) {
  const std::size_t n = ps.size(), na = ps.active_count();
  Reference r{std::vector<double>(n), std::vector<double>(n), std::vector<double>(n),
              std::vector<double>(n)};
  for (std::size_t i = 0; i < n; ++i) {
    // Test particles feel the active bodies; active ones also the test particles (type 1).
    const std::size_t last = i < na && ps.test_particle_type == 1 ? n : na;
    long double ax = 0, ay = 0, az = 0, phi = 0;
    for (std::size_t j = 0; j < last; ++j) {
      if (j == i) continue;
      const long double dx = ps.x[j] - ps.x[i], dy = ps.y[j] - ps.y[i], dz = ps.z[j] - ps.z[i];
      const long double r2 = dx * dx + dy * dy + dz * dz + (long double)eps * eps;
      const long double inv = 1 / std::sqrt(r2);
      const long double s = ps.mass[j] * inv * inv * inv;
      ax += s * dx;
      ay += s * dy;
      az += s * dz;
      phi -= ps.mass[j] * inv;
    }
    r.ax[i] = double(ax);
    r.ay[i] = double(ay);
    r.az[i] = double(az);
    r.phi[i] = double(phi);
  }
  return r;
}

/// The largest |a - a_ref| / |a_ref| and |phi - phi_ref| / |phi_ref| over the bodies.
double worst_error(const ParticleSystem& ps, const Reference& r) {
  double worst = 0;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    const double da = std::hypot(ps.ax[i] - r.ax[i], ps.ay[i] - r.ay[i], ps.az[i] - r.az[i]);
    worst = std::max(worst, da / std::hypot(r.ax[i], r.ay[i], r.az[i]));
    worst = std::max(worst, std::abs(ps.potential[i] - r.phi[i]) / std::abs(r.phi[i]));
  }
  return worst;
}

TEST_P(TestParticles, DirectSumForcesFromTheActiveBodiesOnly) {
  for (const int type : {0, 1}) {
    ParticleSystem start = cluster_with_tests(70, 300, type == 0 ? 5.0 : 1e-3);
    start.test_particle_type = type;
    const double eps = 0.01;
    Simulation sim(start,
                   simulation_options(device(), GravityAlgorithm::Direct, Precision::Double, eps));
    sim.evaluate_forces(true);
    const double err = worst_error(sim.particles(), reference(start, eps));
    EXPECT_LT(err, 1e-12) << "type " << type;
    EXPECT_EQ(sim.particles().active_count(), 70u);
    EXPECT_EQ(sim.particles().test_particle_type, type);
  }
}

TEST_P(TestParticles, TreeForcesFromTheActiveBodiesOnly) {
  ParticleSystem start = cluster_with_tests(3000, 2000, 1.0);
  const double eps = 0.01;
  Simulation sim(start,
                 simulation_options(tree_options(device(), Precision::Auto, 0.3, 3, false, eps)));
  sim.evaluate_forces(true);
  // The test particles by the direct sum of the active bodies (float on the GPU's float tree);
  // the active bodies by the tree of themselves alone (its error at theta 0.3).
  const Reference r = reference(start, eps);
  ParticleSystem tests = sim.particles(), active = sim.particles();
  double worst_test = 0, worst_active = 0;
  for (std::size_t i = 0; i < start.size(); ++i) {
    const double da =
        std::hypot(tests.ax[i] - r.ax[i], tests.ay[i] - r.ay[i], tests.az[i] - r.az[i]) /
        std::hypot(r.ax[i], r.ay[i], r.az[i]);
    (i < 3000 ? worst_active : worst_test) = std::max(i < 3000 ? worst_active : worst_test, da);
  }
  EXPECT_LT(worst_test, on_gpu() ? 1e-4 : 1e-12);  // float on the GPU's tree
  EXPECT_LT(worst_active, 3e-2);
  // The active bodies' forces are a tree run of them alone, bit for bit.
  ParticleSystem alone = start;  // resize keeps the first bodies
  alone.resize(3000);
  alone.n_active = ParticleSystem::kAllActive;
  Simulation solo(alone,
                  simulation_options(tree_options(device(), Precision::Auto, 0.3, 3, false, eps)));
  solo.evaluate_forces(true);
  for (std::size_t i = 0; i < 3000; ++i) {
    ASSERT_EQ(solo.particles().ax[i], sim.particles().ax[i]) << i;
    ASSERT_EQ(solo.particles().az[i], sim.particles().az[i]) << i;
  }
}

/// The Sun, the four giant planets and `tests` massless test particles (the giants model).
ParticleSystem giants_and_dust(std::size_t tests) {
  ModelOptions m;
  m.model = "giants";
  m.n = 5 + tests;
  m.seed = 3;
  ParticleSystem ps = generate(m);
  EXPECT_EQ(ps.active_count(), 5u);
  return ps;
}

TEST_P(TestParticles, PlanetsMoveAsWithoutTheDust) {
  for (const GravityAlgorithm algorithm : {GravityAlgorithm::Direct, GravityAlgorithm::Tree}) {
    const SimulationOptions options = simulation_options(
        algorithm == GravityAlgorithm::Tree ? tree_options(device(), Precision::Double, 0.5)
                                            : gravity_options(device()));
    ParticleSystem with_dust = giants_and_dust(1000), planets_only = giants_and_dust(0);
    // The dust as massless active bodies: the same physics at O(N^2).
    ParticleSystem all_active = with_dust;
    all_active.n_active = ParticleSystem::kAllActive;
    Simulation sim(with_dust, options), alone(planets_only, options), slow(all_active, options);
    for (int s = 0; s < 100; ++s) {
      sim.step(0.05);
      alone.step(0.05);
      if (algorithm == GravityAlgorithm::Direct) slow.step(0.05);
    }
    const ParticleSystem& a = sim.particles();
    const ParticleSystem& b = alone.particles();
    for (std::size_t i = 0; i < 5; ++i) {
      EXPECT_EQ(a.x[i], b.x[i]) << to_string(algorithm) << " body " << i;
      EXPECT_EQ(a.vy[i], b.vy[i]) << to_string(algorithm) << " body " << i;
    }
    EXPECT_EQ(a.active_count(), 5u);
    if (algorithm != GravityAlgorithm::Direct) continue;
    // The dust moves as the massless active bodies do (their sums differ in rounding only).
    const ParticleSystem& c = slow.particles();
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
      worst = std::max(worst, std::hypot(a.x[i] - c.x[i], a.y[i] - c.y[i], a.z[i] - c.z[i]));
    EXPECT_LT(worst, 1e-11);
  }
}

TEST_P(TestParticles, ManyTestParticlesAroundFewBodies) {
  // 20,000 bodies: the GPU's direct sum of N would pair each body once (a plan of its own);
  // the five active bodies take the plan of five.
  const ParticleSystem start = giants_and_dust(20000);
  Simulation sim(start, simulation_options(gravity_options(device())));
  sim.evaluate_forces(true);
  EXPECT_LT(worst_error(sim.particles(), reference(start, 0.0)), 1e-12);
  sim.step(0.01);
  EXPECT_EQ(sim.particles().size(), 20005u);
}

TEST_P(TestParticles, AdaptiveStepsFollowTheActiveBodies) {
  IntegratorOptions adaptive;
  adaptive.timestep = TimestepMode::Adaptive;
  adaptive.eta = 0.01;
  const SimulationOptions options = simulation_options(gravity_options(device()), adaptive);
  ParticleSystem with_dust = giants_and_dust(500), planets_only = giants_and_dust(0);
  // Softening sets the acceleration criterion's length scale.
  SimulationOptions soft = options;
  soft.gravity.softening = 1e-3;
  Simulation sim(with_dust, soft), alone(planets_only, soft);
  for (int s = 0; s < 20; ++s) {
    sim.step(0.5);
    alone.step(0.5);
  }
  // The dust's bins add substeps, which split the planets' drifts: equal to rounding.
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_NEAR(sim.particles().x[i], alone.particles().x[i], 1e-11) << i;
    EXPECT_NEAR(sim.particles().y[i], alone.particles().y[i], 1e-11) << i;
  }
  EXPECT_GT(sim.timestep_stats().substeps, alone.timestep_stats().substeps);
}

TEST_P(TestParticles, AnActiveBodyAbsorbsTheTestParticlesThatHitIt) {
  // A planet (id 9) and two massless test particles (ids 1 and 2, smaller: the survivor is
  // the active body all the same) falling onto it, one from each side, and one far away.
  ParticleSystem ps;
  ps.add(Body{{0, 0, 0}, {0, 0, 0}, 1e-3, 0.1, 9});
  ps.add(Body{{0.15, 0, 0}, {-1, 0, 0}, 0.0, 0.01, 1});
  ps.add(Body{{-0.15, 0, 0}, {1, 0, 0}, 0.0, 0.01, 2});
  ps.add(Body{{5, 0, 0}, {0, 0, 0}, 0.0, 0.01, 3});
  ps.n_active = 1;
  SimulationOptions o = simulation_options(gravity_options(device()));
  o.collisions = test::collision_options(CollisionModel::Merge);
  Simulation sim(ps, o);
  for (int s = 0; s < 20; ++s) sim.step(0.01);
  const ParticleSystem& out = sim.particles();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out.id[0], 9u);
  EXPECT_EQ(out.mass[0], 1e-3);
  EXPECT_EQ(out.active_count(), 1u);
  EXPECT_EQ(out.id[1], 3u);
  EXPECT_TRUE(out.has_test_particles());
}

TEST_P(TestParticles, MasslessPairsCollideAsEqualMasses) {
  // Two massless test particles head on, far from the Sun: a merge leaves one at their
  // midpoint with their mean velocity, a bounce exchanges their velocities; nothing NaN.
  for (const CollisionModel model : {CollisionModel::Merge, CollisionModel::Bounce}) {
    ParticleSystem ps;
    ps.add(Body{{0, 0, 0}, {0, 0, 0}, 1.0, 0.0, 0});
    ps.add(Body{{100, -0.05, 0}, {0, 1, 0}, 0.0, 0.01, 0});
    ps.add(Body{{100, 0.05, 0}, {0, -1, 0}, 0.0, 0.01, 0});
    ps.n_active = 1;
    SimulationOptions o = simulation_options(gravity_options(device()));
    o.collisions = test::collision_options(model);
    Simulation sim(ps, o);
    for (int s = 0; s < 10; ++s) sim.step(0.01);
    const ParticleSystem& out = sim.particles();
    for (std::size_t i = 0; i < out.size(); ++i) {
      ASSERT_TRUE(std::isfinite(out.x[i]) && std::isfinite(out.vy[i])) << i;
    }
    EXPECT_TRUE(std::isfinite(sim.collision_totals().energy_lost));
    if (model == CollisionModel::Merge) {
      ASSERT_EQ(out.size(), 2u);
      EXPECT_NEAR(out.y[1], 0.0, 1e-12);
      EXPECT_NEAR(out.vy[1], 0.0, 1e-6);
      EXPECT_EQ(out.active_count(), 1u);
    } else {
      ASSERT_EQ(out.size(), 3u);
      EXPECT_LT(out.vy[1], -0.9);  // the one that came up goes down again
      EXPECT_GT(out.vy[2], 0.9);
    }
  }
}

}  // namespace
}  // namespace nbody
