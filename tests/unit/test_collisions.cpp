// Collisions on the CPU: the grid search against brute force, the response against analytic
// results and conservation laws, the CPU handler's conservation, iterations and thread
// independence. Collisions in a running simulation (conservation, merges, the energy
// bookkeeping) run on every backend: tests/backend/test_collisions.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <string>

#include "backend_test.hpp"
#include "collision_test_helpers.hpp"
#include "nbody/build_info.hpp"
#include "nbody/collisions.hpp"
#include "nbody/diagnostics.hpp"
#include "nbody/error.hpp"
#include "nbody/physics/collision_response.hpp"
#include "nbody/simulation.hpp"
#include "test_helpers.hpp"

namespace nbody {
namespace {

using test::brute_force_pairs;
using test::cloud;
using test::momentum;
using test::radius_for_fraction;
using test::uniform;
using Body3 = CollisionBody<double>;

/// Largest overlap of any pair, as a fraction of the smaller radius (exact search).
double max_overlap(const ParticleSystem& ps) {
  double worst = 0;
  for (const IndexPair& p : find_contact_pairs(ps)) {
    const double dx = ps.x[p.b] - ps.x[p.a], dy = ps.y[p.b] - ps.y[p.a], dz = ps.z[p.b] - ps.z[p.a];
    const double overlap = ps.radius[p.a] + ps.radius[p.b] - std::sqrt(dx * dx + dy * dy + dz * dz);
    worst = std::max(worst, overlap_fraction(overlap, ps.radius[p.a], ps.radius[p.b]));
  }
  return worst;
}

/// The CPU handler's options, with `threads` OpenMP threads (0: OpenMP's default).
CollisionOptions options(CollisionModel model, double e = 1.0, int iterations = 1, int dim = 3,
                         int threads = 0) {
  CollisionOptions o = test::collision_options(model, e, iterations, dim, Device::Cpu);
  o.threads = threads;
  return o;
}

CollisionStats resolve(ParticleSystem& ps, const CollisionOptions& o) {
  return make_collision_handler(o)->resolve(ps);
}

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

// ---- the CPU handler ---------------------------------------------------------------

TEST(CollisionHandler, MergedBodyKeepsTheSmallerId) {
  ParticleSystem ps;
  ps.add(Body{{0, 0, 0}, {1, 0, 0}, 1.0, 0.1, 7});
  ps.add(Body{{0.15, 0, 0}, {0, 0, 0}, 1.0, 0.1, 3});
  ps.add(Body{{5, 0, 0}, {0, 0, 0}, 1.0, 0.1, 5});
  const CollisionStats s = resolve(ps, options(CollisionModel::Merge));
  ASSERT_EQ(ps.size(), 2u);
  EXPECT_EQ(s.merges, 1u);
  ASSERT_EQ(s.merged.size(), 1u);
  EXPECT_EQ(s.merged[0].kept, 3u);
  EXPECT_EQ(s.merged[0].absorbed, 7u);
  EXPECT_EQ(ps.id[0], 3u);  // survivors keep their order
  EXPECT_EQ(ps.id[1], 5u);
  EXPECT_EQ(ps.mass[0], 2.0);
  EXPECT_EQ(ps.vx[0], 0.5);
  EXPECT_EQ(ps.x[0], 0.075);
  EXPECT_NEAR(ps.radius[0], std::cbrt(2 * 0.001), 1e-16);
  EXPECT_EQ(s.energy_lost, 0.25);  // mu v^2 / 2 with mu = 1/2, v = 1
}

TEST(CollisionHandler, MergingACloudConservesMassMomentumAndVolume) {
  for (int dim : {2, 3}) {
    const double r = radius_for_fraction(4000, dim, 0.4);
    ParticleSystem ps =
        cloud(4000, 12, dim, [r](std::mt19937_64& rng) { return r * uniform(rng, 0.2, 2.0); });
    const std::size_t n0 = ps.size();
    double mass0 = 0, volume0 = 0;
    for (std::size_t i = 0; i < n0; ++i) {
      mass0 += ps.mass[i];
      volume0 += std::pow(ps.radius[i], dim);
    }
    const Vec3 p0 = momentum(ps);
    const double t0 = kinetic_energy(ps);
    const std::set<std::uint64_t> ids0(ps.id.begin(), ps.id.end());
    const CollisionStats s = resolve(ps, options(CollisionModel::Merge, 1.0, 3, dim));
    EXPECT_GT(s.merges, 500u);
    EXPECT_EQ(ps.size(), n0 - s.merges);
    double mass1 = 0, volume1 = 0;
    for (std::size_t i = 0; i < ps.size(); ++i) {
      mass1 += ps.mass[i];
      volume1 += std::pow(ps.radius[i], dim);
    }
    EXPECT_NEAR(mass1, mass0, 1e-14 * mass0);
    EXPECT_NEAR(volume1, volume0, 1e-12 * volume0);
    const Vec3 p1 = momentum(ps);
    EXPECT_NEAR(p1.x, p0.x, 1e-16);
    EXPECT_NEAR(p1.y, p0.y, 1e-16);
    EXPECT_NEAR(p1.z, p0.z, 1e-16);
    EXPECT_NEAR(t0 - kinetic_energy(ps), s.energy_lost, 1e-13 * t0);  // G = 0: kinetic only
    // Ids: unique, all from the start, the absorbed ones gone, each merge kept the smaller.
    const std::set<std::uint64_t> ids1(ps.id.begin(), ps.id.end());
    EXPECT_EQ(ids1.size(), ps.size());
    EXPECT_TRUE(std::includes(ids0.begin(), ids0.end(), ids1.begin(), ids1.end()));
    for (const MergeEvent& m : s.merged) {
      EXPECT_LT(m.kept, m.absorbed);
      EXPECT_EQ(ids1.count(m.absorbed), 0u);
    }
    if (dim == 2) {
      for (double z : ps.z) EXPECT_EQ(z, 0.0);
    }
  }
}

TEST(CollisionHandler, ElasticBounceConservesMomentumAndKineticEnergy) {
  for (int dim : {2, 3}) {
    const double r = radius_for_fraction(3000, dim, 0.3);
    ParticleSystem ps =
        cloud(3000, 13, dim, [r](std::mt19937_64& rng) { return r * uniform(rng, 0.5, 1.5); });
    const Vec3 p0 = momentum(ps);
    const double t0 = kinetic_energy(ps);
    const CollisionStats s = resolve(ps, options(CollisionModel::Bounce, 1.0, 4, dim));
    EXPECT_GT(s.contacts, 500u);
    const Vec3 p1 = momentum(ps);
    EXPECT_NEAR(p1.x, p0.x, 1e-16);
    EXPECT_NEAR(p1.y, p0.y, 1e-16);
    EXPECT_NEAR(p1.z, p0.z, 1e-16);
    EXPECT_NEAR(kinetic_energy(ps), t0, 1e-14 * t0);
    EXPECT_EQ(s.energy_lost, 0.0);
  }
}

TEST(CollisionHandler, InelasticLossEqualsEnergyLost) {
  for (double e : {0.0, 0.5, 0.9}) {
    const double r = radius_for_fraction(3000, 3, 0.3);
    ParticleSystem ps = cloud(3000, 14, 3, [r](auto&) { return r; });
    const double t0 = kinetic_energy(ps);
    const CollisionStats s = resolve(ps, options(CollisionModel::Bounce, e, 2));
    const double loss = t0 - kinetic_energy(ps);
    EXPECT_GT(loss, 0.01 * t0) << e;
    EXPECT_NEAR(s.energy_lost, loss, 1e-12 * t0) << e;
  }
}

TEST(CollisionHandler, MoreIterationsLeaveLessOverlap) {
  // A packed cloud of 10,000 overlapping bodies at rest: only the push-apart acts.
  const double r = radius_for_fraction(10000, 3, 0.5);
  ParticleSystem start = cloud(10000, 15, 3, [r](auto&) { return r; });
  for (auto* v : {&start.vx, &start.vy, &start.vz}) std::fill(v->begin(), v->end(), 0.0);
  const double initial = max_overlap(start);
  EXPECT_GT(initial, 0.9);
  double previous = initial;
  for (int k : {1, 2, 4, 8, 16}) {
    ParticleSystem ps = start;
    const CollisionStats s = resolve(ps, options(CollisionModel::Bounce, 1.0, k));
    const double left = max_overlap(ps);
    EXPECT_LT(left, previous) << k << " iterations";
    EXPECT_LE(s.max_overlap, left + 1e-12);  // the handler's own figure (candidate pairs only)
    previous = left;
  }
  EXPECT_LT(previous, 0.5 * initial);
}

TEST(CollisionHandler, ResultsDoNotDependOnTheNumberOfThreads) {
  for (CollisionModel model : {CollisionModel::Bounce, CollisionModel::Merge}) {
    const double r = radius_for_fraction(30000, 3, 0.3);
    const ParticleSystem start =
        cloud(30000, 16, 3, [r](std::mt19937_64& rng) { return r * uniform(rng, 0.3, 3); });
    ParticleSystem one = start, two = start;
    const CollisionStats s1 = resolve(one, options(model, 0.7, 3, 3, 1));
    const CollisionStats s2 = resolve(two, options(model, 0.7, 3, 3, 2));
    EXPECT_EQ(s1.contacts, s2.contacts);
    EXPECT_EQ(s1.merges, s2.merges);
    EXPECT_EQ(s1.energy_lost, s2.energy_lost);
    EXPECT_EQ(s1.max_overlap, s2.max_overlap);
    ASSERT_EQ(one.size(), two.size());
    EXPECT_TRUE(one.x == two.x && one.y == two.y && one.z == two.z);
    EXPECT_TRUE(one.vx == two.vx && one.vy == two.vy && one.vz == two.vz);
    EXPECT_TRUE(one.id == two.id && one.radius == two.radius && one.mass == two.mass);
  }
}

TEST(CollisionHandler, EmptyAndSingleBodySystems) {
  for (CollisionModel model : {CollisionModel::Bounce, CollisionModel::Merge}) {
    ParticleSystem none;
    EXPECT_EQ(resolve(none, options(model)).contacts, 0u);
    ParticleSystem one;
    one.add(Body{{1, 2, 3}, {1, 0, 0}, 1.0, 0.5, 0});
    const CollisionStats s = resolve(one, options(model, 1.0, 4));
    EXPECT_EQ(s.contacts, 0u);
    EXPECT_EQ(one.size(), 1u);
    EXPECT_EQ(one.x[0], 1.0);
  }
}

TEST(CollisionHandler, BadOptionsAreRejected) {
  EXPECT_THROW(validate(options(CollisionModel::Bounce, 2.0)), Error);
  EXPECT_THROW(validate(options(CollisionModel::Bounce, -0.1)), Error);
  EXPECT_THROW(validate(options(CollisionModel::Bounce, std::nan(""))), Error);
  EXPECT_THROW(validate(options(CollisionModel::Bounce, 1.0, 0)), Error);
  EXPECT_THROW(validate(options(CollisionModel::Bounce, 1.0, 1, 4)), Error);
  try {
    (void)parse_collision_model("foo");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(
        std::string(e.what()).find(
            "--collisions: unknown collision model (available: none, bounce, merge) (got foo)"),
        std::string::npos);
  }
  EXPECT_EQ(make_collision_handler(options(CollisionModel::None)), nullptr);
  CollisionOptions gpu = options(CollisionModel::Merge);
  gpu.device = Device::Gpu;
  if (gpu_devices().empty()) {  // no GPU, or a build without CUDA
    EXPECT_THROW((void)make_collision_handler(gpu), Error);
  }
}

// ---- in a simulation (the rest runs on every backend: tests/backend/test_collisions.cpp) -----

TEST(CollisionSimulation, GpuPathWithoutADeviceIsAClearError) {
  if (!gpu_devices().empty()) GTEST_SKIP() << "a GPU is present: the GPU path runs (tests/backend)";
  ParticleSystem ps = test::random_system(100, 17);
  for (double& r : ps.radius) r = 0.01;
  GravityOptions gpu;
  gpu.device = Device::Gpu;
  try {
    Simulation sim(ps, gpu, IntegratorOptions{}, options(CollisionModel::Bounce));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--device: ", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("(got gpu)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nbody
