// GPU ranks that own their bodies (issue 35, docs/distributed.md part 2), with the ranks as
// threads on one GPU (thread_ranks.hpp: the collectives and the point-to-point traffic go
// through the host instead of NCCL): P = 2, 3 and 4 against one process, after resident
// leapfrog steps (the bodies migrate between the ranks at every step).
// - ids: every body is on exactly one rank (all_particles() gathers N distinct ids);
// - the tree (local trees and locally essential trees, cuda/domain_forces.cuh): every
//   criterion, quadrupoles, 2D: as accurate as one process's tree against the direct sum
//   (median and 99th percentile within 1.5x), and its median difference from one process's tree
//   within the 10 % of the tree's median error (the shared top tree: measured 0.0-2.6 %
//   on 2 H200s);
// - the direct sum (bodies gathered, each-pair-once tasks dealt): one process's forces to
//   float rounding.
// - the received essential trees walked as one (NBODY_DOMAIN_MERGE=1) on 3 and 4 ranks: the
//   same bounds.
// Skipped, and saying so, without a usable CUDA device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "backend_test.hpp"
#include "gpu/cuda_copies.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/simulation.hpp"
#include "thread_ranks.hpp"

namespace nbody {
namespace {

struct Case {
  std::string name;
  GravityOptions gravity;
  std::size_t n;
};

GravityOptions gpu(GravityAlgorithm algorithm, Precision p) {
  return test::gravity_options(Device::Gpu, algorithm, p, 0.01);
}

std::vector<Case> cases() {
  GravityOptions planar = gpu(GravityAlgorithm::Tree, Precision::Float);
  planar.dim = 2;
  GravityOptions quad = gpu(GravityAlgorithm::Tree, Precision::Double);
  quad.quadrupole = true;
  GravityOptions bmax = gpu(GravityAlgorithm::Tree, Precision::Float);
  bmax.mac = OpeningCriterion::Bmax;
  GravityOptions relative = gpu(GravityAlgorithm::Tree, Precision::Float);
  relative.mac = OpeningCriterion::Relative;
  relative.alpha = 0.002;
  GravityOptions wide = gpu(GravityAlgorithm::Tree, Precision::Float);
  wide.theta = 0.8;
  return {{"tree-float", gpu(GravityAlgorithm::Tree, Precision::Float), 60000},
          {"tree-theta-0.8", wide, 60000},
          {"quadtree-float", planar, 60000},
          {"tree-double-quadrupole", quad, 40000},
          {"tree-bmax", bmax, 40000},
          {"tree-relative", relative, 40000},
          {"direct-float", gpu(GravityAlgorithm::Direct, Precision::Float), 12000}};
}

/// Three leapfrog steps, then every rank's bodies (collective), in id order.
ParticleSystem run(const Case& c, const ParticleSystem& start,
                   std::shared_ptr<ForceReducer> reducer) {
  Simulation sim(start, c.gravity, IntegratorOptions{}, {}, std::move(reducer));
  for (int s = 0; s < 3; ++s) sim.step(5e-3);
  if (sim.decomposed() && c.gravity.algorithm == GravityAlgorithm::Tree) {
    // What --timings prints of the domain's update before each evaluation (CUDA events).
    const auto& parts = sim.decomposition().update.entries();
    EXPECT_EQ(parts.size(), 3u) << c.name << ": bounds, keys, migrate";
    for (const auto& [part, seconds] : parts)
      EXPECT_TRUE(std::isfinite(seconds) && seconds >= 0)
          << c.name << ": " << part << " " << seconds;
  }
  return sim.all_particles();
}

/// |a - reference| / |reference| of every body.
std::vector<double> relative_errors(const ParticleSystem& a, const ParticleSystem& ref) {
  std::vector<double> e(ref.size());
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double dx = a.ax[i] - ref.ax[i], dy = a.ay[i] - ref.ay[i], dz = a.az[i] - ref.az[i];
    const double r =
        std::sqrt(ref.ax[i] * ref.ax[i] + ref.ay[i] * ref.ay[i] + ref.az[i] * ref.az[i]);
    e[i] = std::sqrt(dx * dx + dy * dy + dz * dz) / (r > 0 ? r : 1);
  }
  return e;
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[std::min(v.size() - 1, std::size_t(q * double(v.size())))];
}

/// The direct-sum accelerations (float64, on the host) of ps's bodies.
ParticleSystem direct_reference(const ParticleSystem& ps, const GravityOptions& g) {
  ParticleSystem ref = ps;
  GravityOptions cpu = g;
  cpu.device = Device::Cpu;
  cpu.algorithm = GravityAlgorithm::Direct;
  cpu.precision = Precision::Double;
  cpu.quadrupole = false;
  cpu.mac = OpeningCriterion::Geometric;
  make_gravity_solver(cpu)->compute_forces(ref, false);
  return ref;
}

/// A case's start (Plummer, `seed`) and one process's run of it, with its tree's error
/// against the direct sum per body (zeros for the direct sum, its own reference).
struct OneProcess {
  ParticleSystem start, one;
  std::vector<double> tree_error;
};

OneProcess one_process(const Case& c, std::uint64_t seed) {
  ModelOptions m;
  m.model = "plummer";
  m.n = c.n;
  m.seed = seed;
  m.dim = c.gravity.dim;
  OneProcess r{generate(m), {}, {}};
  r.one = run(c, r.start, nullptr);
  const bool tree = c.gravity.algorithm == GravityAlgorithm::Tree;
  r.tree_error = relative_errors(r.one, tree ? direct_reference(r.one, c.gravity) : r.one);
  return r;
}

/// A decomposed tree run `got` as accurate as one process's against the direct sum (median
/// and 99th percentile within 1.5x: positions differ only through the forces, 3 steps), and
/// apart from it by at most `share` of the tree's median error at the median.
void expect_one_process_accuracy(const Case& c, const OneProcess& ref, const ParticleSystem& got,
                                 double share, const std::string& what) {
  const std::vector<double> error = relative_errors(got, direct_reference(got, c.gravity));
  const double med = quantile(ref.tree_error, 0.5), p99 = quantile(ref.tree_error, 0.99);
  const double diff = quantile(relative_errors(got, ref.one), 0.5);
  EXPECT_LE(quantile(error, 0.99), 1.5 * p99) << what;
  EXPECT_LE(quantile(error, 0.5), 1.5 * med) << what;
  EXPECT_LE(diff, share * med) << what;
  std::printf(
      "[ measured ] %s: tree error median %.3e p99 %.3e (one process %.3e %.3e); median "
      "difference from one process %.1f %% of its error\n",
      what.c_str(), quantile(error, 0.5), quantile(error, 0.99), med, p99, 100 * diff / med);
}

TEST(GpuDomain, OwnedBodiesGiveOneProcessForces) {
  NBODY_SKIP_WITHOUT_GPU();
  for (const Case& c : cases()) {
    const OneProcess ref = one_process(c, 31);
    const ParticleSystem& one = ref.one;
    for (int parts : {2, 3, 4}) {
      const std::vector<ParticleSystem> each = testing::run_parts<ParticleSystem>(
          parts, [&](std::shared_ptr<ForceReducer> r) { return run(c, ref.start, std::move(r)); },
          test::cuda_copies());
      const std::string what = c.name + " P = " + std::to_string(parts);
      const ParticleSystem& got = each[0];
      ASSERT_EQ(got.size(), one.size()) << what;
      for (std::size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(got.id[i], one.id[i]) << what << ": the ids are not one of each";
      if (c.gravity.algorithm != GravityAlgorithm::Tree) {
        const double largest = quantile(relative_errors(got, one), 1.0);
        EXPECT_LE(largest, 1e-4) << what;
        std::printf("[ measured ] %s: largest |a - a_one| / |a_one| %.3e\n", what.c_str(), largest);
        continue;
      }
      // Measured: within 1.1x of one process's, except theta 0.8 on 2 ranks (1.33x the median,
      // 1.39x the 99th percentile) while its forces differ from one process's by 8 % of the
      // error at the median: a minority of bodies differ by more, likely those whose lists hold
      // the coarse cells split at the cut (docs/distributed.md, "Cells above the cuts").
      // The shared top tree gives every rank one process's coarse cells
      // (parallel/shared_top_tree.hpp): the 10 % of the tree's median error for
      // every criterion. Before it, the cells above the cuts split between ranks cost 0-27 %
      // here, and up to 48.8 % at theta 0.8 and 80.3 % with b_max from one run to the next.
      expect_one_process_accuracy(c, ref, got, 0.1, what);
    }
  }
}

// The first migration moves about half of every rank's bodies; in rounds of at most 997
// bodies a rank (NBODY_DOMAIN_MIGRATION_ROUND; the default is 2^22) it takes ~14 rounds here,
// each with its own holes, fills and keys. Every body must still be on exactly one rank, and
// the forces those of one process's tree.
TEST(GpuDomain, MigrationInRoundsKeepsEveryBodyOnce) {
  NBODY_SKIP_WITHOUT_GPU();
  const Case c = cases().front();  // tree-float, 60000 bodies
  const OneProcess ref = one_process(c, 32);
  const ParticleSystem& one = ref.one;
  const std::vector<double>& tree_error = ref.tree_error;
  ASSERT_EQ(setenv("NBODY_DOMAIN_MIGRATION_ROUND", "997", 1), 0);
  const std::vector<ParticleSystem> each = testing::run_parts<ParticleSystem>(
      3, [&](std::shared_ptr<ForceReducer> r) { return run(c, ref.start, std::move(r)); },
      test::cuda_copies());
  unsetenv("NBODY_DOMAIN_MIGRATION_ROUND");
  const ParticleSystem& got = each[0];
  ASSERT_EQ(got.size(), one.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(got.id[i], one.id[i]) << "the ids are not one of each";
  const double med = quantile(tree_error, 0.5);
  const double diff = quantile(relative_errors(got, one), 0.5);
  EXPECT_LE(diff, 0.4 * med);
  std::printf(
      "[ measured ] rounds of 997 on 3 ranks: median difference from one process %.1f %% "
      "of its error\n",
      100 * diff / med);
}

// NBODY_DOMAIN_MERGE=1 (tree_gpu_merge.cu): each rank walks the 2 or 3 essential trees it
// received as one tree joined under a root of its own. The walk meets the same cells, so the
// forces keep one process's accuracy, with the bounds above, for every criterion.
TEST(GpuDomain, ReceivedTreesWalkedAsOneKeepOneProcessForces) {
  NBODY_SKIP_WITHOUT_GPU();
  ASSERT_EQ(setenv("NBODY_DOMAIN_MERGE", "1", 1), 0);
  for (const Case& c : cases()) {
    if (c.gravity.algorithm != GravityAlgorithm::Tree) continue;
    const OneProcess ref = one_process(c, 33);
    for (int parts : {3, 4}) {
      const std::vector<ParticleSystem> each = testing::run_parts<ParticleSystem>(
          parts, [&](std::shared_ptr<ForceReducer> r) { return run(c, ref.start, std::move(r)); },
          test::cuda_copies());
      const std::string what = c.name + " joined, P = " + std::to_string(parts);
      ASSERT_EQ(each[0].size(), ref.one.size()) << what;
      expect_one_process_accuracy(c, ref, each[0], 0.1, what);
    }
  }
  unsetenv("NBODY_DOMAIN_MERGE");
}

}  // namespace
}  // namespace nbody
