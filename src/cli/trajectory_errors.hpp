#pragma once
// Seed 003's accuracy measure: how far K leapfrog steps at an opening angle drift from the
// same steps at theta = 0. Used by `nbody accuracy --steps` and `nbody bench theta`.
#include <cstdint>
#include <utility>

#include "nbody/gravity.hpp"
#include "nbody/particles.hpp"

namespace nbody::cli {

/// Σ|x - x0|² and Σ|v - v0|² after `steps` leapfrog steps with `options` and with the same
/// options at theta = 0, from the same start.
[[nodiscard]] std::pair<double, double> trajectory_errors(const ParticleSystem& start,
                                                          const GravityOptions& options,
                                                          std::uint64_t steps, double dt);

}  // namespace nbody::cli
