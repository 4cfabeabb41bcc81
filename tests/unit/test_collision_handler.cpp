// The CPU collision handler: conservation (mass, momentum, volume, the energy lost), the
// push-apart iterations, results independent of the threads, bad options; and a simulation
// asking for the GPU without a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
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

using test::cloud;
using test::momentum;
using test::radius_for_fraction;
using test::uniform;

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
