#pragma once
// Shared by the tests of test particles in files (test_test_particle_io.cpp,
// test_test_particle_hdf5.cpp): a folder per test, bit-exact comparison of bodies, n_active
// and the type, and systems whose last bodies are test particles.
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "nbody/particles.hpp"
#include "test_helpers.hpp"

namespace nbody::testing_test_particle_io {

class TestParticleIoTest : public test::FolderTest {
 protected:
  TestParticleIoTest() : FolderTest("tpio") {}
};

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

/// Every stored value of every body, bit for bit, and n_active and the type.
inline void expect_same_bodies(const ParticleSystem& a, const ParticleSystem& b, bool ids = true) {
  ASSERT_EQ(a.size(), b.size());
  EXPECT_TRUE(same_bits(a.x, b.x) && same_bits(a.y, b.y) && same_bits(a.z, b.z));
  EXPECT_TRUE(same_bits(a.vx, b.vx) && same_bits(a.vy, b.vy) && same_bits(a.vz, b.vz));
  EXPECT_TRUE(same_bits(a.mass, b.mass));
  EXPECT_TRUE(same_bits(a.radius, b.radius));
  if (ids) {
    EXPECT_EQ(a.id, b.id);
  }
  EXPECT_EQ(a.n_active, b.n_active);
  EXPECT_EQ(a.active_count(), b.active_count());
  EXPECT_EQ(a.test_particle_type, b.test_particle_type);
}

/// n bodies, the last `tests` of them test particles: massless, or with `test_mass`
/// (type-0 test particles may have mass) on every other one.
inline ParticleSystem with_tests(std::size_t n, std::size_t tests, double test_mass, int type) {
  ParticleSystem ps = test::random_system(n, 7);
  ps.x[1] = 1.0 / 3.0, ps.vy[2] = -0.0, ps.z[3] = 4.9406564584124654e-324;
  for (std::size_t i = n - tests; i < n; ++i) ps.mass[i] = (i % 2 == 0) ? test_mass : 0.0;
  ps.mass[n - 1] = -0.0;  // massless too
  ps.radius[n - 2] = 0.125;
  ps.n_active = n - tests;
  ps.test_particle_type = type;
  validate_bodies(ps);
  return ps;
}

}  // namespace nbody::testing_test_particle_io
