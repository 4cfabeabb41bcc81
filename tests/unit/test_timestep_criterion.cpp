// The dynamical time-step criterion (physics/timestep.hpp, integrators/cell_density.hpp):
// the step is eta over the local dynamical frequency, from a Kepler orbit's |a|^2 / |phi|
// or from the density of the body's neighbourhood, so that it shrinks into a cusp where
// the acceleration rule's stays flat.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "integrators/cell_density.hpp"
#include "integrators/cell_density_rule.hpp"
#include "nbody/diagnostics.hpp"
#include "nbody/error.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/physics/timestep.hpp"
#include "nbody/simulation.hpp"
#include "tree/gpu_walk_options.hpp"

namespace nbody {
namespace {

ParticleSystem hernquist(std::size_t n, std::uint64_t seed) {
  ModelOptions mo;
  mo.model = "hernquist";
  mo.n = n;
  mo.seed = seed;
  return generate(mo);
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(v.size() / 2), v.end());
  return v[v.size() / 2];
}

TEST(DynamicalStep, KeplerOrbitStepIsEtaOverItsFrequency) {
  // A body at r from a point mass M: |a|^2 / |phi| = G M / r^3 = (2 pi / P)^2.
  const double G = 1.5, M = 2.0, r = 0.7, eta = 0.05;
  const double a = G * M / (r * r), phi = -G * M / r;
  const double want = eta * std::sqrt(r * r * r / (G * M));
  EXPECT_NEAR(wanted_step_dynamical(eta, 0.0, a * 0.6, -a * 0.8, 0.0, phi), want, 1e-14 * want);
  // A denser neighbourhood wins; nothing at all wants no limit.
  EXPECT_NEAR(wanted_step_dynamical(eta, 100.0, a, 0, 0, phi), eta / 10.0, 1e-15);
  EXPECT_TRUE(std::isinf(wanted_step_dynamical(eta, 0.0, 0, 0, 0, 0)));
}

TEST(CellDensity, UniformCubeGivesItsDensity) {
  // 20,000 bodies of total mass 1 uniform in the unit cube: omega^2 = (4 pi / 3) G rho.
  ParticleSystem ps;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const std::size_t n = 20000;
  for (std::size_t i = 0; i < n; ++i)
    ps.add(Body{{u(rng), u(rng), u(rng)}, {0, 0, 0}, 1.0 / n, 0, 0});
  std::vector<double> w2;
  CellDensity().compute(ps, 3, 1.0, 0.0, w2);
  ASSERT_EQ(w2.size(), n);
  std::vector<double> inside;
  for (std::size_t i = 0; i < n; ++i) {
    const double edge =
        std::min({ps.x[i], ps.y[i], ps.z[i], 1 - ps.x[i], 1 - ps.y[i], 1 - ps.z[i]});
    if (edge > 0.15) inside.push_back(w2[i]);
  }
  const double expected = 4 * std::numbers::pi / 3;
  const double m = median(inside);
  std::printf("uniform cube: median omega^2 %.4f, (4 pi / 3) G rho %.4f\n", m, expected);
  EXPECT_NEAR(m, expected, 0.3 * expected);
}

TEST(CellDensity, CuspIsDenserThanTheHalo) {
  // A Hernquist sphere: the density falls as 1 / r in the cusp, as 1 / r^4 outside.
  const ParticleSystem ps = hernquist(20000, 5);
  std::vector<double> w2;
  CellDensity().compute(ps, 3, 1.0, 0.01, w2);
  std::vector<double> centre, halo;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    const double r = std::sqrt(ps.x[i] * ps.x[i] + ps.y[i] * ps.y[i] + ps.z[i] * ps.z[i]);
    if (r < 0.1) centre.push_back(w2[i]);
    if (r > 0.9 && r < 1.1) halo.push_back(w2[i]);
  }
  ASSERT_GT(centre.size(), 20u);
  const double ratio = median(centre) / median(halo);
  std::printf("hernquist: median omega^2 at r < 0.05 over r ~ 1: %.1f\n", ratio);
  EXPECT_GT(ratio, 30.0);
  EXPECT_LT(ratio, 600.0);
}

TEST(CellDensity, FewBodiesShareTheRootCell) {
  ParticleSystem ps;
  for (int k = 0; k < 5; ++k) ps.add(Body{{0.5 * k, 0.1 * k, 0}, {0, 0, 0}, 0.2, 0, 0});
  std::vector<double> w2;
  CellDensity().compute(ps, 3, 2.0, 0.1, w2);
  for (const double v : w2) EXPECT_DOUBLE_EQ(v, cell_omega2(2.0, 1.0, 2.0, 0.1));
}

/// omega2_at (the per-body rule the GPU kernel runs) for every body, from the rule's own
/// functions and std::sort: what CellDensity::compute must give bit for bit.
std::vector<double> omega2_body_by_body(const ParticleSystem& ps, int dim, double G, double eps) {
  const std::size_t n = ps.size();
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  const std::vector<double>* c[3] = {&ps.x, &ps.y, &ps.z};
  for (int a = 0; a < dim; ++a)
    for (const double v : *c[a]) lo[a] = std::min(lo[a], v), hi[a] = std::max(hi[a], v);
  double corner[3], side = 0;
  density::cube(lo, hi, dim, corner, &side);
  const double scale = std::ldexp(1.0, density::key_bits(dim)) / side;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> keyed(n);
  for (std::size_t i = 0; i < n; ++i)
    keyed[i] = {density::key(corner, scale, dim, ps.x[i], ps.y[i], ps.z[i]), std::uint32_t(i)};
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::uint64_t> keys(n);
  std::vector<double> before(n + 1, 0.0);
  for (std::size_t p = 0; p < n; ++p)
    keys[p] = keyed[p].first, before[p + 1] = before[p] + ps.mass[keyed[p].second];
  const std::size_t want = std::min<std::size_t>(kDensityCellBodies, n);
  std::vector<std::uint8_t> level(n - want + 1);
  for (std::size_t s = 0; s < level.size(); ++s)
    level[s] = std::uint8_t(density::common_level(keys[s], keys[s + want - 1], dim));
  std::vector<double> w2(n);
  for (std::size_t p = 0; p < n; ++p)
    w2[keyed[p].second] =
        density::omega2_at(keys.data(), before.data(), level.data(), n, want, p, dim, side, G, eps);
  return w2;
}

TEST(CellDensity, ReusedCellsGiveTheRuleBodyByBody) {
  // CellDensity::compute reuses a cell's bounds and omega^2 for the next bodies in key order
  // and runs on threads above 50,000 bodies: every value must be the per-body rule's (the
  // GPU's), in a cusp, with bodies at one point, and in 2D; below and above that threshold.
  for (const std::size_t n : {std::size_t(3000), std::size_t(60000)}) {
    ParticleSystem ps = hernquist(n, 7);
    for (std::size_t i = 0; i < 40; ++i) ps.x[i] = ps.x[40], ps.y[i] = ps.y[40], ps.z[i] = ps.z[40];
    for (const int dim : {3, 2}) {
      std::vector<double> w2;
      CellDensity().compute(ps, dim, 1.3, 0.01, w2);
      const std::vector<double> want = omega2_body_by_body(ps, dim, 1.3, 0.01);
      ASSERT_EQ(w2.size(), want.size());
      std::size_t differ = 0;
      for (std::size_t i = 0; i < n; ++i) differ += w2[i] != want[i];
      EXPECT_EQ(differ, 0u) << "n " << n << ", dim " << dim;
    }
  }
}

TEST(DynamicalStep, CentralBodiesOfACuspTakeSmallerSteps) {
  // Hernquist N = 4000, eps = 0.01: the acceleration rule gives the centre and r ~ 0.3 the
  // same step (|a| is flat in a cusp); the dynamical one gives the centre smaller ones, so
  // more bins are populated at the same smallest step.
  const ParticleSystem ps = hernquist(4000, 9);
  auto populated = [&](TimestepCriterion c, double eta) {
    SimulationOptions o;
    o.gravity.algorithm = GravityAlgorithm::Tree;
    o.gravity.softening = 0.01;
    o.integrator.timestep = TimestepMode::Adaptive;
    o.integrator.timestep_criterion = c;
    o.integrator.eta = eta;
    Simulation sim(ps, o);
    sim.step(0.125);
    return sim.timestep_stats().bins;
  };
  const auto dyn = populated(TimestepCriterion::Dynamical, 0.1);
  const auto acc = populated(TimestepCriterion::Acceleration, 0.05);
  const auto share_in_bin0 = [](const std::vector<std::uint64_t>& b) {
    std::uint64_t all = 0;
    for (auto c : b) all += c;
    return double(b[0]) / double(all);
  };
  std::printf("hernquist: bins dynamical %zu (%.2f in bin 0), acceleration %zu (%.2f)\n",
              dyn.size(), share_in_bin0(dyn), acc.size(), share_in_bin0(acc));
  EXPECT_GE(dyn.size(), 3u);
  EXPECT_GT(share_in_bin0(dyn), share_in_bin0(acc));
}

// NBODY_TREE_REFIT: the GPU substeps' refit, an experiment on with "1"; anything but 0 or 1 is
// refused with a message that names the variable and the text.
TEST(GpuWalkOptions, RefitRefusesAnythingButZeroOrOne) {
  EXPECT_FALSE(tree_refit_from(nullptr));
  EXPECT_FALSE(tree_refit_from("0"));
  EXPECT_TRUE(tree_refit_from("1"));
  for (const char* text : {"", "yes", "2", "-1", " 1", "1 ", "0.5"}) {
    try {
      (void)tree_refit_from(text);
      ADD_FAILURE() << "NBODY_TREE_REFIT accepted '" << text << "'";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("NBODY_TREE_REFIT"), std::string::npos) << what;
      EXPECT_NE(what.find(text), std::string::npos) << what;
    }
  }
}

}  // namespace
}  // namespace nbody
