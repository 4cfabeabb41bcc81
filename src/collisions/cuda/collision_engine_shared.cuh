#pragma once
// What the collision engine's two halves share: collision_detect.cu (the sorted grid and
// the candidate pairs) and collision_resolve.cu (impulses, push-apart, merges; its merge
// kernels in collision_merge_kernels.cuh). Only those files include this.
#include <cuda_runtime.h>

#include <cstddef>

#include "collisions/cuda/collision_engine.cuh"
#include "core/cuda/launch.cuh"
#include "nbody/physics/collision_response.hpp"
#include "nbody/physics/timestep.hpp"

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
/// kActiveGone: active bodies merged away (test particles: n_active counts the rest), next
/// to kMerges so that one copy takes both.
enum Stat { kContacts, kMerges, kActiveGone, kMaxOverlap, kPairs, kStats };

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

/// First of keys[0, n) that is >= k.
__device__ __forceinline__ unsigned lower_bound(const unsigned long long* keys, unsigned n,
                                                unsigned long long k) {
  unsigned lo = 0, hi = n;
  while (lo < hi) {
    const unsigned mid = lo + (hi - lo) / 2;
    if (keys[mid] < k) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/// Sets kContactFlag in the bin byte of body i (bytes of one word may be flagged by
/// other threads at the same time: an atomic OR on the word).
__device__ inline void flag_contact(std::uint8_t* bin, unsigned i) {
  const auto address = reinterpret_cast<std::uintptr_t>(bin + i);
  auto* word = reinterpret_cast<unsigned*>(address & ~std::uintptr_t(3));
  atomicOr(word, unsigned(kContactFlag) << (8 * (address & 3)));
}

/// The gate of hierarchical steps (nbody::ContactGate, as the CPU handler's apply_gate):
/// marks i and j when they overlap; whether both are in the ready bin.
__device__ inline bool through_gate(const BodyArrays& b, unsigned i, unsigned j) {
  const CollisionBody<double> bi = load(b, i), bj = load(b, j);
  if (within_reach(bi, bj, 1.0) && resolvable_overlap(contact_between(bi, bj), bi, bj)) {
    flag_contact(b.bin, i);
    flag_contact(b.bin, j);
  }
  return bin_of(b.bin[i]) == b.ready_bin && bin_of(b.bin[j]) == b.ready_bin;
}

/// The tree search's frame (collision_tree_detect.cu): the root cell's corner, the finest
/// cell width, bits per axis.
struct TreeFrame {
  double lo[3];
  double h, inv_h;
  int bits, dim;
};

}  // namespace nbody::cuda_collisions
