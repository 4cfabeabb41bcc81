// Test particles on the CPU below Simulation: the solvers' evaluations of some bodies
// (hierarchical steps) with test particles among them, the shares of several processes,
// the state's bookkeeping (remove, the massless rule, validation). Contacts:
// tests/backend/test_test_particles.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "nbody/error.hpp"
#include "nbody/gravity.hpp"

namespace nbody {
namespace {

ParticleSystem bodies(std::size_t active, std::size_t tests, int type) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  ParticleSystem ps;
  for (std::size_t i = 0; i < active + tests; ++i) {
    ps.add(Body{{u(rng), u(rng), u(rng)}, {0, 0, 0}, i < active ? 0.01 : 0.002, 0, 0});
  }
  ps.n_active = active;
  ps.test_particle_type = type;
  return ps;
}

GravityOptions options(GravityAlgorithm algorithm) {
  GravityOptions g;
  g.algorithm = algorithm;
  g.mac = OpeningCriterion::Geometric;
  g.theta = 0.4;
  g.softening = 0.02;
  return g;
}

TEST(TestParticles, EvaluatingSomeBodiesGivesTheirFullEvaluation) {
  for (const GravityAlgorithm a : {GravityAlgorithm::Direct, GravityAlgorithm::Tree}) {
    for (const int type : {0, 1}) {
      ParticleSystem full = bodies(200, 500, type);
      auto solver = make_gravity_solver(options(a));
      solver->compute_forces(full, true);
      // Some active bodies and some test particles, ascending.
      std::vector<std::uint32_t> listed;
      for (std::uint32_t i = 3; i < 700; i += 7) listed.push_back(i);
      ParticleSystem some = bodies(200, 500, type);
      for (auto* v : {&some.ax, &some.ay, &some.az, &some.potential}) v->assign(700, 42.0);
      solver->compute_forces_active(some, true, listed);
      std::vector<char> is_listed(700, 0);
      for (const std::uint32_t i : listed) is_listed[i] = 1;
      for (std::uint32_t i = 0; i < 700; ++i) {
        if (is_listed[i]) {
          // The direct sum: the same sums, to rounding (a body's place in the kernel's
          // block decides how its lanes take 1/sqrt); the tree groups differently for a
          // subset, so its active bodies agree within its error.
          const double tol = a == GravityAlgorithm::Tree && i < 200 ? 2e-2 : 1e-12;
          EXPECT_NEAR(some.ax[i], full.ax[i], tol * std::abs(full.ax[i]) + 1e-300)
              << to_string(a) << " type " << type << " body " << i;
          EXPECT_NEAR(some.potential[i], full.potential[i], tol * std::abs(full.potential[i]));
        } else {
          EXPECT_EQ(some.ax[i], 42.0) << "body " << i << " was not asked for";
          EXPECT_EQ(some.potential[i], 42.0);
        }
      }
    }
  }
}

TEST(TestParticles, SharesOfSeveralProcessesSumToTheWhole) {
  for (const int type : {0, 1}) {
    ParticleSystem whole = bodies(100, 300, type);
    make_gravity_solver(options(GravityAlgorithm::Direct))->compute_forces(whole, true);
    std::vector<double> sum(400, 0.0), phi(400, 0.0);
    for (int part = 0; part < 3; ++part) {
      ParticleSystem ps = bodies(100, 300, type);
      auto solver = make_gravity_solver(options(GravityAlgorithm::Direct));
      ASSERT_TRUE(solver->set_share(part, 3));
      solver->compute_forces(ps, true);
      for (std::size_t i = 0; i < 400; ++i) sum[i] += ps.ax[i], phi[i] += ps.potential[i];
    }
    for (std::size_t i = 0; i < 400; ++i) {
      // Each body computed by one process as one process computes it: the same bits.
      EXPECT_EQ(sum[i], whole.ax[i]) << i;
      EXPECT_EQ(phi[i], whole.potential[i]) << i;
    }
  }
}

TEST(TestParticles, RemovingBodiesKeepsTheActiveCount) {
  ParticleSystem ps = bodies(4, 6, 0);
  ps.remove({1, 5, 9});
  EXPECT_EQ(ps.size(), 7u);
  EXPECT_EQ(ps.active_count(), 3u);
  ParticleSystem all = bodies(4, 0, 0);
  all.n_active = ParticleSystem::kAllActive;
  all.remove({0});
  EXPECT_FALSE(all.has_test_particles());
}

TEST(TestParticles, MasslessBodiesAfterTheOthersAreTestParticles) {
  ParticleSystem ps = bodies(3, 4, 0);
  ps.n_active = ParticleSystem::kAllActive;
  for (std::size_t i = 3; i < 7; ++i) ps.mass[i] = 0;
  EXPECT_EQ(mark_massless_test_particles(ps), 7u);
  EXPECT_EQ(ps.active_count(), 3u);
  ParticleSystem mixed = bodies(3, 0, 0);
  mixed.n_active = ParticleSystem::kAllActive;
  mixed.mass[1] = 0;
  EXPECT_EQ(mark_massless_test_particles(mixed), 2u);  // body 2 has mass after a massless one
  EXPECT_FALSE(mixed.has_test_particles());
}

TEST(TestParticles, ValidationNamesTheBody) {
  ParticleSystem ps = bodies(2, 2, 0);
  ps.mass[3] = 0;
  EXPECT_NO_THROW(validate_bodies(ps));
  ps.mass[1] = 0;  // an active body without mass
  EXPECT_THROW(validate_bodies(ps), Error);
  ps.mass[1] = 1;
  ps.n_active = 9;
  EXPECT_THROW(validate_bodies(ps), Error);
  ps.n_active = 2;
  ps.test_particle_type = 2;
  try {
    validate_bodies(ps);
    FAIL() << "type 2 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("test_particle_type must be 0 or 1, got 2"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace nbody
