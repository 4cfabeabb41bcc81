// Collisions on the CPU: the grid search against brute force, the response against analytic
// results and conservation laws. The CPU handler: test_collision_handler.cpp. Collisions in a
// running simulation (conservation, merges, the energy bookkeeping) run on every backend:
// tests/backend/test_collisions.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>

#include "collision_test_helpers.hpp"
#include "nbody/collisions.hpp"
#include "nbody/physics/collision_response.hpp"
#include "test_helpers.hpp"

namespace nbody {
namespace {

using test::brute_force_pairs;
using test::cloud;
using test::radius_for_fraction;
using test::uniform;
using Body3 = CollisionBody<double>;

// ---- detection -------------------------------------------------------------------

void expect_same_pairs(const ParticleSystem& ps, double skin, const std::string& what) {
  const auto expected = brute_force_pairs(ps, skin);
  for (int threads : {1, 2}) {
    const auto found = find_contact_pairs(ps, skin, threads);
    ASSERT_EQ(found.size(), expected.size()) << what << ", threads " << threads;
    EXPECT_TRUE(found == expected) << what << ", threads " << threads;
  }
}

TEST(ContactSearch, EqualRadiiMatchBruteForce) {
  for (int dim : {2, 3}) {
    for (std::uint64_t seed : {1, 2}) {
      const double r = radius_for_fraction(3000, dim, 0.3);
      const ParticleSystem ps = cloud(3000, seed, dim, [r](auto&) { return r; });
      const auto pairs = brute_force_pairs(ps, 0.0);
      EXPECT_GT(pairs.size(), 1000u);  // a real test: many contacts
      expect_same_pairs(ps, 0.0, "equal radii dim " + std::to_string(dim));
      expect_same_pairs(ps, 0.25, "equal radii + skin dim " + std::to_string(dim));
    }
  }
}

TEST(ContactSearch, WildlyDifferentRadiiMatchBruteForce) {
  for (int dim : {2, 3}) {
    for (std::uint64_t seed : {4, 5}) {
      // Log-uniform over four decades: bodies end up on many grid levels.
      const ParticleSystem ps = cloud(2000, seed, dim, [](std::mt19937_64& rng) {
        return 1e-4 * std::pow(1e4, uniform(rng, 0, 1));
      });
      expect_same_pairs(ps, 0.0, "log-uniform radii dim " + std::to_string(dim));
      expect_same_pairs(ps, 0.25, "log-uniform radii + skin dim " + std::to_string(dim));
    }
  }
}

TEST(ContactSearch, AFewSlightlyLargerBodiesMatchBruteForce) {
  // Like merged bodies among the rest: one in 25 is 1.5 or 3 times larger (levels 1 and 2,
  // searched from their own, coarse side).
  for (int dim : {2, 3}) {
    for (double factor : {1.5, 3.0}) {
      const double r = radius_for_fraction(4000, dim, 0.2);
      std::size_t k = 0;
      const ParticleSystem ps =
          cloud(4000, 19, dim, [&](auto&) { return k++ % 25 == 0 ? factor * r : r; });
      expect_same_pairs(ps, 0.0,
                        "larger x" + std::to_string(factor) + " dim " + std::to_string(dim));
      expect_same_pairs(ps, 0.25,
                        "larger x" + std::to_string(factor) + " + skin dim " + std::to_string(dim));
    }
  }
}

TEST(ContactSearch, GiantsAmongDustMatchBruteForce) {
  for (int dim : {2, 3}) {
    // Mostly tiny bodies, a few zero-radius points, and three giants: one larger than the
    // whole cloud, one the size of the cloud, one a tenth of it.
    ParticleSystem ps = cloud(3000, 7, dim, [](std::mt19937_64& rng) {
      const double u = uniform(rng, 0, 1);
      return u < 0.05 ? 0.0 : 0.004 * (1 + u);
    });
    ps.radius[10] = 5.0;
    ps.radius[20] = 1.0;
    ps.radius[30] = 0.2;
    expect_same_pairs(ps, 0.0, "giants dim " + std::to_string(dim));
    const auto pairs = brute_force_pairs(ps, 0.0);
    const auto touches_giant = std::count_if(
        pairs.begin(), pairs.end(), [](const IndexPair& p) { return p.a == 10 || p.b == 10; });
    EXPECT_EQ(touches_giant, 2999);  // the 5.0 giant covers everything
  }
}

TEST(ContactSearch, CoincidentBodiesAndPointsInsideBodiesAreFound) {
  ParticleSystem ps;
  for (int k = 0; k < 5; ++k) ps.add(Body{{0.5, 0.5, 0.5}, {}, 1.0, 0.1, 0});  // five at one point
  ps.add(Body{{0.5, 0.5, 0.5}, {}, 1.0, 0.0, 0});                              // a point on them
  ps.add(Body{{3, 0, 0}, {}, 1.0, 0.0, 0});                                    // a point inside ...
  ps.add(Body{{3.5, 0, 0}, {}, 1.0, 0.6, 0});                                  // ... this body
  ps.add(Body{{10, 10, 10}, {}, 1.0, 0.0, 0});  // two radius-0 points
  ps.add(Body{{10, 10, 10}, {}, 1.0, 0.0, 0});  // never touch
  expect_same_pairs(ps, 0.0, "coincident");
  EXPECT_EQ(brute_force_pairs(ps, 0.0).size(), 15u + 1u);  // C(6,2) + the point in the body
}

TEST(ContactSearch, SpreadOutAndClusteredBodiesMatchBruteForce) {
  // Tiny bodies over a huge box (more cells than the keys hold: the grid coarsens) with a
  // dense clump in the middle.
  ParticleSystem ps = cloud(2000, 8, 3, [](auto&) { return 1e-6; });
  for (std::size_t i = 0; i < ps.size(); ++i) {
    const double scale = i % 2 ? 1e7 : 1e-5;
    ps.x[i] *= scale;
    ps.y[i] *= scale;
    ps.z[i] *= scale;
  }
  expect_same_pairs(ps, 0.0, "spread out");
  EXPECT_GT(brute_force_pairs(ps, 0.0).size(), 100u);
}

TEST(ContactSearch, NoRadiiNoPairs) {
  const ParticleSystem ps = test::random_system(500, 9);
  EXPECT_TRUE(find_contact_pairs(ps).empty());
  EXPECT_TRUE(find_contact_pairs(ParticleSystem{}).empty());
}

// ---- the response ------------------------------------------------------------------

TEST(CollisionResponse, HeadOnEqualMassesExchangeVelocitiesExactly) {
  Body3 a{0, 0, 0, 1.0, 0, 0, 2.0, 0.1};
  Body3 b{0.15, 0, 0, -3.0, 0, 0, 2.0, 0.1};
  const double lost = resolve_bounce(a, b, 1.0);
  EXPECT_EQ(a.vx, -3.0);
  EXPECT_EQ(b.vx, 1.0);
  EXPECT_EQ(lost, 0.0);
  EXPECT_DOUBLE_EQ(b.x - a.x, 0.2);  // pushed apart to touching, half each
  EXPECT_DOUBLE_EQ(a.x, -0.025);
}

TEST(CollisionResponse, UnequalMassesAndObliqueMatchTheAnalyticResult) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 100; ++trial) {
    for (double e : {1.0, 0.5, 0.0}) {
      Body3 a{0,
              0,
              0,
              uniform(rng, -1, 1),
              uniform(rng, -1, 1),
              uniform(rng, -1, 1),
              uniform(rng, 0.1, 10),
              0.5};
      Body3 b{uniform(rng, -0.5, 0.5), uniform(rng, -0.5, 0.5),
              uniform(rng, -0.5, 0.5), uniform(rng, -1, 1),
              uniform(rng, -1, 1),     uniform(rng, -1, 1),
              uniform(rng, 0.1, 10),   0.5};
      const Contact<double> c = contact_between(a, b);
      ASSERT_GT(c.overlap, 0);
      // Analytic: normal components follow the 1D collision with restitution, tangential
      // components are unchanged.
      auto normal = [&](const Body3& q) { return q.vx * c.nx + q.vy * c.ny + q.vz * c.nz; };
      const double ua = normal(a), ub = normal(b), m1 = a.mass, m2 = b.mass;
      const bool approaching = ub - ua < 0;
      const double ua2 = approaching ? (m1 * ua + m2 * ub + m2 * e * (ub - ua)) / (m1 + m2) : ua;
      const double ub2 = approaching ? (m1 * ua + m2 * ub + m1 * e * (ua - ub)) / (m1 + m2) : ub;
      const Body3 a0 = a, b0 = b;
      double lost = 0;
      apply_velocity_change(a, b, bounce_velocity_change(a, b, c, e, lost));
      EXPECT_NEAR(normal(a), ua2, 1e-14);
      EXPECT_NEAR(normal(b), ub2, 1e-14);
      EXPECT_NEAR(a.vx - normal(a) * c.nx, a0.vx - ua * c.nx, 1e-14);  // tangential part kept
      EXPECT_NEAR(b.vy - normal(b) * c.ny, b0.vy - ub * c.ny, 1e-14);
      // Momentum always; kinetic energy for e = 1; otherwise the analytic loss.
      for (auto comp : {&Body3::vx, &Body3::vy, &Body3::vz}) {
        EXPECT_NEAR(m1 * (a.*comp) + m2 * (b.*comp), m1 * (a0.*comp) + m2 * (b0.*comp), 1e-14);
      }
      auto kinetic = [](const Body3& q) {
        return 0.5 * q.mass * (q.vx * q.vx + q.vy * q.vy + q.vz * q.vz);
      };
      const double t0 = kinetic(a0) + kinetic(b0), t1 = kinetic(a) + kinetic(b);
      const double mu = m1 * m2 / (m1 + m2);
      const double expected_loss =
          approaching ? 0.5 * mu * (ub - ua) * (ub - ua) * (1 - e * e) : 0.0;
      EXPECT_NEAR(t0 - t1, expected_loss, 1e-13 * t0);
      EXPECT_NEAR(lost, expected_loss, 1e-14 * t0);
      if (e == 1.0) {
        EXPECT_EQ(lost, 0.0);
      }
    }
  }
}

TEST(CollisionResponse, RestitutionHalfLosesThreeQuartersOfTheNormalEnergy) {
  Body3 a{0, 0, 0, 0.3, 0.7, 0, 1.0, 0.1};
  Body3 b{0.1, 0.1, 0, -0.2, 0.1, 0, 3.0, 0.1};
  const Contact<double> c = contact_between(a, b);
  const double u = (b.vx - a.vx) * c.nx + (b.vy - a.vy) * c.ny;
  const double normal_energy = 0.5 * (1.0 * 3.0 / 4.0) * u * u;  // of the relative normal motion
  double lost = 0;
  bounce_velocity_change(a, b, c, 0.5, lost);
  EXPECT_NEAR(lost, 0.75 * normal_energy, 1e-16);
}

TEST(CollisionResponse, SeparatingBodiesGetNoImpulseButArePushedApart) {
  Body3 a{0, 0, 0, -1, 0, 0, 1.0, 0.1};
  Body3 b{0.1, 0, 0, 1, 0, 0, 3.0, 0.1};
  resolve_bounce(a, b, 1.0);
  EXPECT_EQ(a.vx, -1);
  EXPECT_EQ(b.vx, 1);
  EXPECT_DOUBLE_EQ(b.x - a.x, 0.2);
  EXPECT_DOUBLE_EQ(1.0 * a.x + 3.0 * b.x, 3.0 * 0.1);  // centre of mass stays put
}

TEST(CollisionResponse, MergeKeepsMassMomentumAndVolume) {
  const Body3 a{0, 0, 0, 1, 2, 3, 1.0, 0.2};
  const Body3 b{0.1, 0.2, 0.3, -1, 0, 1, 3.0, 0.3};
  const Body3 m = merge_bodies(a, b, 3);
  EXPECT_EQ(m.mass, 4.0);
  EXPECT_NEAR(m.mass * m.vx, 1.0 * 1 + 3.0 * -1, 1e-15);
  EXPECT_NEAR(m.mass * m.vy, 1.0 * 2 + 3.0 * 0, 1e-15);
  EXPECT_NEAR(m.mass * m.vz, 1.0 * 3 + 3.0 * 1, 1e-15);
  EXPECT_NEAR(m.x, 0.075, 1e-16);
  EXPECT_NEAR(std::pow(m.radius, 3), std::pow(0.2, 3) + std::pow(0.3, 3), 1e-16);
  EXPECT_NEAR(merge_bodies(a, b, 2).radius, std::sqrt(0.04 + 0.09), 1e-16);
  EXPECT_NEAR(merge_kinetic_loss(a, b), 0.5 * 0.75 * (4 + 4 + 4), 1e-14);
}

}  // namespace
}  // namespace nbody
