// The integrators' options. Their physics (Kepler, the figure-eight, energy and momentum,
// damping, the schemes' definitions, time reversibility) runs on every backend through
// Simulation: tests/backend/test_integrators.cpp.
#include <gtest/gtest.h>

#include "nbody/error.hpp"
#include "nbody/integrator.hpp"

namespace nbody {
namespace {

TEST(Integrators, UnknownSchemeAndBadDampingAreErrors) {
  EXPECT_THROW((void)parse_integrator_scheme("rk4"), Error);
  IntegratorOptions i;
  i.scheme = IntegratorScheme::Leapfrog;
  i.damping = 0.0;
  EXPECT_THROW((void)make_integrator(i), Error);
}

}  // namespace
}  // namespace nbody
