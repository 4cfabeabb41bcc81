#pragma once
// The solver of no gravity (--gravity none, or G = 0): ballistic and granular runs, where
// the collisions are the only forces. Zero accelerations and potentials at O(N) cost,
// instead of a full force sum multiplied by G = 0.
#include <memory>

#include "nbody/gravity.hpp"

namespace nbody {

[[nodiscard]] std::unique_ptr<GravitySolver> make_no_gravity();

}  // namespace nbody
