// The insertion build (src/tree/tree_insertion_build.cpp, `--tree-build insertion`) against
// the Morton build: the same cells, the same bodies in the same tree order, hence the same
// forces, for uniform, Plummer, coincident, nearly coincident and far-apart bodies, in 2D
// and 3D, N from 1 to 50000, with 1 to 8 threads (more threads than cores: the locks are
// contended and the threads descheduled while they hold them), many seeds.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "nbody/gravity.hpp"
#include "nbody/initial_conditions.hpp"
#include "test_helpers.hpp"
#include "tree/tree.hpp"
#include "tree/tree_solver.hpp"

namespace nbody {
namespace {

enum class Shape { Uniform, Plummer, Coincident, NearlyCoincident, FarClusters };

ParticleSystem make_bodies(Shape shape, std::size_t n, std::uint64_t seed, int dim) {
  if (shape == Shape::Plummer && n >= 2) {
    ModelOptions m;
    m.n = n;
    m.seed = seed;
    m.dim = dim;
    m.threads = 1;
    return generate(m);
  }
  ParticleSystem ps = test::random_system(n, seed, dim);
  std::mt19937_64 rng(seed);
  for (std::size_t i = 0; i < n; ++i) {
    double* axes[] = {&ps.x[i], &ps.y[i], &ps.z[i]};
    for (int a = 0; a < dim; ++a) {
      double& v = *axes[a];
      switch (shape) {
        case Shape::Coincident:
          v = 0.25;
          break;
        // A few ulps apart: distinct bodies that only the depth limit keeps in one leaf.
        case Shape::NearlyCoincident:
          v = 0.25 + 1e-16 * double(rng() % 4);
          break;
        // Two clouds 1e-6 wide, 1e6 apart: long chains of one-child cells above each.
        case Shape::FarClusters:
          v = (i % 2 ? 1e6 : -1e6) + 1e-6 * v;
          break;
        default:
          break;
      }
    }
  }
  return ps;
}

/// Every cell and every body of two trees, exactly.
void expect_same_tree(const tree::Tree& a, const tree::Tree& b, const std::string& what) {
  ASSERT_EQ(a.cells(), b.cells()) << what;
  ASSERT_EQ(a.bodies(), b.bodies()) << what;
  EXPECT_EQ(a.root_half, b.root_half) << what;
  EXPECT_TRUE(a.first_child == b.first_child) << what;
  EXPECT_TRUE(a.child_count == b.child_count) << what;
  EXPECT_TRUE(a.parent == b.parent) << what;
  EXPECT_TRUE(a.level == b.level) << what;
  EXPECT_TRUE(a.begin == b.begin) << what;
  EXPECT_TRUE(a.end == b.end) << what;
  EXPECT_TRUE(a.cx == b.cx && a.cy == b.cy && a.cz == b.cz && a.half == b.half) << what;
  // The leaves' bodies as sets (what the cells promise) and then in order (what the
  // layout's sort within a leaf adds).
  for (std::size_t c = 0; c < a.cells(); ++c) {
    if (!a.is_leaf(c)) continue;
    std::vector<std::uint32_t> sa(a.order.begin() + a.begin[c], a.order.begin() + a.end[c]);
    std::vector<std::uint32_t> sb(b.order.begin() + b.begin[c], b.order.begin() + b.end[c]);
    std::sort(sa.begin(), sa.end());
    std::sort(sb.begin(), sb.end());
    ASSERT_EQ(sa, sb) << what << ": leaf " << c;
  }
  EXPECT_TRUE(a.order == b.order) << what;
  EXPECT_TRUE(a.keys == b.keys) << what;
  EXPECT_TRUE(a.x == b.x && a.y == b.y && a.z == b.z && a.m == b.m) << what;
}

/// Builds ps both ways and compares; the insertion build with `threads` threads on a
/// fresh scratch (so small pools and their retries are exercised too).
void check_builds(const ParticleSystem& ps, int dim, int threads, const std::string& what,
                  std::size_t leaf_size = 8) {
  tree::Tree morton, inserted;
  tree::BuildScratch s1, s2;
  tree::build_tree(ps, dim, leaf_size, 1, morton, s1);
  tree::build_tree_insertion(ps, dim, leaf_size, threads, inserted, s2);
  expect_same_tree(inserted, morton, what);
  if (ps.size() > 0) {
    EXPECT_EQ(s2.insertion_times.nodes, inserted.cells()) << what;
  }
}

std::string label(Shape s, std::size_t n, int dim, int threads, std::uint64_t seed) {
  static const char* names[] = {"uniform", "plummer", "coincident", "nearly-coincident", "far"};
  return std::string(names[int(s)]) + " N=" + std::to_string(n) + " dim=" + std::to_string(dim) +
         " threads=" + std::to_string(threads) + " seed=" + std::to_string(seed);
}

constexpr Shape kShapes[] = {Shape::Uniform, Shape::Plummer, Shape::Coincident,
                             Shape::NearlyCoincident, Shape::FarClusters};

TEST(TreeInsertion, SameCellsAsMortonForSmallSystemsOverManySeeds) {
  // 50 seeds per case, the thread count cycling 1..8, N around the leaf size (the splits of
  // the root, and leaves that fill exactly) and a few hundred.
  for (const Shape shape : kShapes) {
    for (const int dim : {2, 3}) {
      for (const std::size_t n :
           {std::size_t(1), std::size_t(8), std::size_t(9), std::size_t(40), std::size_t(300)}) {
        for (std::uint64_t seed = 1; seed <= 50; ++seed) {
          const int threads = 1 + int(seed % 8);
          check_builds(make_bodies(shape, n, seed, dim), dim, threads,
                       label(shape, n, dim, threads, seed));
          if (HasFailure()) return;
        }
      }
    }
  }
}

TEST(TreeInsertion, SameCellsAsMortonForLargeSystems) {
  for (const Shape shape : kShapes) {
    for (const int dim : {2, 3}) {
      for (const std::size_t n : {std::size_t(5000), std::size_t(50000)}) {
        if (n > 5000 && shape != Shape::Plummer && shape != Shape::Uniform) continue;
        for (const int threads : {2, 8}) {
          check_builds(make_bodies(shape, n, 3, dim), dim, threads,
                       label(shape, n, dim, threads, 3));
        }
      }
    }
  }
}

TEST(TreeInsertion, LeafSizesFromOneUp) {
  for (const std::size_t leaf : {std::size_t(1), std::size_t(2), std::size_t(3), std::size_t(16)}) {
    for (const Shape shape : {Shape::Uniform, Shape::Coincident}) {
      check_builds(make_bodies(shape, 500, 5, 3), 3, 4,
                   label(shape, 500, 3, 4, 5) + " leaf=" + std::to_string(leaf), leaf);
    }
  }
}

TEST(TreeInsertion, PoolTooSmallIsGrownAndTheBuildRedone) {
  // Nine coincident bodies: a chain of 21 cells, more than the first guess of the pool.
  const ParticleSystem ps = make_bodies(Shape::Coincident, 9, 1, 3);
  tree::Tree t, morton;
  tree::BuildScratch s, sm;
  tree::build_tree_insertion(ps, 3, 8, 4, t, s);
  EXPECT_GE(s.insertion_times.retries, 1u);
  tree::build_tree(ps, 3, 8, 1, morton, sm);
  expect_same_tree(t, morton, "after a retry");
  ASSERT_EQ(t.cells(), 22u);  // the root, 20 one-child cells, the leaf of 9 at depth 21
  // The pool keeps its size: the next build of the same bodies needs no retry.
  tree::build_tree_insertion(ps, 3, 8, 4, t, s);
  EXPECT_EQ(s.insertion_times.retries, 0u);
  // A larger system on the same scratch: the pool (and the dimension) change between builds.
  const ParticleSystem big = make_bodies(Shape::Uniform, 3000, 2, 2);
  tree::build_tree_insertion(big, 2, 8, 3, t, s);
  tree::build_tree(big, 2, 8, 1, morton, sm);
  expect_same_tree(t, morton, "reused scratch");
}

/// The solver's accelerations and potentials with each build.
ParticleSystem solve(ParticleSystem ps, GravityOptions o, TreeBuild build) {
  o.tree_build = build;
  make_tree_solver(o)->compute_forces(ps, true);
  return ps;
}

TEST(TreeInsertion, SolverForcesAreTheMortonBuildsBitForBit) {
  // The same tree body for body: the same sums in the same order. Both precisions, 2D and
  // 3D, quadrupoles, the bmax criterion.
  for (const int dim : {2, 3}) {
    for (const Precision p : {Precision::Float, Precision::Double}) {
      GravityOptions o;
      o.algorithm = GravityAlgorithm::Tree;
      o.precision = p;
      o.dim = dim;
      o.threads = 3;
      o.softening = 0.01;
      o.quadrupole = p == Precision::Double;
      o.mac = p == Precision::Double ? OpeningCriterion::Bmax : OpeningCriterion::Geometric;
      const ParticleSystem ps = make_bodies(Shape::Plummer, 4000, 11, dim);
      const ParticleSystem a = solve(ps, o, TreeBuild::Insertion);
      const ParticleSystem b = solve(ps, o, TreeBuild::Morton);
      EXPECT_TRUE(a.ax == b.ax && a.ay == b.ay && a.az == b.az) << dim << " " << int(p);
      EXPECT_TRUE(a.potential == b.potential) << dim << " " << int(p);
      EXPECT_GT(test::max_error_over_rms(a, b), -1.0);  // finite, compared above
    }
  }
}

TEST(TreeInsertion, ActiveBodiesAndTheRelativeCriterionUseTheInsertionTree) {
  // compute_forces_active (hierarchical steps) and a second evaluation (the relative
  // criterion with the last accelerations) build through the same path.
  GravityOptions o;
  o.algorithm = GravityAlgorithm::Tree;
  o.precision = Precision::Double;
  o.threads = 2;
  ParticleSystem a = make_bodies(Shape::Uniform, 3000, 4, 3), b = a;
  auto sa = make_tree_solver([&] {
    GravityOptions i = o;
    i.tree_build = TreeBuild::Insertion;
    return i;
  }());
  auto sb = make_tree_solver(o);
  EXPECT_NE(sa->name().find("insertion"), std::string::npos) << sa->name();
  EXPECT_EQ(sb->name().find("insertion"), std::string::npos) << sb->name();
  for (int round = 0; round < 2; ++round) {
    sa->compute_accelerations(a);
    sb->compute_accelerations(b);
    EXPECT_TRUE(a.ax == b.ax && a.ay == b.ay && a.az == b.az) << round;
  }
  std::vector<std::uint32_t> active;
  for (std::uint32_t i = 0; i < 3000; i += 7) active.push_back(i);
  sa->compute_forces_active(a, false, active);
  sb->compute_forces_active(b, false, active);
  for (const std::uint32_t i : active) ASSERT_EQ(a.ax[i], b.ax[i]) << i;
}

// Build times of both builds (not a test: run with --gtest_also_run_disabled_tests,
// NBODY_BUILD_N=N and NBODY_BUILD_THREADS=T; docs/performance.md quotes it).
TEST(TreeInsertion, DISABLED_BuildTimes) {
  const char* n_env = std::getenv("NBODY_BUILD_N");
  const char* t_env = std::getenv("NBODY_BUILD_THREADS");
  const std::size_t n = n_env ? std::stoul(n_env) : 100000;
  const int threads = t_env ? std::stoi(t_env) : 2;
  const ParticleSystem ps = make_bodies(Shape::Plummer, n, 42, 3);
  tree::Tree t;
  tree::BuildScratch s;
  using Clock = std::chrono::steady_clock;
  auto median_ms = [&](auto build) {
    std::vector<double> ms;
    build();  // warm-up (the pool's size, the arrays)
    for (int r = 0; r < 7; ++r) {
      const auto t0 = Clock::now();
      build();
      ms.push_back(1e3 * std::chrono::duration<double>(Clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
  };
  const double morton = median_ms([&] { tree::build_tree(ps, 3, 8, threads, t, s); });
  double prepare = 0, insert = 0, layout = 0;
  const double inserted = median_ms([&] {
    tree::build_tree_insertion(ps, 3, 8, threads, t, s);
    prepare = 1e3 * s.insertion_times.prepare;
    insert = 1e3 * s.insertion_times.insert;
    layout = 1e3 * s.insertion_times.layout;
  });
  std::printf(
      "Plummer N = %zu, %d threads, %zu cells: morton %.2f ms, insertion %.2f ms (last run: "
      "prepare %.2f, insert %.2f, layout %.2f)\n",
      n, threads, t.cells(), morton, inserted, prepare, insert, layout);
}

}  // namespace
}  // namespace nbody
