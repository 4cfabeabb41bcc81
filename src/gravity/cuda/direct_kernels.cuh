#pragma once
// CUDA direct-sum kernels (naive, tiled, fast) and their launchers. Only .cu files
// include this. Every kernel evaluates nbody::accumulate_pair_acceleration
// (physics/pair_force.hpp) with a device math policy; the formula lives there alone.
#include <cuda_runtime.h>

#include <cstddef>

namespace nbody::cuda_direct {

/// One body as the kernels read it: (x, y, z, m), 16-byte (float) or 32-byte (double)
/// aligned so that a load is one LDG/LDS.128 (float) or two (double). Also used for the
/// accelerations (w unused). Own type rather than double4, which CUDA 13 deprecates.
template <class Real>
struct alignas(4 * sizeof(Real)) Vec4 {
  Real x, y, z, w;
};

enum class Kernel { Naive, Tiled, Fast };

/// Bodies each thread of the fast kernel owns (register blocking: every shared-memory
/// load of a j-body feeds this many interactions): 4 up to 256 threads per block; 2 for
/// 512 and 1024, where 64 registers per thread is all there is.
inline constexpr int kFastMaxBlockForK4 = 256;
inline constexpr int fast_bodies_per_thread(int block) { return block <= kFastMaxBlockForK4 ? 4 : 2; }

/// What one launch needs. bodies: n_padded entries (padding has mass 0).
template <class Real>
struct LaunchArgs {
  const Vec4<Real>* bodies = nullptr;
  unsigned n = 0;         // real bodies
  unsigned n_padded = 0;  // bodies in the array: multiple of the tile (tiled, fast)
  Real eps2 = 0;
  int block = 256;
  unsigned splits = 1;           // fast: j-range split over this many blocks per i-block
  unsigned j_per_split = 0;      // fast: bodies per split (multiple of block)
  Vec4<Real>* partial = nullptr; // fast, splits > 1: splits * n_padded entries
  Vec4<Real>* out = nullptr;     // n_padded accelerations (per unit G, scaled units)
};

/// Launches the kernel (and the fast kernel's reduction) on `stream`; checks each launch
/// and throws nbody::Error naming the kernel on failure.
template <class Real>
void launch(Kernel kernel, const LaunchArgs<Real>& args, cudaStream_t stream);

/// Largest number of fast-kernel blocks resident at once on the current device for this
/// block size (for choosing the number of j-splits).
template <class Real>
int fast_blocks_per_sm(int block);

}  // namespace nbody::cuda_direct
