#pragma once
// The Barnes-Hut tree solver (octree in 3D, quadtree in 2D) behind GravitySolver.
#include <memory>

#include "nbody/gravity.hpp"

namespace nbody {

/// Builds the CPU tree solver from the options (theta, quadrupole, dim, softening, G,
/// threads, precision). Throws nbody::Error for invalid values.
[[nodiscard]] std::unique_ptr<GravitySolver> make_tree_solver(const GravityOptions& options);

/// The checks every tree solver (CPU or GPU) makes: theta finite and >= 0, dim 2 or 3.
/// Throws nbody::Error naming the option.
void check_tree_options(const GravityOptions& options);

}  // namespace nbody
