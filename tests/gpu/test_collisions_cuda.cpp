// The GPU collision engine through its per-call handler: detection against brute force,
// the response's conservation laws, merges, iterations and determinism. Every test skips
// itself when the machine has no usable CUDA device. Collisions in a running simulation
// (the resident engine) on every backend: tests/backend/test_collisions.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <random>
#include <vector>

#include "backend_test.hpp"
#include "nbody/collisions.hpp"
#include "nbody/error.hpp"
#include "unit/collision_test_helpers.hpp"
#include "unit/test_helpers.hpp"

namespace nbody {
namespace {

using test::brute_force_pairs;
using test::cloud;
using test::momentum;
using test::uniform;

CollisionOptions gpu_options(CollisionModel model, double e = 1.0, int iterations = 1,
                             int dim = 3) {
  return test::collision_options(model, e, iterations, dim, Device::Gpu);
}
double kinetic(const ParticleSystem& ps) {
  double k = 0;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    k += 0.5 * ps.mass[i] * (ps.vx[i] * ps.vx[i] + ps.vy[i] * ps.vy[i] + ps.vz[i] * ps.vz[i]);
  }
  return k;
}

TEST(GpuCollisions, DetectionEqualsBruteForce) {
  NBODY_SKIP_WITHOUT_GPU();
  for (int dim : {3, 2}) {
    for (double skin : {0.0, 0.25}) {
      const double r0 = dim == 3 ? 0.03 : 0.01;
      const ParticleSystem equal = cloud(4000, 11, dim, [&](auto&) { return r0; });
      EXPECT_EQ(find_contact_pairs(equal, skin, 0, Device::Gpu), brute_force_pairs(equal, skin))
          << dim << " " << skin;
      // Radii over four decades, a few giants, and some bodies with radius 0.
      const ParticleSystem mixed = cloud(3000, 12, dim, [&](auto& rng) {
        const double u = uniform(rng, 0, 1);
        return u < 0.05 ? 0.0 : (u > 0.995 ? 0.5 : r0 * std::pow(10.0, uniform(rng, -3, 1)));
      });
      const auto expected = brute_force_pairs(mixed, skin);
      EXPECT_EQ(find_contact_pairs(mixed, skin, 0, Device::Gpu), expected) << dim << " " << skin;
      EXPECT_EQ(find_contact_pairs(mixed, skin, 0, Device::Cpu), expected) << dim << " " << skin;
    }
  }
  ParticleSystem same;  // coincident bodies all touch
  for (int k = 0; k < 50; ++k) same.add({{0.5, 0.5, 0.5}, {}, 1.0, 0.01, 0});
  EXPECT_EQ(find_contact_pairs(same, 0, 0, Device::Gpu).size(), 50u * 49u / 2u);
}

TEST(GpuCollisions, HeadOnElasticPairExchangesVelocities) {
  NBODY_SKIP_WITHOUT_GPU();
  ParticleSystem ps;
  ps.add({{-0.09, 0, 0}, {1, 0, 0}, 1.0, 0.1, 1});
  ps.add({{0.09, 0, 0}, {-1, 0, 0}, 1.0, 0.1, 2});
  auto handler = make_collision_handler(gpu_options(CollisionModel::Bounce));
  const CollisionStats st = handler->resolve(ps);
  EXPECT_EQ(st.contacts, 1u);
  EXPECT_DOUBLE_EQ(ps.vx[0], -1.0);
  EXPECT_DOUBLE_EQ(ps.vx[1], 1.0);
  EXPECT_NEAR(ps.x[1] - ps.x[0], 0.2, 1e-15);  // pushed apart to touching
  EXPECT_NEAR(st.energy_lost, 0.0, 1e-15);
  EXPECT_EQ(st.max_overlap, 0.0);
}

TEST(GpuCollisions, BounceConservesMomentumAndBooksTheEnergy) {
  NBODY_SKIP_WITHOUT_GPU();
  for (double e : {1.0, 0.5}) {
    ParticleSystem ps = cloud(20000, 21, 3, [](auto& rng) { return uniform(rng, 0.01, 0.03); });
    std::mt19937_64 rng(5);
    for (std::size_t i = 0; i < ps.size(); ++i) ps.mass[i] = uniform(rng, 0.5, 2.0);
    const Vec3 p0 = momentum(ps);
    const double k0 = kinetic(ps);
    auto handler = make_collision_handler(gpu_options(CollisionModel::Bounce, e, 4));
    const CollisionStats st = handler->resolve(ps);
    const Vec3 p1 = momentum(ps);
    std::printf("[ measured ] e=%g: %llu contacts, max overlap %.3e, lost %.6e of %.6e\n", e,
                static_cast<unsigned long long>(st.contacts), st.max_overlap, st.energy_lost, k0);
    EXPECT_GT(st.contacts, 1000u);
    EXPECT_NEAR(p1.x, p0.x, 1e-12 * k0);
    EXPECT_NEAR(p1.y, p0.y, 1e-12 * k0);
    EXPECT_NEAR(p1.z, p0.z, 1e-12 * k0);
    // G = 0: the energy lost is exactly the kinetic energy that went.
    EXPECT_NEAR(k0 - kinetic(ps), st.energy_lost, 1e-10 * k0);
    if (e < 1) {
      EXPECT_GT(st.energy_lost, 0.0);
    } else {  // impulses go by matchings, each an exact two-body collision
      EXPECT_NEAR(kinetic(ps), k0, 1e-12 * k0);
    }
  }
}

TEST(GpuCollisions, MoreIterationsLeaveLessOverlapAndRunsRepeatBitwise) {
  NBODY_SKIP_WITHOUT_GPU();
  const ParticleSystem start = cloud(20000, 31, 3, [](auto&) { return 0.03; });
  double previous = 1e30;
  for (int k : {1, 4, 16}) {
    ParticleSystem ps = start;
    const CollisionStats st =
        make_collision_handler(gpu_options(CollisionModel::Bounce, 1.0, k))->resolve(ps);
    std::printf("[ measured ] %d iterations: max overlap %.3e\n", k, st.max_overlap);
    EXPECT_LT(st.max_overlap, previous) << k;
    previous = st.max_overlap;
  }
  ParticleSystem a = start, b = start;
  (void)make_collision_handler(gpu_options(CollisionModel::Bounce, 0.7, 4))->resolve(a);
  (void)make_collision_handler(gpu_options(CollisionModel::Bounce, 0.7, 4))->resolve(b);
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.vz, b.vz);
}

TEST(GpuCollisions, MergeKeepsMassMomentumVolumeAndTheSmallerId) {
  NBODY_SKIP_WITHOUT_GPU();
  for (int dim : {3, 2}) {
    ParticleSystem ps = cloud(
        5000, 41, dim, [&](auto& rng) { return uniform(rng, 0.01, dim == 3 ? 0.04 : 0.012); });
    if (dim == 2) ps.make_planar();
    std::reverse(ps.id.begin(), ps.id.end());  // ids not in index order
    double mass = 0, volume = 0;
    for (std::size_t i = 0; i < ps.size(); ++i) {
      mass += ps.mass[i];
      volume += dim == 3 ? std::pow(ps.radius[i], 3) : std::pow(ps.radius[i], 2);
    }
    const Vec3 p0 = momentum(ps);
    const std::size_t n0 = ps.size();
    const CollisionStats st =
        make_collision_handler(gpu_options(CollisionModel::Merge, 1.0, 8, dim))->resolve(ps);
    double mass1 = 0, volume1 = 0;
    for (std::size_t i = 0; i < ps.size(); ++i) {
      mass1 += ps.mass[i];
      volume1 += dim == 3 ? std::pow(ps.radius[i], 3) : std::pow(ps.radius[i], 2);
    }
    std::printf("[ measured ] merge dim %d: %zu -> %zu bodies, %llu merges\n", dim, n0, ps.size(),
                static_cast<unsigned long long>(st.merges));
    EXPECT_GT(st.merges, 100u);
    EXPECT_EQ(ps.size() + st.merges, n0);
    EXPECT_NEAR(mass1, mass, 1e-12 * mass);
    EXPECT_NEAR(volume1, volume, 1e-12 * volume);
    const Vec3 p1 = momentum(ps);
    EXPECT_NEAR(p1.x, p0.x, 1e-12);
    EXPECT_NEAR(p1.y, p0.y, 1e-12);
    std::vector<std::uint64_t> ids = ps.id;
    std::sort(ids.begin(), ids.end());
    EXPECT_EQ(std::adjacent_find(ids.begin(), ids.end()),
              ids.end());  // survivors keep distinct ids
  }
  ParticleSystem pair;
  pair.add({{0, 0, 0}, {1, 0, 0}, 1.0, 0.1, 7});
  pair.add({{0.1, 0, 0}, {0, 0, 0}, 3.0, 0.1, 3});
  (void)make_collision_handler(gpu_options(CollisionModel::Merge))->resolve(pair);
  ASSERT_EQ(pair.size(), 1u);
  EXPECT_EQ(pair.id[0], 3u);
  EXPECT_DOUBLE_EQ(pair.mass[0], 4.0);
  EXPECT_DOUBLE_EQ(pair.vx[0], 0.25);
  EXPECT_NEAR(pair.radius[0], std::cbrt(2 * 0.001), 1e-15);
}

}  // namespace
}  // namespace nbody
