// Collisions on owned bodies (parallel/domain_collisions.hpp): thread ranks, each with a
// share of the bodies, against one process's handler on all of them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "domain_test_helpers.hpp"
#include "nbody/collisions.hpp"
#include "nbody/initial_conditions.hpp"
#include "parallel/domain_collisions.hpp"
#include "parallel/domain_gravity.hpp"
#include "thread_ranks.hpp"

namespace nbody {
namespace {

CollisionOptions options(CollisionModel model) {
  CollisionOptions o;
  o.model = model;
  o.restitution = 0.8;
  o.G = 1;
  o.softening = 0.01;
  o.threads = 1;
  return o;
}

/// Touching pairs at the sites of a lattice of spacing 1 (far apart from each other), each
/// pair along a random direction with random velocities; ids 1..2 sites^3 in a shuffled
/// order, so that ownership by id cuts across the pairs.
ParticleSystem lattice_pairs(int sites, std::uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  ParticleSystem ps;
  const int count = 2 * sites * sites * sites;
  std::vector<std::uint64_t> ids(std::size_t(count), 0);
  std::iota(ids.begin(), ids.end(), std::uint64_t{1});
  std::shuffle(ids.begin(), ids.end(), rng);
  std::size_t k = 0;
  for (int i = 0; i < sites; ++i)
    for (int j = 0; j < sites; ++j)
      for (int l = 0; l < sites; ++l) {
        double d[3] = {u(rng), u(rng), u(rng)};
        const double norm = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) + 1e-9;
        for (double& c : d) c *= 0.09 / norm;  // 0.18 apart with radii 0.1: overlapping
        for (int s = -1; s <= 1; s += 2) {
          Body b;
          b.position = {i + s * d[0], j + s * d[1], l + s * d[2]};
          b.velocity = {u(rng), u(rng), u(rng)};
          b.mass = 1 + 0.5 * u(rng);
          b.radius = 0.1;
          b.id = ids[k++];
          ps.add(b);
        }
      }
  return ps;
}

/// Bodies of ps to each of `parts` ranks: by slabs in x (so each border cuts pairs), or
/// at random.
std::vector<ParticleSystem> shares(const ParticleSystem& ps, int parts, bool slabs) {
  std::vector<ParticleSystem> out(static_cast<std::size_t>(parts));
  double lo = ps.x[0], hi = ps.x[0];
  for (double x : ps.x) lo = std::min(lo, x), hi = std::max(hi, x);
  std::mt19937 rng(7);
  for (std::size_t i = 0; i < ps.size(); ++i) {
    int q = slabs ? int(double(parts) * (ps.x[i] - lo) / (hi - lo + 1e-12))
                  : int(rng() % unsigned(parts));
    q = std::clamp(q, 0, parts - 1);
    out[std::size_t(q)].add(Body{{ps.x[i], ps.y[i], ps.z[i]},
                                 {ps.vx[i], ps.vy[i], ps.vz[i]},
                                 ps.mass[i],
                                 ps.radius[i],
                                 ps.id[i]});
  }
  return out;
}

/// One stage on `parts` thread ranks: every rank's bodies after it (in id order) and each
/// rank's stats.
struct Decomposed {
  ParticleSystem bodies;
  std::vector<CollisionStats> stats;
};
Decomposed decomposed_stage(const std::vector<ParticleSystem>& share, const CollisionOptions& o) {
  const int parts = int(share.size());
  struct Result {
    ParticleSystem ps;
    CollisionStats stats;
  };
  const std::vector<Result> each =
      testing::run_parts<Result>(parts, [&](std::shared_ptr<ForceReducer> r) {
        const int p = r->part();
        auto handler = parallel::make_domain_collisions(make_collision_handler(o), o, r);
        Result out{share[std::size_t(p)], {}};
        out.stats = handler->resolve(out.ps);
        return out;
      });
  Decomposed d;
  for (const Result& e : each) {
    d.stats.push_back(e.stats);
    for (std::size_t i = 0; i < e.ps.size(); ++i)
      d.bodies.add(Body{{e.ps.x[i], e.ps.y[i], e.ps.z[i]},
                        {e.ps.vx[i], e.ps.vy[i], e.ps.vz[i]},
                        e.ps.mass[i],
                        e.ps.radius[i],
                        e.ps.id[i]});
  }
  return d;
}

/// The bodies in id order.
std::vector<std::size_t> by_id(const ParticleSystem& ps) {
  std::vector<std::size_t> order(ps.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return ps.id[a] < ps.id[b]; });
  return order;
}

void expect_same_bodies(const ParticleSystem& got, const ParticleSystem& one, const char* what) {
  ASSERT_EQ(got.size(), one.size()) << what;
  const auto g = by_id(got), o = by_id(one);
  std::size_t differ = 0;
  for (std::size_t k = 0; k < g.size(); ++k) {
    const std::size_t i = g[k], j = o[k];
    ASSERT_EQ(got.id[i], one.id[j]) << what;
    differ += got.x[i] != one.x[j] || got.y[i] != one.y[j] || got.z[i] != one.z[j] ||
              got.vx[i] != one.vx[j] || got.vy[i] != one.vy[j] || got.vz[i] != one.vz[j] ||
              got.mass[i] != one.mass[j] || got.radius[i] != one.radius[j];
  }
  EXPECT_EQ(differ, 0u) << what << ": bodies not bit-identical to one process's";
}

TEST(DomainCollisions, PairsAcrossBordersAreResolvedAsByOneProcess) {
  for (CollisionModel model : {CollisionModel::Bounce, CollisionModel::Merge}) {
    const CollisionOptions o = options(model);
    const ParticleSystem start = lattice_pairs(5, 3);  // 125 pairs
    ParticleSystem one = start;
    const CollisionStats expected = make_collision_handler(o)->resolve(one);
    ASSERT_EQ(expected.contacts, 125u);
    ASSERT_EQ(expected.merges, model == CollisionModel::Merge ? 125u : 0u);
    for (int parts : {1, 2, 3, 4}) {
      for (bool slabs : {true, false}) {
        const Decomposed d = decomposed_stage(shares(start, parts, slabs), o);
        const std::string what = std::string(to_string(model)) + " P = " + std::to_string(parts) +
                                 (slabs ? " slabs" : " random owners");
        expect_same_bodies(d.bodies, one, what.c_str());
        for (const CollisionStats& s : d.stats) {  // every rank reports the whole stage's
          EXPECT_EQ(s.contacts, expected.contacts) << what;
          EXPECT_EQ(s.merges, expected.merges) << what;
          // A merge's change against the other bodies summed in another order (measured:
          // 1e-14 of it).
          EXPECT_NEAR(s.energy_lost, expected.energy_lost, 1e-12 * std::abs(expected.energy_lost))
              << what;
        }
      }
    }
  }
}

/// A chain of 48 touching bodies along x, much longer than two reaches: its cluster spans
/// every border, so the ghost layer has to deepen until one rank holds all of it.
ParticleSystem chain() {
  ParticleSystem ps;
  for (int k = 0; k < 48; ++k) {
    Body b;
    b.position = {0.19 * k, 0.01 * (k % 3), 0.0};
    b.velocity = {0.1 * ((k * 7) % 5 - 2), 0.05 * ((k * 3) % 4 - 1.5), 0.0};
    b.mass = 1 + 0.1 * (k % 4);
    b.radius = 0.1;
    b.id = std::uint64_t(1000 - 7 * k);
    ps.add(b);
  }
  return ps;
}

TEST(DomainCollisions, ClustersLongerThanTheGhostLayerAreResolvedWhole) {
  for (CollisionModel model : {CollisionModel::Bounce, CollisionModel::Merge}) {
    const CollisionOptions o = options(model);
    ParticleSystem one = chain();
    const CollisionStats expected = make_collision_handler(o)->resolve(one);
    ASSERT_GT(expected.contacts, 40u);
    for (int parts : {2, 3, 4}) {
      const std::string what =
          std::string(to_string(model)) + " P = " + std::to_string(parts) + " (chain)";
      const Decomposed d = decomposed_stage(shares(chain(), parts, true), o);
      // The one cluster, resolved by one rank with the same handler on the same bodies: as
      // one process (the same pairs in the same order).
      expect_same_bodies(d.bodies, one, what.c_str());
      for (const CollisionStats& s : d.stats) {
        EXPECT_EQ(s.contacts, expected.contacts) << what;
        EXPECT_EQ(s.merges, expected.merges) << what;
      }
      EXPECT_EQ(d.bodies.size() + d.stats[0].merges, chain().size()) << what;
    }
  }
}

TEST(DomainCollisions, RanksWithoutBodiesOrContactsTakePart) {
  const CollisionOptions o = options(CollisionModel::Merge);
  const ParticleSystem start = lattice_pairs(2, 5);
  ParticleSystem one = start;
  make_collision_handler(o)->resolve(one);
  // Every body on rank 1 of 4: ranks 0, 2 and 3 own nothing.
  std::vector<ParticleSystem> share(4);
  share[1] = start;
  Decomposed d = decomposed_stage(share, o);
  expect_same_bodies(d.bodies, one, "one rank holding every body");
  // Bodies far apart: no contact, nothing changes, and every rank says so.
  ParticleSystem apart = start;
  for (double& r : apart.radius) r = 1e-3;
  d = decomposed_stage(shares(apart, 3, false), o);
  expect_same_bodies(d.bodies, apart, "no contacts");
  for (const CollisionStats& s : d.stats) EXPECT_EQ(s.contacts, 0u);
}

TEST(DomainCollisions, RanksWhoseBoxesSpanTheSystemStillGetEveryGhostTheyNeed) {
  // 1000 pairs on a lattice 9 wide (the grid of occupied cells is fine enough for the first
  // ghost layer), owned by slabs in x; each rank also owns a lone body at the far corner
  // from its slab, so every rank's box spans the system and only the occupied cells tell
  // where its bodies are. The ghosts are chosen by both; the result is one process's.
  for (CollisionModel model : {CollisionModel::Bounce, CollisionModel::Merge}) {
    const CollisionOptions o = options(model);
    ParticleSystem start = lattice_pairs(10, 8);
    for (int q = 0; q < 4; ++q) {
      Body far;
      far.position = {q < 2 ? 12.0 : -3.0, 12.0 - q, -3.0 + q};
      far.mass = 1;
      far.radius = 0.1;
      far.id = std::uint64_t(10000 + q);
      start.add(far);
    }
    ParticleSystem one = start;
    const CollisionStats expected = make_collision_handler(o)->resolve(one);
    ASSERT_EQ(expected.contacts, 1000u);
    for (int parts : {2, 4}) {
      std::vector<ParticleSystem> share = shares(lattice_pairs(10, 8), parts, true);
      for (int q = 0; q < parts; ++q) {
        const std::size_t far = start.size() - 4 + std::size_t(q);
        share[std::size_t(q)].add(Body{{start.x[far], start.y[far], start.z[far]},
                                       {0, 0, 0},
                                       start.mass[far],
                                       start.radius[far],
                                       start.id[far]});
      }
      for (int q = parts; q < 4; ++q) {  // the lone bodies of absent ranks: on rank 0
        const std::size_t far = start.size() - 4 + std::size_t(q);
        share[0].add(Body{{start.x[far], start.y[far], start.z[far]},
                          {0, 0, 0},
                          start.mass[far],
                          start.radius[far],
                          start.id[far]});
      }
      const Decomposed d = decomposed_stage(share, o);
      const std::string what = std::string(to_string(model)) + " P = " + std::to_string(parts);
      expect_same_bodies(d.bodies, one, what.c_str());
      for (const CollisionStats& s : d.stats) EXPECT_EQ(s.contacts, expected.contacts) << what;
    }
  }
}

TEST(DomainCollisions, MergedAwayBodiesTakeTheirCostsWithThem) {
  // The tree's costs (interactions per body) weigh the next cut; a merge removes bodies from
  // a rank, and the others' costs must stay theirs (not be reset to 1 for every body).
  const ParticleSystem all = testing::plummer_sphere(3000, 3, 4);
  GravityOptions o;
  o.algorithm = GravityAlgorithm::Tree;
  o.threads = 1;
  testing::run_parts<int>(2, [&](std::shared_ptr<ForceReducer> comm) {
    ParticleSystem mine = testing::dealt_share(all, comm->part(), comm->parts());
    auto gravity = parallel::make_domain_gravity(o, comm);
    gravity->compute_forces(mine, false);
    const std::vector<double> before = gravity->state().cost;
    EXPECT_EQ(before.size(), mine.size());
    const std::vector<std::size_t> gone = {0, 5, mine.size() - 1};
    gravity->bodies_removed(gone);
    const std::vector<double> after = gravity->state().cost;
    EXPECT_EQ(after.size(), before.size() - gone.size());
    std::vector<double> expected;
    for (std::size_t i = 0; i < before.size(); ++i)
      if (std::find(gone.begin(), gone.end(), i) == gone.end()) expected.push_back(before[i]);
    EXPECT_EQ(after, expected);
    return 0;
  });
}

}  // namespace
}  // namespace nbody
