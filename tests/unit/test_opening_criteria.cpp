// The CPU tree's opening criteria (issue #22; physics/opening_criterion.hpp): b_max bounds
// every cell's bodies; each criterion's errors fall as it tightens; the relative criterion
// uses theta on its first evaluation and the previous accelerations afterwards, and has a
// lighter error tail than the geometric one at the same cost. The figures are printed as
// [ measured ] lines.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "backend_test.hpp"
#include "nbody/error.hpp"
#include "nbody/force_error.hpp"
#include "nbody/gravity.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/physics/opening_criterion.hpp"
#include "tree/tree.hpp"
#include "tree/tree_solver.hpp"

namespace nbody {
namespace {

GravityOptions criterion(OpeningCriterion mac, double theta, double alpha = 0.001) {
  GravityOptions o = test::tree_options(Device::Cpu, Precision::Double, theta, 3, false, 0.01);
  o.mac = mac;
  o.alpha = alpha;
  return o;
}

struct Measured {
  ForceErrorStats errors;
  double interactions = 0;
};

/// The tree's errors on a sample of 1000 bodies after `evaluations` evaluations by one
/// solver (the relative criterion needs a first one).
Measured measure(const ParticleSystem& ps, const GravityOptions& o, int evaluations = 1) {
  auto solver = make_tree_solver(o);
  ParticleSystem approx = ps;
  for (int k = 0; k < evaluations; ++k) solver->compute_accelerations(approx);
  const auto idx = sample_indices(ps.size(), 1000, 7);
  ParticleSystem exact = ps;
  direct_accelerations_for(ps, idx, 1.0, o.softening, exact);
  const Measured m{summarize_errors(relative_force_errors(approx, exact, idx)),
                   solver->stats().interactions_per_body};
  std::printf(
      "[ measured ] %s theta %.2f alpha %.4f: median %.3e, p99 %.3e, %.0f "
      "interactions per body\n",
      std::string(to_string(o.mac)).c_str(), o.theta, o.alpha, m.errors.median, m.errors.p99,
      m.interactions);
  return m;
}

const ParticleSystem& plummer() {
  static const ParticleSystem ps = generate({.model = "plummer", .n = 20000, .seed = 3});
  return ps;
}

TEST(OpeningCriteria, BmaxBoundsEveryCellsBodies) {
  tree::Tree t;
  tree::BuildScratch scratch;
  tree::build_tree(plummer(), 3, 8, 2, t, scratch);
  tree::compute_moments(t, false);
  std::size_t tight = 0;
  for (std::size_t c = 0; c < t.cells(); ++c) {
    double reach = 0;
    for (std::uint32_t k = t.begin[c]; k < t.end[c]; ++k) {
      reach =
          std::max(reach, std::hypot(t.x[k] - t.comx[c], t.y[k] - t.comy[c], t.z[k] - t.comz[c]));
    }
    EXPECT_GE(t.bmax[c], reach * (1 - 1e-12)) << "cell " << c;
    // No looser than the farthest corner of the cell from its centre of mass.
    EXPECT_LE(t.bmax[c], std::sqrt(3.0) * 2 * t.half[c] * (1 + 1e-12)) << "cell " << c;
    tight += t.bmax[c] <= reach * (1 + 1e-12) ? 1 : 0;
  }
  EXPECT_GT(tight, t.cells() / 2);  // exact in the leaves at least
}

TEST(OpeningCriteria, ErrorsFallAsEachCriterionTightens) {
  const ParticleSystem& ps = plummer();
  for (const OpeningCriterion mac : {OpeningCriterion::Geometric, OpeningCriterion::Bmax}) {
    const Measured loose = measure(ps, criterion(mac, 0.8));
    const Measured tight = measure(ps, criterion(mac, 0.4));
    EXPECT_LT(tight.errors.median, 0.5 * loose.errors.median);
    EXPECT_LT(tight.errors.p99, 0.5 * loose.errors.p99);
    EXPECT_GT(tight.interactions, loose.interactions);
  }
  const Measured loose = measure(ps, criterion(OpeningCriterion::Relative, 0.5, 0.01), 2);
  const Measured tight = measure(ps, criterion(OpeningCriterion::Relative, 0.5, 0.0005), 2);
  EXPECT_LT(tight.errors.median, 0.3 * loose.errors.median);
  EXPECT_LT(tight.errors.p99, 0.3 * loose.errors.p99);
}

TEST(OpeningCriteria, BmaxAtThetaZeroIsTheDirectSum) {
  const Measured m = measure(plummer(), criterion(OpeningCriterion::Bmax, 0.0));
  EXPECT_LT(m.errors.max, 1e-12);
}

TEST(OpeningCriteria, RelativeStartsWithThetaThenUsesTheLastAccelerations) {
  const ParticleSystem& ps = plummer();
  // First evaluation: theta decides, bit for bit the geometric criterion's.
  ParticleSystem geometric = ps, relative = ps;
  make_tree_solver(criterion(OpeningCriterion::Geometric, 0.5))->compute_accelerations(geometric);
  auto solver = make_tree_solver(criterion(OpeningCriterion::Relative, 0.5, 0.002));
  solver->compute_accelerations(relative);
  EXPECT_EQ(relative.ax, geometric.ax);
  // Second: alpha decides, and the lists change.
  const double first = solver->stats().interactions_per_body;
  solver->compute_accelerations(relative);
  EXPECT_NE(solver->stats().interactions_per_body, first);
  EXPECT_NE(relative.ax, geometric.ax);
  // Bodies merged away since (another N): theta again.
  ParticleSystem fewer = ps;
  fewer.remove({0});
  solver->compute_accelerations(fewer);
  ParticleSystem fewer_geometric = ps;
  fewer_geometric.remove({0});
  make_tree_solver(criterion(OpeningCriterion::Geometric, 0.5))
      ->compute_accelerations(fewer_geometric);
  EXPECT_EQ(fewer.ax, fewer_geometric.ax);
}

TEST(OpeningCriteria, RelativeWithZeroAccelerationsStopsAtThetaMin) {
  // |a_old| = 0 asks every cell to be opened; the floor (opening_criterion.hpp) uses a cell
  // whole below kRelativeThetaMin all the same, so the walk is the geometric one at that
  // angle, bit for bit, and not a direct sum.
  const ParticleSystem& ps = plummer();
  auto solver = make_tree_solver(criterion(OpeningCriterion::Relative, 0.5, 0.002));
  ParticleSystem relative = ps;
  solver->compute_accelerations(relative);  // the first evaluation, by theta
  for (auto* a : {&relative.ax, &relative.ay, &relative.az}) a->assign(ps.size(), 0.0);
  solver->compute_accelerations(relative);
  ParticleSystem geometric = ps;
  auto at_floor = make_tree_solver(criterion(OpeningCriterion::Geometric, kRelativeThetaMin));
  at_floor->compute_accelerations(geometric);
  EXPECT_EQ(relative.ax, geometric.ax);
  EXPECT_EQ(solver->stats().interactions_per_body, at_floor->stats().interactions_per_body);
  // Not the direct sum (N - 1 per body); at N = 20000 theta 0.1 saves little (16841).
  EXPECT_LT(solver->stats().interactions_per_body, 0.9 * double(ps.size() - 1));
}

TEST(OpeningCriteria, RelativeHasTheLighterTailAtTheSameCost) {
  // GADGET-4's point: the relative criterion spends its interactions where the force is
  // weak, so at equal cost its worst errors are smaller.
  const ParticleSystem& ps = plummer();
  const Measured geometric = measure(ps, criterion(OpeningCriterion::Geometric, 0.5));
  const Measured relative = measure(ps, criterion(OpeningCriterion::Relative, 0.5, 0.002), 2);
  EXPECT_LT(relative.interactions, 1.05 * geometric.interactions);
  EXPECT_LT(relative.errors.p99, 0.7 * geometric.errors.p99);
}

TEST(OpeningCriteria, BadAlphaIsAnError) {
  for (const double alpha : {0.0, -1.0, std::nan("")}) {
    GravityOptions o = criterion(OpeningCriterion::Relative, 0.5, alpha);
    EXPECT_THROW(validate(o), Error) << alpha;
  }
  EXPECT_EQ(parse_opening_criterion("bmax"), OpeningCriterion::Bmax);
  EXPECT_THROW((void)parse_opening_criterion("cubic"), Error);
}

}  // namespace
}  // namespace nbody
