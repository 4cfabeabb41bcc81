#pragma once
// Bit spreading for Morton keys, host and device: the CPU tree (tree_build.cpp) and the GPU
// tree (tree/cuda/tree_gpu_build.cu) interleave coordinates the same way (x bit 0, y bit 1,
// z bit 2 of each digit); the tree collision search (collisions/contact_tree.cpp and its
// GPU twin) spreads with the same functions, axis 0 the most significant.
#include <cstdint>

#include "nbody/host_device.hpp"

namespace nbody {

/// Spreads the low 21 bits of v to every third bit (bit k -> bit 3k).
NBODY_HD std::uint64_t spread3(std::uint64_t v) {
  v &= 0x1fffff;
  v = (v | v << 32) & 0x1f00000000ffffULL;
  v = (v | v << 16) & 0x1f0000ff0000ffULL;
  v = (v | v << 8) & 0x100f00f00f00f00fULL;
  v = (v | v << 4) & 0x10c30c30c30c30c3ULL;
  v = (v | v << 2) & 0x1249249249249249ULL;
  return v;
}

/// Spreads the low 31 bits of v to every other bit (bit k -> bit 2k).
NBODY_HD std::uint64_t spread2(std::uint64_t v) {
  v &= 0x7fffffff;
  v = (v | v << 16) & 0x0000ffff0000ffffULL;
  v = (v | v << 8) & 0x00ff00ff00ff00ffULL;
  v = (v | v << 4) & 0x0f0f0f0f0f0f0f0fULL;
  v = (v | v << 2) & 0x3333333333333333ULL;
  v = (v | v << 1) & 0x5555555555555555ULL;
  return v;
}

/// spread2 in 2D, spread3 in 3D.
NBODY_HD std::uint64_t spread(std::uint64_t v, int dim) {
  return dim == 2 ? spread2(v) : spread3(v);
}

}  // namespace nbody
