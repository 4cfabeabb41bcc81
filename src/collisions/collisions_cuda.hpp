#pragma once
// The GPU collision handler behind CollisionHandler. Plain C++: defined in
// cuda/gpu_collision_handler.cu when the build has CUDA, else in collisions_cuda_none.cpp
// (where both functions throw the "built without CUDA" error).
#include <memory>
#include <vector>

#include "nbody/collisions.hpp"

namespace nbody::collisions {

/// The CUDA handler for options (validated by the caller): copies the bodies in, runs the
/// GPU engine, copies them out (survivors only after merges).
[[nodiscard]] std::unique_ptr<CollisionHandler> make_gpu_collision_handler(
    const CollisionOptions& options);

/// find_contact_pairs through the GPU detection (grid or tree search).
[[nodiscard]] std::vector<IndexPair> find_contact_pairs_gpu(const ParticleSystem& ps, double skin,
                                                            CollisionSearch search);

}  // namespace nbody::collisions
