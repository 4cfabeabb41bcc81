// The normal transform over the per-body Philox streams (see random.hpp).
#include "ic/random.hpp"

#include <cmath>
#include <numbers>

namespace nbody::ic {

double Random::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  // Box-Muller: u1 in (0, 1) keeps log(u1) finite.
  const double u1 = uniform_open();
  const double u2 = uniform();
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double theta = 2.0 * std::numbers::pi * u2;
  spare_ = r * std::sin(theta);
  has_spare_ = true;
  return r * std::cos(theta);
}

}  // namespace nbody::ic
