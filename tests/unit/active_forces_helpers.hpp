#pragma once
// Shared by the tests of compute_forces_active() (test_active_forces*.cpp): entries set to
// sentinels, the active and the full evaluations, and the checks of what an evaluation wrote.
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

#include "nbody/force_error.hpp"
#include "nbody/gravity.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/particles.hpp"

namespace nbody::active_forces_test {

inline constexpr double kG = 1.7;  // not a power of two: a missing or doubled G shows
// What the entries hold before an evaluation: a solver that writes where it must not
// changes them.
inline constexpr double kSentinel[4] = {-7.25e77, 3.5e-71, 1.125e99, -2.0e-90};

inline ParticleSystem plummer(std::size_t n, int dim = 3, std::uint64_t seed = 3) {
  return generate({.model = "plummer", .n = n, .seed = seed, .dim = dim});
}

/// k distinct bodies of n, drawn with the seed, ascending (none for k == 0).
inline std::vector<std::uint32_t> pick(std::size_t n, std::size_t k, std::uint64_t seed = 11) {
  std::vector<std::uint32_t> active;
  if (k == 0) return active;
  for (const std::size_t i : sample_indices(n, k, seed)) {
    active.push_back(static_cast<std::uint32_t>(i));
  }
  return active;
}

inline std::vector<std::uint32_t> everyone(std::size_t n) {
  std::vector<std::uint32_t> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = static_cast<std::uint32_t>(i);
  return all;
}

inline std::vector<double>* field(ParticleSystem& ps, int f) {
  return f == 0 ? &ps.ax : f == 1 ? &ps.ay : f == 2 ? &ps.az : &ps.potential;
}

inline const std::vector<double>& field(const ParticleSystem& ps, int f) {
  return f == 0 ? ps.ax : f == 1 ? ps.ay : f == 2 ? ps.az : ps.potential;
}

/// The flag states an evaluation must leave as they were: (accelerations, potentials).
inline constexpr std::pair<bool, bool> kFlagStates[] = {
    {false, false}, {true, false}, {true, true}};

/// Every entry (potentials too) set to its field's sentinel; accelerations marked valid
/// and potentials invalid unless told otherwise.
inline ParticleSystem with_sentinels(ParticleSystem ps, bool accelerations_valid = true,
                                     bool potentials_valid = false) {
  for (int f = 0; f < 4; ++f) field(ps, f)->assign(ps.size(), kSentinel[f]);
  ps.invalidate_accelerations();
  if (accelerations_valid) ps.set_accelerations_valid();
  if (potentials_valid) ps.set_potentials_valid();
  return ps;
}

inline bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

/// The active evaluation of a system whose entries hold the sentinels.
inline ParticleSystem active_forces(GravitySolver& solver, const ParticleSystem& ps, bool potential,
                                    const std::vector<std::uint32_t>& active) {
  ParticleSystem out = with_sentinels(ps);
  solver.compute_forces_active(out, potential, active);
  return out;
}

inline ParticleSystem full_forces(GravitySolver& solver, ParticleSystem ps, bool potential) {
  solver.compute_forces(ps, potential);
  return ps;
}

/// Inactive entries keep their sentinels bit for bit; so do the active potentials when
/// none were asked for; active entries hold finite values (no sentinel, no NaN).
inline void expect_only_active_written(const ParticleSystem& out, bool potential,
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

inline double norm(double x, double y, double z) {
  return std::sqrt(x * x + y * y + z * z);
}

/// Largest relative difference at the active bodies: |a - b| / |b| for the acceleration
/// vector, and |phi_a - phi_b| / |phi_b| for the potential (when asked).
inline double worst_relative(const ParticleSystem& a, const ParticleSystem& b,
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

inline void expect_same_results(const ParticleSystem& a, const ParticleSystem& b, bool potential) {
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
inline void expect_shares_sum_to_whole(const std::function<std::unique_ptr<GravitySolver>()>& make,
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

/// compute_forces_active leaves the validity flags as they were, whatever they were.
inline void expect_flags_unchanged(GravitySolver& s, const ParticleSystem& ps) {
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

}  // namespace nbody::active_forces_test
