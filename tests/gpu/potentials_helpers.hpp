#pragma once
// Shared by the GPU potential tests (test_potentials*_cuda.cpp): the float64 references
// (cached), the errors against them and their tolerances, evaluations with and without.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gravity/direct_scalar.hpp"
#include "nbody/diagnostics.hpp"
#include "nbody/gravity.hpp"
#include "nbody/initial_conditions.hpp"
#include "unit/test_helpers.hpp"

namespace nbody::potentials_test {

inline constexpr double kSoftening = 0.01;

/// Norm-wise ||phi - ref|| / ||ref|| and the worst body's |phi_i - ref_i| / |ref_i|.
struct PotentialError {
  double relative = 0, worst = 0;
};

inline PotentialError potential_error(const std::vector<double>& got,
                                      const std::vector<double>& ref) {
  PotentialError e;
  double num = 0, den = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double d = got[i] - ref[i];
    num += d * d;
    den += ref[i] * ref[i];
    e.worst = std::max(e.worst, std::abs(d) / std::abs(ref[i]));
  }
  e.relative = std::sqrt(num / den);
  return e;
}

/// The tolerances of an exact sum: float32 sums of ~1e4 terms, float64 to round-off.
inline PotentialError exact_tolerance(Precision p) {
  return p == Precision::Float ? PotentialError{1e-5, 1e-4} : PotentialError{1e-12, 1e-11};
}

inline double w_from(const ParticleSystem& ps) {
  return diagnostics_from_potentials(ps).potential;
}

/// A system with its float64 references: body_potentials, potential_energy and (for the
/// tree's force error) the float64 direct accelerations. Cached: O(N^2) each.
struct Reference {
  ParticleSystem ps;
  std::vector<double> phi;
  double w = 0;
};

inline const Reference& reference(const std::string& model, std::size_t n, double softening,
                                  bool accelerations = false) {
  static std::map<std::tuple<std::string, std::size_t, double, bool>, Reference> cache;
  const auto key = std::make_tuple(model, n, softening, accelerations);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  Reference r;
  if (model == "random") {
    r.ps = test::random_system(n, 4321 + n);
  } else {
    ModelOptions m;
    m.model = model;
    m.n = n;
    m.seed = 3;
    m.dim = model == "disk" ? 2 : 3;
    r.ps = generate(m);
  }
  if (accelerations) DirectSumScalar<double>(1.0, softening).compute_accelerations(r.ps);
  r.phi = body_potentials(r.ps, 1.0, softening);
  r.w = potential_energy(r.ps, 1.0, softening);
  return cache.emplace(key, std::move(r)).first->second;
}

/// One solver, two evaluations: without the potentials (ps.potential set to a marker that
/// must survive) and with them.
struct OnOff {
  ParticleSystem off, on;
};

inline OnOff evaluate(GravitySolver& solver, const ParticleSystem& ps) {
  OnOff e{ps, ps};
  e.off.potential.assign(ps.size(), 42.0);
  solver.compute_forces(e.off, false);
  solver.compute_forces(e.on, true);
  return e;
}

inline void expect_flags(const OnOff& e, const std::string& what) {
  EXPECT_FALSE(e.off.potentials_valid()) << what;
  EXPECT_EQ(e.off.potential, std::vector<double>(e.off.size(), 42.0)) << what;
  EXPECT_TRUE(e.on.potentials_valid()) << what;
  EXPECT_EQ(e.on.potential.size(), e.on.size()) << what;
  EXPECT_TRUE(e.on.accelerations_valid()) << what;
}

inline void expect_same_accelerations(const ParticleSystem& a, const ParticleSystem& b,
                                      const std::string& what) {
  EXPECT_EQ(a.ax, b.ax) << what;
  EXPECT_EQ(a.ay, b.ay) << what;
  EXPECT_EQ(a.az, b.az) << what;
}

}  // namespace nbody::potentials_test
