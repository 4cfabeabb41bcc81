// The CPU Barnes-Hut tree solver (src/tree/) against the float64 direct sum: the issue's
// accuracy targets at N = 20000, the quadrupole's sign, quadrupole against monopole
// errors, momentum drift, degenerate inputs, the tree's structure, 2D, thread independence,
// options and stats (the SIMD quadrupole against a float64 reference of the same terms:
// test_tree_quadrupole.cpp). What every backend's tree must do in a simulation (theta 0 is the
// direct sum, errors fall with theta, quadrupoles help, tiny and coincident systems, energy) is in
// tests/backend/test_gravity.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "backend_test.hpp"
#include "gravity/direct_scalar.hpp"
#include "nbody/error.hpp"
#include "nbody/force_error.hpp"
#include "nbody/gravity.hpp"
#include "nbody/initial_conditions.hpp"
#include "test_helpers.hpp"
#include "tree/tree.hpp"
#include "tree/tree_solver.hpp"

namespace nbody {
namespace {

/// The CPU tree, float64 unless asked otherwise.
GravityOptions tree_options(double theta, bool quadrupole = false, int dim = 3,
                            Precision precision = Precision::Double, double softening = 0) {
  return test::tree_options(Device::Cpu, precision, theta, dim, quadrupole, softening);
}

ParticleSystem with_tree_forces(ParticleSystem ps, const GravityOptions& o) {
  make_tree_solver(o)->compute_accelerations(ps);
  return ps;
}

ParticleSystem with_direct_forces(ParticleSystem ps, double softening = 0) {
  DirectSumScalar<double>(1.0, softening).compute_accelerations(ps);
  return ps;
}

/// Per-body relative errors of the tree on a sample of k bodies (all when k == 0).
ForceErrorStats sampled_errors(const ParticleSystem& ps, const GravityOptions& o,
                               std::size_t k = 1000) {
  const ParticleSystem approx = with_tree_forces(ps, o);
  const auto idx = sample_indices(ps.size(), k, 7);
  ParticleSystem exact = ps;
  direct_accelerations_for(ps, idx, 1.0, o.softening, exact);
  return summarize_errors(relative_force_errors(approx, exact, idx));
}

TEST(Tree, QuadrupoleSignAgainstDistantCluster) {
  // A flattened, elongated cluster far away is seen (at theta 1) as one cell; its
  // quadrupole field must move the monopole result towards the direct sum.
  ParticleSystem ps = test::random_system(200, 5);
  for (std::size_t i = 0; i < ps.size(); ++i) {
    ps.x[i] *= 3.0;  // elongated along x, flat in z
    ps.z[i] *= 0.2;
  }
  for (double probe : {1.0, -1.0}) {
    ParticleSystem sys = ps;
    Body probe_body;
    probe_body.position = {probe * 40.0, 25.0, 10.0};
    probe_body.mass = 1e-9;
    sys.add(probe_body);
    const std::size_t p = sys.size() - 1;
    const ParticleSystem direct = with_direct_forces(sys);
    const ParticleSystem mono = with_tree_forces(sys, tree_options(1.0, false));
    const ParticleSystem quad = with_tree_forces(sys, tree_options(1.0, true));
    auto err = [&](const ParticleSystem& a) {
      return std::hypot(a.ax[p] - direct.ax[p], a.ay[p] - direct.ay[p], a.az[p] - direct.az[p]);
    };
    EXPECT_LT(err(quad), 0.1 * err(mono));
  }
}

TEST(Tree, QuadrupoleErrorsBelowMonopoleAtSameTheta) {
  // Plummer N = 20000, eps 0.01, float (the tree's default), 1000 bodies against the float64
  // direct sum. Measured, median / p99: theta 0.5 monopole 3.54e-4 / 2.18e-3, quadrupole
  // 7.99e-5 / 5.03e-4 (8.03e-5 / 5.03e-4 with the scalar double loop the SIMD cell kernel
  // replaced); theta 0.7 monopole 1.04e-3 / 6.66e-3, quadrupole 4.32e-4 / 2.39e-3 (the loop:
  // the same). Asserted: the quadrupole's within 15% of those, and under half the monopole's.
  const ParticleSystem ps = generate({.model = "plummer", .n = 20000, .seed = 1});
  for (const double theta : {0.5, 0.7}) {
    const auto mono = sampled_errors(ps, tree_options(theta, false, 3, Precision::Float, 0.01));
    const auto quad = sampled_errors(ps, tree_options(theta, true, 3, Precision::Float, 0.01));
    std::printf("[ measured ] theta %.1f: monopole %.3e / %.3e, quadrupole %.3e / %.3e\n", theta,
                mono.median, mono.p99, quad.median, quad.p99);
    EXPECT_LT(quad.median, 0.5 * mono.median) << "theta " << theta;
    EXPECT_LT(quad.p99, 0.5 * mono.p99) << "theta " << theta;
    EXPECT_LE(quad.median, theta == 0.5 ? 9.2e-5 : 5.0e-4) << "theta " << theta;
    EXPECT_LE(quad.p99, theta == 0.5 ? 5.8e-4 : 2.75e-3) << "theta " << theta;
  }
}

TEST(Tree, IssueAccuracyTargetsPlummer20000) {
  const ParticleSystem ps = generate({.model = "plummer", .n = 20000, .seed = 1});
  const auto mono = sampled_errors(ps, tree_options(0.5, false));
  EXPECT_LE(mono.median, 1.4e-3);
  EXPECT_LE(mono.p99, 9.2e-3);
  const auto quad = sampled_errors(ps, tree_options(0.5, true));
  EXPECT_LE(quad.median, 4.3e-4);
  EXPECT_LE(quad.p99, 2.2e-3);
  // Float arithmetic adds ~1e-7 only.
  const auto mono_f = sampled_errors(ps, tree_options(0.5, false, 3, Precision::Float));
  EXPECT_LE(mono_f.median, 1.4e-3);
  EXPECT_LE(mono_f.p99, 9.2e-3);
}

TEST(Tree, MomentumDriftIsSmall) {
  // Tree forces are not pairwise antisymmetric, so sum m a != 0; measured at theta 0.5,
  // Plummer N = 5000: 3.2e-5 of sum |m a| (monopole), 1.1e-5 (quadrupole). Asserted at ~3x
  // the monopole value.
  const ParticleSystem ps = generate({.model = "plummer", .n = 5000, .seed = 3});
  for (bool quad : {false, true}) {
    const ParticleSystem a = with_tree_forces(ps, tree_options(0.5, quad));
    double px = 0, py = 0, pz = 0, total = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      px += a.mass[i] * a.ax[i];
      py += a.mass[i] * a.ay[i];
      pz += a.mass[i] * a.az[i];
      total += a.mass[i] * std::hypot(a.ax[i], a.ay[i], a.az[i]);
    }
    const double drift = std::hypot(px, py, pz) / total;
    RecordProperty(quad ? "drift_quadrupole" : "drift_monopole", std::to_string(drift));
    EXPECT_LT(drift, 1e-4) << "quadrupole " << quad;
  }
}

TEST(Tree, NearlyCoincidentClumpPlusNormalBodies) {
  // 1000 bodies within 1e-12 of each other (beyond the key resolution: one deep leaf
  // bucket) plus 1000 ordinary bodies; softened so the clump's own forces are finite.
  ParticleSystem ps = test::random_system(2000, 23);
  for (std::size_t i = 0; i < 1000; ++i) {
    ps.x[i] = 0.3 + 1e-12 * ps.x[i];
    ps.y[i] = -0.2 + 1e-12 * ps.y[i];
    ps.z[i] = 0.1 + 1e-12 * ps.z[i];
  }
  const double eps = 1e-3;
  const auto stats = sampled_errors(ps, tree_options(0.5, false, 3, Precision::Double, eps), 0);
  EXPECT_LT(stats.median, 1e-2);
  EXPECT_LT(stats.max, 5e-2);
  const auto theta0 = sampled_errors(ps, tree_options(0.0, false, 3, Precision::Double, eps), 0);
  EXPECT_LT(theta0.max, 1e-10);
}

TEST(Tree, OneBodyFarAway) {
  ParticleSystem ps = generate({.model = "plummer", .n = 3000, .seed = 4});
  ps.x[0] = 1e6;
  for (bool quad : {false, true}) {
    const auto stats = sampled_errors(ps, tree_options(0.5, quad), 0);
    EXPECT_LT(stats.median, 1e-2) << "quadrupole " << quad;
    EXPECT_LT(stats.p99, 1e-2) << "quadrupole " << quad;
  }
}

TEST(Tree, PlanarUsesQuadtreeAndKeepsZExactlyZero) {
  const ParticleSystem ps = test::random_system(3000, 29, 2);
  for (bool quad : {false, true}) {
    const auto o = tree_options(0.5, quad, 2);
    auto solver = make_tree_solver(o);
    EXPECT_NE(solver->name().find("quadtree"), std::string::npos);
    ParticleSystem a = ps;
    solver->compute_accelerations(a);
    for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a.az[i], 0.0);
    EXPECT_LT(sampled_errors(ps, o, 500).median, 5e-3);
  }
  // The tree itself: 4 children at most, all cells in z = 0.
  tree::Tree t;
  tree::BuildScratch scratch;
  tree::build_tree(ps, 2, 8, 1, t, scratch);
  tree::compute_moments(t, true);
  for (std::size_t c = 0; c < t.cells(); ++c) {
    ASSERT_LE(t.child_count[c], 4);
    ASSERT_EQ(t.comz[c], 0.0);
    ASSERT_EQ(t.quad[c].xz, 0.0);
    ASSERT_EQ(t.quad[c].yz, 0.0);
  }
}

TEST(Tree, TreeStructureIsConsistent) {
  const ParticleSystem ps = generate({.model = "plummer", .n = 4000, .seed = 6});
  tree::Tree t;
  tree::BuildScratch scratch;
  tree::build_tree(ps, 3, 8, 2, t, scratch);
  tree::compute_moments(t, false);
  double total = 0;
  for (double m : ps.mass) total += m;
  EXPECT_NEAR(t.mass[0], total, 1e-12 * total);
  std::vector<int> seen(ps.size(), 0);
  for (std::uint32_t o : t.order) ++seen[o];
  EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; }));
  for (std::size_t c = 0; c < t.cells(); ++c) {
    if (t.is_leaf(c)) {
      EXPECT_TRUE(t.end[c] - t.begin[c] <= 8 || t.level[c] == 21);
      continue;
    }
    const auto first = static_cast<std::size_t>(t.first_child[c]);
    EXPECT_EQ(t.begin[first], t.begin[c]);
    EXPECT_EQ(t.end[first + t.child_count[c] - 1], t.end[c]);
    for (std::size_t ch = first; ch < first + t.child_count[c]; ++ch) {
      EXPECT_EQ(t.parent[ch], static_cast<std::int32_t>(c));
      EXPECT_GT(ch, c);
      for (std::uint32_t k = t.begin[ch]; k < t.end[ch]; ++k) {  // bodies inside the box
        EXPECT_LE(std::abs(t.x[k] - t.cx[ch]), t.half[ch] * (1 + 1e-9));
        EXPECT_LE(std::abs(t.y[k] - t.cy[ch]), t.half[ch] * (1 + 1e-9));
        EXPECT_LE(std::abs(t.z[k] - t.cz[ch]), t.half[ch] * (1 + 1e-9));
      }
    }
  }
}

TEST(Tree, SameForcesForAnyThreadCount) {
  const ParticleSystem ps = generate({.model = "plummer", .n = 6000, .seed = 8});
  for (Precision p : {Precision::Double, Precision::Float}) {
    auto o = tree_options(0.5, true, 3, p);
    o.threads = 1;
    const ParticleSystem one = with_tree_forces(ps, o);
    for (int threads : {2, 4}) {
      o.threads = threads;
      const ParticleSystem many = with_tree_forces(ps, o);
      EXPECT_EQ(many.ax, one.ax) << threads << " threads";
      EXPECT_EQ(many.ay, one.ay);
      EXPECT_EQ(many.az, one.az);
    }
  }
}

TEST(Tree, RejectsBadTheta) {
  for (double theta : {-0.1, double(NAN), double(INFINITY)}) {
    try {
      (void)make_tree_solver(tree_options(theta));
      ADD_FAILURE() << "theta " << theta << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("--theta"), std::string::npos);
    }
  }
  GravityOptions o = tree_options(0.5);
  EXPECT_NO_THROW((void)make_gravity_solver(o));
}

TEST(Tree, StatsAreReported) {
  const ParticleSystem ps = generate({.model = "plummer", .n = 5000, .seed = 9});
  auto solver = make_tree_solver(tree_options(0.5));
  ParticleSystem a = ps;
  solver->compute_accelerations(a);
  const SolverStats s = solver->stats();
  EXPECT_GT(s.interactions_per_body, 50);
  EXPECT_LT(s.interactions_per_body, 5000);
  EXPECT_GT(s.build_seconds, 0);
  EXPECT_GT(s.walk_seconds, 0);
}

}  // namespace
}  // namespace nbody
