#pragma once
// The CPU collision handler (hierarchical grid + sequential resolution), built by
// make_collision_handler for Device::Cpu.
#include <memory>

#include "nbody/collisions.hpp"

namespace nbody::collisions {

[[nodiscard]] std::unique_ptr<CollisionHandler> make_grid_collision_handler(
    const CollisionOptions& options);

}  // namespace nbody::collisions
