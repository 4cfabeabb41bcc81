// Our own uniform and normal transforms over std::mt19937_64 (see random.hpp for why).
#include "ic/random.hpp"

#include <cmath>
#include <numbers>

namespace nbody::ic {

namespace {
constexpr double kTwoPow53Inv = 0x1.0p-53;  // 2^-53: spacing of doubles in [0.5, 1)
}  // namespace

double Random::uniform() {
  // 53 random bits are exactly representable, so the product is exact: no rounding,
  // no platform-dependent behaviour.
  return static_cast<double>(next_u64() >> 11) * kTwoPow53Inv;
}

double Random::uniform_open() {
  // (k + 0.5) 2^-53 for k in [0, 2^53): exact in double, strictly inside (0, 1).
  return (static_cast<double>(next_u64() >> 11) + 0.5) * kTwoPow53Inv;
}

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
