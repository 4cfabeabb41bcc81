#include <cmath>

#include <fmt/format.h>

#include "integrators/integrators.hpp"
#include "nbody/error.hpp"

namespace nbody {

std::vector<std::string> integrator_names() { return {"leapfrog", "euler", "kinematic"}; }

std::unique_ptr<Integrator> make_integrator(const IntegratorOptions& o) {
  if (!(o.damping > 0.0 && o.damping <= 1.0)) {
    throw Error(fmt::format("--damping {}: must be in (0, 1] (1 = no damping)", o.damping));
  }
  if (o.scheme == "leapfrog") return std::make_unique<LeapfrogKDK>(o.damping);
  if (o.scheme == "euler") return std::make_unique<SymplecticEuler>(o.damping);
  if (o.scheme == "kinematic") return std::make_unique<KinematicUpdate>(o.damping);
  throw Error(fmt::format("--integrator {}: unknown integrator (available: leapfrog, euler, kinematic)",
                          o.scheme));
}

}  // namespace nbody
