#pragma once
// What the collision engine's two halves share: collision_detect.cu (the sorted grid and
// the candidate pairs) and collision_resolve.cu (impulses, push-apart, merges; its merge
// kernels in collision_merge_kernels.cuh). Only those files include this.
#include <cuda_runtime.h>

#include <cstddef>

#include "collisions/cuda/collision_engine.cuh"
#include "core/cuda/launch.cuh"
#include "nbody/physics/collision_response.hpp"

namespace nbody::cuda_collisions {

inline constexpr int kThreads = 256;

inline unsigned blocks_for(std::size_t n) {
  return gpu::blocks_for(n, kThreads);
}

/// Body i of the engine's arrays, as the collision response takes it.
__device__ inline CollisionBody<double> load(const BodyArrays& b, unsigned i) {
  return {b.x[i], b.y[i], b.z[i], b.vx[i], b.vy[i], b.vz[i], b.m[i], b.r[i]};
}

/// Slots of the engine's device counters (stats_) and their pinned copies (host_).
enum Stat { kContacts, kMerges, kMaxOverlap, kPairs, kStats };

/// The bodies' bounding box and radius range (reduced by detect()).
struct Extent {
  double lo[3], hi[3], rmin, rmax;  // rmin: smallest positive radius
};

/// The grid every kernel of one detection uses (computed on the device).
struct Grid {
  double lo[3];
  double h0;
  double reach;  // 1 + skin
  int levels;
  int dim;
  unsigned level_mask;  // levels that hold bodies
};

}  // namespace nbody::cuda_collisions
