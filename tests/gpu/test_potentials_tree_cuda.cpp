// Potentials from the GPU tree (theta 0 and 0.5, monopole and quadrupole, 2D and 3D, float
// and double) against the float64 CPU sum: exact at theta 0, within the force error at 0.5;
// the accelerations the same bits with and without. Skips itself without a CUDA device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <tuple>

#include "backend_test.hpp"
#include "gpu/potentials_helpers.hpp"
#include "nbody/gravity.hpp"
#include "unit/test_helpers.hpp"

namespace nbody {
namespace {

using namespace potentials_test;  // the helpers of this suite's files

// ---- The tree ---------------------------------------------------------------------------

class TreePotentials : public ::testing::TestWithParam<std::tuple<Precision, int>> {};

TEST_P(TreePotentials, ExactAtThetaZeroAndWithinTheForceErrorAtHalf) {
  NBODY_SKIP_WITHOUT_GPU();
  const auto& [precision, dim] = GetParam();
  const Reference& ref = dim == 2 ? reference("disk", 8000, kSoftening, true)
                                  : reference("plummer", 20000, kSoftening, true);
  double monopole_error = 0;
  for (bool quad : {false, true}) {
    for (double theta : {0.0, 0.5}) {
      auto solver = make_gravity_solver(
          test::tree_options(Device::Gpu, precision, theta, dim, quad, kSoftening));
      const OnOff e = evaluate(*solver, ref.ps);
      const std::string what = solver->name() + " theta " + std::to_string(theta);
      expect_flags(e, what);
      expect_same_accelerations(e.on, e.off, what);  // the tree sums in a fixed order
      const PotentialError err = potential_error(e.on.potential, ref.phi);
      const double w_rel = std::abs(w_from(e.on) - ref.w) / std::abs(ref.w);
      const double force = test::relative_acceleration_error(e.on, ref.ps);
      std::printf("[ measured ] potential %s: relative %.3e, worst body %.3e, W %.3e; force %.3e\n",
                  what.c_str(), err.relative, err.worst, w_rel, force);
      if (theta == 0) {  // every cell opened: the direct sum in tree order
        const PotentialError tol = exact_tolerance(precision);
        EXPECT_LT(err.relative, 2 * tol.relative) << what;
        EXPECT_LT(err.worst, 2 * tol.worst) << what;
        EXPECT_LT(w_rel, 2 * tol.relative) << what;
        continue;
      }
      const PotentialError exact = exact_tolerance(precision);
      if (dim == 3) {
        // In a self-gravitating sphere the potential, smoother than the force, comes out
        // below the force error (H100: 6.1e-5 against 6.7e-4 monopole, 1.2e-5 against
        // 1.6e-4 quadrupole).
        EXPECT_LT(err.relative, force) << what;
      }
      // Not so in the disk: its accelerations are the central star's, which the tree
      // computes exactly (force error 7e-6), while the star's own potential sums the
      // monopole errors of the disk's cells around it, all of one sign (H100: 3.1e-3 for
      // the star, W 1.6e-3; the quadrupoles take both to 4e-5).
      EXPECT_LT(err.relative, 2e-3) << what;
      EXPECT_LT(err.worst, 2e-2) << what;
      EXPECT_LT(w_rel, dim == 3 ? 2e-3 : 5e-3) << what;
      if (!quad) monopole_error = err.relative;
      if (quad) {
        EXPECT_LT(err.relative, std::max(monopole_error, 2 * exact.relative))
            << what << ": quadrupoles help";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(PrecisionsAndDims, TreePotentials,
                         ::testing::Combine(::testing::Values(Precision::Float, Precision::Double),
                                            ::testing::Values(3, 2)),
                         [](const auto& p) {
                           return std::string(to_string(std::get<0>(p.param))) + "_" +
                                  std::to_string(std::get<1>(p.param)) + "D";
                         });

}  // namespace
}  // namespace nbody
