// GravitySolver::compute_forces_active() of the CPU direct sum (SIMD) and the CPU tree,
// which compute the active bodies alone (hierarchical time steps): the active entries as
// a full compute_forces() of the same solver gives them (the direct sum to rounding, the
// tree to its own accuracy, both bit for bit when every body is active), every other
// entry and the validity flags untouched, empty and single-body lists, no NaN without
// softening, shares of several processes that sum to the whole, and a cost that follows
// the number of active bodies (counted, never timed).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gravity/direct_simd_kernels.hpp"
#include "nbody/force_error.hpp"
#include "nbody/gravity.hpp"
#include "nbody/initial_conditions.hpp"
#include "test_helpers.hpp"
#include "tree/tree_solver.hpp"

namespace nbody {
namespace {

constexpr double kG = 1.7;  // not a power of two: a missing or doubled G shows
// What the entries hold before an evaluation: a solver that writes where it must not
// changes them.
constexpr double kSentinel[4] = {-7.25e77, 3.5e-71, 1.125e99, -2.0e-90};

ParticleSystem plummer(std::size_t n, int dim = 3, std::uint64_t seed = 3) {
  return generate({.model = "plummer", .n = n, .seed = seed, .dim = dim});
}

/// k distinct bodies of n, drawn with the seed, ascending (none for k == 0).
std::vector<std::uint32_t> pick(std::size_t n, std::size_t k, std::uint64_t seed = 11) {
  std::vector<std::uint32_t> active;
  if (k == 0) return active;
  for (const std::size_t i : sample_indices(n, k, seed)) {
    active.push_back(static_cast<std::uint32_t>(i));
  }
  return active;
}

std::vector<std::uint32_t> everyone(std::size_t n) {
  std::vector<std::uint32_t> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = static_cast<std::uint32_t>(i);
  return all;
}

std::vector<double>* field(ParticleSystem& ps, int f) {
  return f == 0 ? &ps.ax : f == 1 ? &ps.ay : f == 2 ? &ps.az : &ps.potential;
}

const std::vector<double>& field(const ParticleSystem& ps, int f) {
  return f == 0 ? ps.ax : f == 1 ? ps.ay : f == 2 ? ps.az : ps.potential;
}

/// The flag states an evaluation must leave as they were: (accelerations, potentials).
constexpr std::pair<bool, bool> kFlagStates[] = {{false, false}, {true, false}, {true, true}};

/// Every entry (potentials too) set to its field's sentinel; accelerations marked valid
/// and potentials invalid unless told otherwise.
ParticleSystem with_sentinels(ParticleSystem ps, bool accelerations_valid = true,
                              bool potentials_valid = false) {
  for (int f = 0; f < 4; ++f) field(ps, f)->assign(ps.size(), kSentinel[f]);
  ps.invalidate_accelerations();
  if (accelerations_valid) ps.set_accelerations_valid();
  if (potentials_valid) ps.set_potentials_valid();
  return ps;
}

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

/// The active evaluation of a system whose entries hold the sentinels.
ParticleSystem active_forces(GravitySolver& solver, const ParticleSystem& ps, bool potential,
                             const std::vector<std::uint32_t>& active) {
  ParticleSystem out = with_sentinels(ps);
  solver.compute_forces_active(out, potential, active);
  return out;
}

ParticleSystem full_forces(GravitySolver& solver, ParticleSystem ps, bool potential) {
  solver.compute_forces(ps, potential);
  return ps;
}

/// Inactive entries keep their sentinels bit for bit; so do the active potentials when
/// none were asked for; active entries hold finite values (no sentinel, no NaN).
void expect_only_active_written(const ParticleSystem& out, bool potential,
                                const std::vector<std::uint32_t>& active) {
  std::vector<bool> is_active(out.size(), false);
  for (const std::uint32_t i : active) is_active[i] = true;
  ASSERT_EQ(out.potential.size(), out.size());
  std::size_t touched = 0, bad = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    for (int f = 0; f < 4; ++f) {
      const double v = field(out, f)[i];
      if (!is_active[i] || (f == 3 && !potential)) {
        touched += same_bits(v, kSentinel[f]) ? 0 : 1;
      } else {
        bad += (std::isfinite(v) && v != kSentinel[f]) ? 0 : 1;
      }
    }
  }
  EXPECT_EQ(touched, 0U) << "entries that must stay as they were";
  EXPECT_EQ(bad, 0U) << "active entries not computed or not finite";
}

double norm(double x, double y, double z) {
  return std::sqrt(x * x + y * y + z * z);
}

/// Largest relative difference at the active bodies: |a - b| / |b| for the acceleration
/// vector, and |phi_a - phi_b| / |phi_b| for the potential (when asked).
double worst_relative(const ParticleSystem& a, const ParticleSystem& b,
                      const std::vector<std::uint32_t>& active, bool potential) {
  double worst = 0;
  for (const std::uint32_t i : active) {
    const double d = norm(a.ax[i] - b.ax[i], a.ay[i] - b.ay[i], a.az[i] - b.az[i]);
    worst = std::max(worst, d / norm(b.ax[i], b.ay[i], b.az[i]));
    if (potential) {
      worst = std::max(worst, std::abs(a.potential[i] - b.potential[i]) / std::abs(b.potential[i]));
    }
  }
  return worst;
}

void expect_same_results(const ParticleSystem& a, const ParticleSystem& b, bool potential) {
  EXPECT_EQ(a.ax, b.ax);
  EXPECT_EQ(a.ay, b.ay);
  EXPECT_EQ(a.az, b.az);
  if (potential) {
    EXPECT_EQ(a.potential, b.potential);
  }
}

/// The sum over parts of compute_forces_active with set_share(part, parts): equal to the
/// single-process result, every part writing the active entries only (computed or exact
/// zeros), each active body computed by at most one part.
void expect_shares_sum_to_whole(const std::function<std::unique_ptr<GravitySolver>()>& make,
                                const ParticleSystem& ps,
                                const std::vector<std::uint32_t>& active) {
  constexpr int kParts = 3;
  const ParticleSystem whole = active_forces(*make(), ps, true, active);
  ParticleSystem sum = with_sentinels(ps);
  for (const std::uint32_t i : active) {
    for (int f = 0; f < 4; ++f) (*field(sum, f))[i] = 0.0;
  }
  std::vector<int> computed_by(ps.size(), 0);
  for (int part = 0; part < kParts; ++part) {
    SCOPED_TRACE("part " + std::to_string(part));
    auto solver = make();
    ASSERT_TRUE(solver->set_share(part, kParts));
    const ParticleSystem share = active_forces(*solver, ps, true, active);
    expect_only_active_written(share, true, active);
    std::size_t mine = 0;
    for (const std::uint32_t i : active) {
      for (int f = 0; f < 4; ++f) (*field(sum, f))[i] += field(share, f)[i];
      if (share.ax[i] != 0.0 || share.potential[i] != 0.0) {
        ++computed_by[i];
        ++mine;
      }
    }
    EXPECT_GT(mine, 0U);
    EXPECT_LT(mine, active.size());
  }
  for (const std::uint32_t i : active) EXPECT_EQ(computed_by[i], 1) << "body " << i;
  expect_same_results(sum, whole, true);
}

// ---- The direct sum ------------------------------------------------------------------

struct DirectCase {
  Precision precision;
  double softening;
};

std::string direct_case_name(const ::testing::TestParamInfo<DirectCase>& p) {
  return std::string(to_string(p.param.precision)) +
         (p.param.softening > 0 ? "_softened" : "_unsoftened");
}

class ActiveDirect : public ::testing::TestWithParam<DirectCase> {
 protected:
  [[nodiscard]] std::unique_ptr<GravitySolver> solver(int threads = 2) const {
    return simd::make_direct_simd(GetParam().precision, kG, GetParam().softening, threads,
                                  simd::best_isa());
  }
  [[nodiscard]] double tolerance() const {
    return GetParam().precision == Precision::Float ? 1e-5 : 1e-12;
  }
};

/// compute_forces_active leaves the validity flags as they were, whatever they were.
void expect_flags_unchanged(GravitySolver& s, const ParticleSystem& ps) {
  const std::vector<std::uint32_t> active = pick(ps.size(), 20);
  for (const bool potential : {false, true}) {
    for (const auto& [acc, pot] : kFlagStates) {
      ParticleSystem out = with_sentinels(ps, acc, pot);
      s.compute_forces_active(out, potential, active);
      EXPECT_EQ(out.accelerations_valid(), acc);
      EXPECT_EQ(out.potentials_valid(), pot);
    }
  }
}

TEST_P(ActiveDirect, ActiveEntriesMatchTheFullEvaluation) {
  const ParticleSystem ps = plummer(2000);
  for (const bool potential : {false, true}) {
    SCOPED_TRACE(potential ? "with potential" : "accelerations");
    auto s = solver();
    const ParticleSystem full = full_forces(*s, ps, potential);
    for (const std::size_t k : {std::size_t(1), std::size_t(37), std::size_t(300)}) {
      const std::vector<std::uint32_t> active = pick(ps.size(), k, 100 + k);
      const ParticleSystem out = active_forces(*s, ps, potential, active);
      expect_only_active_written(out, potential, active);
      const double worst = worst_relative(out, full, active, potential);
      RecordProperty("worst_relative_" + std::to_string(k) + (potential ? "_phi" : ""),
                     std::to_string(worst));
      EXPECT_LE(worst, tolerance()) << k << " active";
    }
  }
}

TEST_P(ActiveDirect, EveryBodyActiveIsBitIdentical) {
  const ParticleSystem ps = plummer(1000);  // not a multiple of the block
  for (const bool potential : {false, true}) {
    auto s = solver();
    const ParticleSystem full = full_forces(*s, ps, potential);
    const ParticleSystem out = active_forces(*s, ps, potential, everyone(ps.size()));
    expect_same_results(out, full, potential);
  }
}

TEST_P(ActiveDirect, FlagsAreNotChanged) {
  const ParticleSystem ps = plummer(300);
  expect_flags_unchanged(*solver(), ps);
}

TEST_P(ActiveDirect, EmptyListChangesNothing) {
  const ParticleSystem ps = plummer(500);
  auto s = solver();
  const ParticleSystem out = active_forces(*s, ps, true, {});
  expect_only_active_written(out, true, {});
  EXPECT_EQ(s->stats().interactions_per_body, 0.0);
  ParticleSystem none;
  s->compute_forces_active(none, true, {});
  EXPECT_TRUE(none.ax.empty());
}

TEST_P(ActiveDirect, SingleBodyAtEitherEnd) {
  const ParticleSystem ps = plummer(777);
  auto s = solver();
  const ParticleSystem full = full_forces(*s, ps, true);
  for (const std::uint32_t i : {0U, 400U, 776U}) {
    const ParticleSystem out = active_forces(*s, ps, true, {i});
    expect_only_active_written(out, true, {i});
    EXPECT_LE(worst_relative(out, full, {i}, true), tolerance()) << "body " << i;
  }
}

TEST_P(ActiveDirect, CoincidentBodiesGiveNoNaN) {
  // Without softening the self pair, and a distinct body at the same place, have r = 0.
  ParticleSystem ps = plummer(200);
  ps.x[5] = ps.x[4];
  ps.y[5] = ps.y[4];
  ps.z[5] = ps.z[4];
  const std::vector<std::uint32_t> active{4, 5, 150};
  const ParticleSystem out = active_forces(*solver(), ps, true, active);
  expect_only_active_written(out, true, active);
}

TEST_P(ActiveDirect, SharesSumToTheWhole) {
  const ParticleSystem ps = plummer(2000);
  const std::vector<std::uint32_t> active = pick(ps.size(), 500);  // 8 blocks of 64
  expect_shares_sum_to_whole([this] { return solver(); }, ps, active);
  // Every body active: the shares of a full evaluation, bit for bit.
  const ParticleSystem full = full_forces(*solver(), ps, true);
  ParticleSystem sum = with_sentinels(ps);
  for (int f = 0; f < 4; ++f) field(sum, f)->assign(ps.size(), 0.0);
  for (int part = 0; part < 3; ++part) {
    auto s = solver();
    s->set_share(part, 3);
    const ParticleSystem share = active_forces(*s, ps, true, everyone(ps.size()));
    for (int f = 0; f < 4; ++f) {
      for (std::size_t i = 0; i < ps.size(); ++i) (*field(sum, f))[i] += field(share, f)[i];
    }
  }
  expect_same_results(sum, full, true);
}

TEST_P(ActiveDirect, CostFollowsTheActiveBodies) {
  // 1% of N = 20000: the kernel runs 4 blocks of 64 targets against all N sources, 1.28%
  // of the full evaluation's N^2 pairs.
  constexpr std::size_t kN = 20000;
  const ParticleSystem ps = test::random_system(kN, 5);
  const std::vector<std::uint32_t> active = pick(kN, kN / 100, 9);
  auto s = solver();
  const ParticleSystem out = active_forces(*s, ps, false, active);
  expect_only_active_written(out, false, active);
  const double pairs = s->stats().interactions_per_body * double(active.size());
  const double fraction = pairs / (double(kN) * double(kN));
  RecordProperty("fraction_of_full", std::to_string(fraction));
  EXPECT_GE(fraction, 0.01);
  EXPECT_LE(fraction, 0.0130);
  // And right: against the float64 reference on the active bodies.
  ParticleSystem exact = ps;
  std::vector<std::size_t> indices(active.begin(), active.end());
  direct_accelerations_for(ps, indices, kG, GetParam().softening, exact);
  const double worst = worst_relative(out, exact, active, false);
  EXPECT_LE(worst, GetParam().precision == Precision::Float ? 1e-4 : 1e-12);
}

TEST_P(ActiveDirect, FullEvaluationCountsEveryPair) {
  const ParticleSystem ps = plummer(1000);
  auto s = solver();
  (void)full_forces(*s, ps, false);
  EXPECT_EQ(s->stats().interactions_per_body, 1024.0);  // padded to the block
}

TEST_P(ActiveDirect, BadListIsAClearError) {
  ParticleSystem ps = plummer(50);
  auto s = solver();
  EXPECT_NE(test::error_of([&] {
              s->compute_forces_active(ps, false, {3, 50});
            }).find("50"),
            std::string::npos);
  EXPECT_NE(test::error_of([&] {
              s->compute_forces_active(ps, false, {3, 3});
            }).find("twice"),
            std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(CpuDirect, ActiveDirect,
                         ::testing::Values(DirectCase{Precision::Double, 0.0},
                                           DirectCase{Precision::Double, 0.05},
                                           DirectCase{Precision::Float, 0.0},
                                           DirectCase{Precision::Float, 0.05}),
                         direct_case_name);

// ---- The tree ------------------------------------------------------------------------

struct TreeCase {
  int dim;
  bool quadrupole;
};

std::string tree_case_name(const ::testing::TestParamInfo<TreeCase>& p) {
  return std::to_string(p.param.dim) + "d_" + (p.param.quadrupole ? "quadrupole" : "monopole");
}

class ActiveTree : public ::testing::TestWithParam<TreeCase> {
 protected:
  static constexpr double kSoftening = 0.02;
  [[nodiscard]] GravityOptions options() const {
    GravityOptions o;
    o.algorithm = GravityAlgorithm::Tree;
    o.precision = Precision::Float;
    o.G = kG;
    o.softening = kSoftening;
    o.mac = OpeningCriterion::Geometric;  // the same opening at every evaluation
    o.theta = 0.5;
    o.dim = GetParam().dim;
    o.quadrupole = GetParam().quadrupole;
    return o;
  }
  [[nodiscard]] std::unique_ptr<GravitySolver> solver() const {
    return make_tree_solver(options());
  }
  [[nodiscard]] ParticleSystem system(std::size_t n) const { return plummer(n, GetParam().dim); }
  /// Bounds on the force errors at theta 0.5, float (median, max), of the full walk.
  [[nodiscard]] std::pair<double, double> tolerance() const {
    if (GetParam().dim == 3)
      return GetParam().quadrupole ? std::pair{5e-4, 5e-3} : std::pair{2e-3, 2e-2};
    return GetParam().quadrupole ? std::pair{1e-3, 3e-2} : std::pair{2e-2, 0.5};
  }
};

TEST_P(ActiveTree, ActiveEntriesAreThoseOfTheFullWalk) {
  // A group shrunk to its active bodies keeps its whole box, so the walk opens the cells a
  // full evaluation opens: each active body's forces are the full walk's, bit for bit,
  // whatever else is active (and at the tree's accuracy against the direct sum).
  const ParticleSystem ps = system(4000);
  std::vector<std::size_t> all(ps.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  ParticleSystem exact = ps;
  direct_accelerations_for(ps, all, kG, kSoftening, exact);
  const auto [median_tolerance, max_tolerance] = tolerance();
  for (const bool potential : {false, true}) {
    SCOPED_TRACE(potential ? "with potential" : "accelerations");
    auto s = solver();
    const ParticleSystem full = full_forces(*s, ps, potential);
    for (const std::size_t k : {std::size_t(1), std::size_t(40), std::size_t(400)}) {
      SCOPED_TRACE(std::to_string(k) + " active");
      const std::vector<std::uint32_t> active = pick(ps.size(), k, 200 + k);
      const ParticleSystem out = active_forces(*s, ps, potential, active);
      expect_only_active_written(out, potential, active);
      std::size_t differ = 0;
      for (const std::uint32_t i : active) {
        differ += out.ax[i] != full.ax[i] || out.ay[i] != full.ay[i] || out.az[i] != full.az[i] ||
                  (potential && out.potential[i] != full.potential[i]);
      }
      EXPECT_EQ(differ, 0u) << "active bodies whose forces differ from the full walk's";
      const std::vector<std::size_t> idx(active.begin(), active.end());
      const ForceErrorStats got = summarize_errors(relative_force_errors(out, exact, idx));
      EXPECT_LE(got.max, max_tolerance);
      if (k > 1) {
        EXPECT_LE(got.median, median_tolerance);
      }
    }
  }
}

TEST_P(ActiveTree, EveryBodyActiveIsBitIdentical) {
  const ParticleSystem ps = system(3000);
  for (const bool potential : {false, true}) {
    auto s = solver();
    const ParticleSystem full = full_forces(*s, ps, potential);
    const double full_interactions = s->stats().interactions_per_body;
    const ParticleSystem out = active_forces(*s, ps, potential, everyone(ps.size()));
    expect_same_results(out, full, potential);
    EXPECT_EQ(s->stats().interactions_per_body, full_interactions);
  }
}

TEST_P(ActiveTree, FlagsAreNotChanged) {
  const ParticleSystem ps = system(300);
  expect_flags_unchanged(*solver(), ps);
}

TEST_P(ActiveTree, EmptyListChangesNothing) {
  const ParticleSystem ps = system(500);
  auto s = solver();
  const ParticleSystem out = active_forces(*s, ps, true, {});
  expect_only_active_written(out, true, {});
  EXPECT_EQ(s->stats().interactions_per_body, 0.0);
  ParticleSystem none;
  none.dim = GetParam().dim;
  s->compute_forces_active(none, true, {});
  EXPECT_TRUE(none.ax.empty());
}

TEST_P(ActiveTree, SingleBodyAndUnsoftened) {
  const ParticleSystem ps = system(2000);
  GravityOptions o = options();
  o.softening = 0;
  auto s = make_tree_solver(o);
  ParticleSystem exact = ps;
  direct_accelerations_for(ps, {0, 1234, 1999}, kG, 0.0, exact);
  for (const std::uint32_t i : {0U, 1234U, 1999U}) {
    const ParticleSystem out = active_forces(*s, ps, true, {i});
    expect_only_active_written(out, true, {i});
    EXPECT_LE(worst_relative(out, exact, {i}, false), tolerance().second) << "body " << i;
  }
}

TEST_P(ActiveTree, SharesSumToTheWhole) {
  const ParticleSystem ps = system(5000);  // 5 chunks of 1024 bodies dealt to 3 parts
  expect_shares_sum_to_whole([this] { return solver(); }, ps, pick(ps.size(), 1000));
}

TEST_P(ActiveTree, CostFollowsTheActiveBodies) {
  // 1% active: the active bodies' interactions, all told, about 1% of the full walk's
  // (each with its whole group's list).
  const ParticleSystem ps = system(20000);
  const std::vector<std::uint32_t> active = pick(ps.size(), 200, 9);
  auto s = solver();
  (void)full_forces(*s, ps, false);
  const double full_per_body = s->stats().interactions_per_body;
  const double full = full_per_body * double(ps.size());
  const ParticleSystem out = active_forces(*s, ps, false, active);
  expect_only_active_written(out, false, active);
  const double walked = s->stats().interactions_per_body * double(active.size());
  RecordProperty("fraction_of_full", std::to_string(walked / full));
  EXPECT_GT(walked, 0.0);
  EXPECT_LE(walked, 0.015 * full);
  EXPECT_LE(s->stats().interactions_per_body, 1.5 * full_per_body);
}

TEST_P(ActiveTree, OutOfRangeIsAClearError) {
  ParticleSystem ps = system(50);
  EXPECT_NE(test::error_of([&] {
              solver()->compute_forces_active(ps, false, {3, 50});
            }).find("50"),
            std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(CpuTree, ActiveTree,
                         ::testing::Values(TreeCase{3, false}, TreeCase{3, true},
                                           TreeCase{2, false}, TreeCase{2, true}),
                         tree_case_name);

}  // namespace
}  // namespace nbody
