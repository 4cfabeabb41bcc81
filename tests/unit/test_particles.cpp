// ParticleSystem's own operations: adding and removing bodies, ids, and the checks
// validate_bodies() makes on bodies that do not come from a file.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "nbody/error.hpp"
#include "nbody/particles.hpp"
#include "test_helpers.hpp"

namespace nbody {
namespace {

TEST(Particles, AddAssignsTheNextFreeId) {
  ParticleSystem ps;
  ps.add(Body{{1, 2, 3}, {4, 5, 6}, 0.5, 0.1, 0});
  ps.add(Body{{0, 0, 0}, {0, 0, 0}, 1.0, 0.0, 7});
  ps.add(Body{{0, 0, 0}, {0, 0, 0}, 1.0, 0.0, 0});
  ASSERT_EQ(ps.size(), 3u);
  EXPECT_EQ(ps.id[0], 1u);
  EXPECT_EQ(ps.id[1], 7u);
  EXPECT_EQ(ps.id[2], 8u);
  EXPECT_EQ(ps.body(0).velocity.z, 6.0);
  EXPECT_FALSE(ps.accelerations_valid());
}

TEST(Particles, RemoveKeepsTheOrderOfTheOthers) {
  ParticleSystem ps = test::random_system(10, 3);
  const ParticleSystem before = ps;
  ps.set_accelerations_valid();
  ps.remove({7, 2, 2, 0});  // any order, repeats once
  ASSERT_EQ(ps.size(), 7u);
  const std::size_t kept[] = {1, 3, 4, 5, 6, 8, 9};
  for (std::size_t k = 0; k < 7; ++k) {
    const std::size_t i = kept[k];
    EXPECT_EQ(ps.x[k], before.x[i]);
    EXPECT_EQ(ps.vz[k], before.vz[i]);
    EXPECT_EQ(ps.mass[k], before.mass[i]);
    EXPECT_EQ(ps.id[k], before.id[i]);
  }
  EXPECT_EQ(ps.ax.size(), 7u);
  EXPECT_EQ(ps.radius.size(), 7u);
  EXPECT_FALSE(ps.accelerations_valid());  // forces from the removed bodies are gone
  ps.remove({});
  EXPECT_EQ(ps.size(), 7u);
}

TEST(Particles, RemoveOutOfRangeRemovesNothing) {
  ParticleSystem ps = test::random_system(4, 1);
  try {
    ps.remove({1, 4});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "remove: index 4 is out of range (4 bodies)");
  }
  EXPECT_EQ(ps.size(), 4u);
}

TEST(Particles, ValidateBodiesNamesTheFirstBadBody) {
  ParticleSystem ps = test::random_system(5, 2);
  EXPECT_NO_THROW(validate_bodies(ps));
  auto message = [](const ParticleSystem& p) -> std::string {
    try {
      validate_bodies(p);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  ParticleSystem bad = ps;
  bad.mass[3] = 0;
  EXPECT_EQ(message(bad), "body 3 (id 4): mass must be positive and finite, got 0");
  bad = ps;
  bad.vy[1] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(message(bad), "body 1 (id 2): vy must be finite, got nan");
  bad = ps;
  bad.radius[2] = -0.5;
  EXPECT_EQ(message(bad), "body 2 (id 3): radius must be >= 0 and finite, got -0.5");
  bad = ps;
  bad.id[4] = 2;
  EXPECT_EQ(message(bad), "body 4 (id 2): duplicate id 2 (first used by body 1)");
  bad = ps;
  bad.id[0] = bad.id[1] = 0;  // unassigned ids may repeat
  EXPECT_NO_THROW(validate_bodies(bad));
}

TEST(Particles, ResizeForOverwriteGrowsWithRoomAndReusesIt) {
  // A rank's share changes in number: grown arrays get n/8 of room, and a share that shrinks
  // and grows again within it keeps its memory (no new pages to touch).
  ParticleSystem ps = test::random_system(100, 3);
  ps.resize_for_overwrite(1000);
  for (const auto* v : {&ps.x, &ps.vz, &ps.ax, &ps.potential, &ps.mass, &ps.radius}) {
    EXPECT_EQ(v->size(), 1000u);
    EXPECT_GE(v->capacity(), 1125u);
  }
  EXPECT_EQ(ps.id.size(), 1000u);
  EXPECT_GE(ps.id.capacity(), 1125u);
  EXPECT_FALSE(ps.accelerations_valid());
  const double* x = ps.x.data();
  const std::uint64_t* id = ps.id.data();
  ps.resize_for_overwrite(900);
  ps.resize_for_overwrite(1120);
  EXPECT_EQ(ps.x.data(), x);
  EXPECT_EQ(ps.id.data(), id);
  EXPECT_EQ(ps.size(), 1120u);
}

}  // namespace
}  // namespace nbody
