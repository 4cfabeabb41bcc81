// The CUDA direct-sum kernels. Each thread accumulates the pull of every body on its
// body (or bodies) with nbody::accumulate_pair_acceleration; the three kernels differ in
// how the j-bodies reach the registers:
//   naive  one thread per i-body, j-bodies read from global memory (through L1/L2);
//   tiled  L. Nyland, M. Harris, J. Prins, "Fast N-Body Simulation with CUDA" (GPU Gems 3,
//          ch. 31): the block stages blockDim j-bodies in shared memory per tile;
//   fast   (below kMutualMinBodies; above, direct_mutual.cu evaluates each pair once)
//          tiled, plus 4 (2 for blocks > 256) i-bodies per thread (each shared-memory load
//          feeds that many interactions), an unrolled inner loop, and for small N the
//          j-range split over several blocks with a second reduction pass, so that every
//          SM has work.
//   active (hierarchical time steps) one thread per listed target body, all sources in
//          tiles as in the tiled kernel, the sources split over blocks when the targets
//          are few (a second pass adds the splits in order).
// Each kernel is instantiated twice: Pot false is the acceleration alone, Pot true adds the
// potential (per unit G, the self pair left out: pair_terms.cuh) in .w from the same rsqrt;
// the accelerations are the same bits either way.
// Plummer softening with eps2 > 0 makes r2 >= eps2 > 0, so the softened policies skip the
// r2 == 0 test (they are used only then); without softening the self term and coincident
// bodies give safe_rsqrt(0) = 0.
#include <cuda_runtime.h>

#include <type_traits>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/launch.cuh"
#include "gravity/cuda/device_math.cuh"
#include "gravity/cuda/direct_kernels.cuh"
#include "gravity/cuda/pair_terms.cuh"

namespace nbody::cuda_direct {

using cuda_gravity::MathFor;
using cuda_gravity::pair_term;
using gpu::Vec4;

namespace {

// ---- naive ------------------------------------------------------------------------------

template <class Real, class Math, bool Pot>
__global__ void direct_naive(const Vec4<Real>* __restrict__ bodies, unsigned n, Real eps2,
                             Vec4<Real>* __restrict__ out) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Vec4<Real> bi = bodies[i];
  Real ax = 0, ay = 0, az = 0, phi = 0;
  for (unsigned j = 0; j < n; ++j) {
    const Vec4<Real> bj = bodies[j];
    pair_term<Pot, Real, Math>(bj.x - bi.x, bj.y - bi.y, bj.z - bi.z, bj.w, eps2, ax, ay, az, phi,
                               j == i);
  }
  out[i] = {ax, ay, az, Pot ? phi : Real(0)};
}

// ---- tiled (Nyland, Harris, Prins, GPU Gems 3, ch. 31) ---------------------------------

template <class Real, class Math, bool Pot>
__global__ void direct_tiled(const Vec4<Real>* __restrict__ bodies, unsigned n_padded, Real eps2,
                             Vec4<Real>* __restrict__ out) {
  extern __shared__ unsigned char shared_raw[];
  auto* tile = reinterpret_cast<Vec4<Real>*>(shared_raw);
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;  // < n_padded (a multiple of blockDim)
  const Vec4<Real> bi = bodies[i];
  Real ax = 0, ay = 0, az = 0, phi = 0;
  for (unsigned j0 = 0; j0 < n_padded; j0 += blockDim.x) {
    tile[threadIdx.x] = bodies[j0 + threadIdx.x];
    __syncthreads();
#pragma unroll 8
    for (unsigned j = 0; j < blockDim.x; ++j) {
      const Vec4<Real> bj = tile[j];
      pair_term<Pot, Real, Math>(bj.x - bi.x, bj.y - bi.y, bj.z - bi.z, bj.w, eps2, ax, ay, az, phi,
                                 j0 + j == i);
    }
    __syncthreads();
  }
  out[i] = {ax, ay, az, Pot ? phi : Real(0)};
}

// ---- fast ---------------------------------------------------------------------------------

/// Block b.x owns i-bodies b.x * K * blockDim + k * blockDim + threadIdx.x (k < K: strided,
/// so loads and stores coalesce); block b.y sums j in [b.y * j_per_split, + j_per_split).
/// Writes out[b.y * n_padded + i] (the partial sum of split b.y; with Pot, .w the partial
/// potential).
template <class Real, class Math, int K, int MaxThreads, bool Pot>
__global__ void __launch_bounds__(MaxThreads)
    direct_fast(const Vec4<Real>* __restrict__ bodies, unsigned n_padded, unsigned j_per_split,
                Real eps2, Vec4<Real>* __restrict__ out) {
  extern __shared__ unsigned char shared_raw[];
  auto* tile = reinterpret_cast<Vec4<Real>*>(shared_raw);
  const unsigned block = blockDim.x;
  const unsigned i0 = blockIdx.x * block * K + threadIdx.x;
  Real xi[K], yi[K], zi[K], ax[K], ay[K], az[K], phi[K];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const Vec4<Real> b = bodies[i0 + unsigned(k) * block];
    xi[k] = b.x;
    yi[k] = b.y;
    zi[k] = b.z;
    ax[k] = ay[k] = az[k] = phi[k] = Real(0);
  }
  const unsigned j_begin = blockIdx.y * j_per_split;
  const unsigned j_end = min(j_begin + j_per_split, n_padded);
  for (unsigned j0 = j_begin; j0 < j_end; j0 += block) {
    tile[threadIdx.x] = bodies[j0 + threadIdx.x];
    __syncthreads();
#pragma unroll 16
    for (unsigned j = 0; j < block; ++j) {
      const Vec4<Real> bj = tile[j];  // same address across the warp: a broadcast
#pragma unroll
      for (int k = 0; k < K; ++k) {
        pair_term<Pot, Real, Math>(bj.x - xi[k], bj.y - yi[k], bj.z - zi[k], bj.w, eps2, ax[k],
                                   ay[k], az[k], phi[k], j0 + j == i0 + unsigned(k) * block);
      }
    }
    __syncthreads();
  }
  Vec4<Real>* dst = out + std::size_t(blockIdx.y) * n_padded;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    dst[i0 + unsigned(k) * block] = {ax[k], ay[k], az[k], Pot ? phi[k] : Real(0)};
  }
}

/// Second pass of the split kernels: entry k = the sum over splits of
/// partial[s * n + k], in split order (deterministic, no atomics), the potentials too with
/// Pot, into out[k] (the fast kernel's padded bodies) or out[targets[k]] (active targets).
template <class Real, bool Pot>
__global__ void reduce_splits(const Vec4<Real>* __restrict__ partial, unsigned n, unsigned splits,
                              const unsigned* __restrict__ targets, Vec4<Real>* __restrict__ out) {
  const unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  Real ax = 0, ay = 0, az = 0, phi = 0;
  for (unsigned s = 0; s < splits; ++s) {
    const Vec4<Real> p = partial[std::size_t(s) * n + k];
    ax += p.x;
    ay += p.y;
    az += p.z;
    if constexpr (Pot) phi += p.w;
  }
  out[targets ? targets[k] : k] = {ax, ay, az, phi};
}

// ---- active targets (hierarchical time steps) --------------------------------------------

/// One thread per target body targets[k] (k = blockIdx.x * kActiveBlock + threadIdx.x), the
/// sources [b.y * j_per_split, + j_per_split) (cut at n) staged in shared-memory tiles as
/// in the tiled kernel. One split: out[targets[k]]; several: partial[b.y * n_targets + k].
/// Idle threads (k >= n_targets) still load their tile entries.
template <class Real, class Math, bool Pot>
__global__ void __launch_bounds__(kActiveBlock)
    direct_active(const Vec4<Real>* __restrict__ bodies, unsigned n,
                  const unsigned* __restrict__ targets, unsigned n_targets, unsigned j_per_split,
                  Real eps2, Vec4<Real>* __restrict__ out, Vec4<Real>* __restrict__ partial) {
  __shared__ Vec4<Real> tile[kActiveBlock];
  const unsigned k = blockIdx.x * kActiveBlock + threadIdx.x;
  const bool real = k < n_targets;
  const unsigned i = real ? targets[k] : 0u;
  const Vec4<Real> bi = bodies[i];
  Real ax = 0, ay = 0, az = 0, phi = 0;
  const unsigned j_begin = blockIdx.y * j_per_split;
  const unsigned j_end = min(j_begin + j_per_split, n);
  for (unsigned j0 = j_begin; j0 < j_end; j0 += kActiveBlock) {
    if (j0 + threadIdx.x < j_end) tile[threadIdx.x] = bodies[j0 + threadIdx.x];
    __syncthreads();
    const unsigned count = min(unsigned(kActiveBlock), j_end - j0);
#pragma unroll 8
    for (unsigned j = 0; j < count; ++j) {
      const Vec4<Real> bj = tile[j];
      pair_term<Pot, Real, Math>(bj.x - bi.x, bj.y - bi.y, bj.z - bi.z, bj.w, eps2, ax, ay, az, phi,
                                 j0 + j == i);
    }
    __syncthreads();
  }
  if (!real) return;
  const Vec4<Real> sum{ax, ay, az, Pot ? phi : Real(0)};
  if (gridDim.y == 1) {
    out[i] = sum;
  } else {
    partial[std::size_t(blockIdx.y) * n_targets + k] = sum;
  }
}

template <class Real>
__global__ void zero_others(Vec4<Real>* __restrict__ out, const unsigned* __restrict__ active,
                            unsigned n_active, unsigned begin, unsigned end) {
  const unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < n_active && (k < begin || k >= end))
    out[active[k]] = {Real(0), Real(0), Real(0), Real(0)};
}

template <class Real, class Math, bool Pot>
void launch_active_with(const ActiveArgs<Real>& a, cudaStream_t stream) {
  const dim3 grid(gpu::blocks_for(a.n_targets, unsigned(kActiveBlock)), a.splits);
  direct_active<Real, Math, Pot><<<grid, kActiveBlock, 0, stream>>>(
      a.bodies, a.n, a.targets, a.n_targets, a.j_per_split, a.eps2, a.out, a.partial);
  NBODY_CUDA_CHECK_LAUNCH("direct_active");
  if (a.splits > 1) {
    reduce_splits<Real, Pot><<<gpu::blocks_for(a.n_targets, 256), 256, 0, stream>>>(
        a.partial, a.n_targets, a.splits, a.targets, a.out);
    NBODY_CUDA_CHECK_LAUNCH("reduce_splits");
  }
}

/// Softening makes r2 >= eps2 > 0; the bound keeps the double kernel's float seed normal.
template <class Real>
bool softened(Real eps2) {
  return eps2 >= Real(1e-30);
}

template <class Real, bool Softened, bool Pot>
void launch_with(Kernel kernel, const LaunchArgs<Real>& a, cudaStream_t stream) {
  const std::size_t shared = std::size_t(a.block) * sizeof(Vec4<Real>);
  switch (kernel) {
    case Kernel::Naive: {
      using Math = typename MathFor<Real, false, Softened>::type;
      direct_naive<Real, Math, Pot>
          <<<gpu::blocks_for(a.n, unsigned(a.block)), a.block, 0, stream>>>(a.bodies, a.n, a.eps2,
                                                                            a.out);
      NBODY_CUDA_CHECK_LAUNCH("direct_naive");
      break;
    }
    case Kernel::Tiled: {
      using Math = typename MathFor<Real, false, Softened>::type;
      direct_tiled<Real, Math, Pot><<<a.n_padded / unsigned(a.block), a.block, shared, stream>>>(
          a.bodies, a.n_padded, a.eps2, a.out);
      NBODY_CUDA_CHECK_LAUNCH("direct_tiled");
      break;
    }
    case Kernel::Fast: {
      using Math = typename MathFor<Real, true, Softened>::type;
      const int k = fast_bodies_per_thread<Real>(a.block);
      const dim3 grid(a.n_padded / unsigned(a.block * k), a.splits);
      Vec4<Real>* dst = a.splits > 1 ? a.partial : a.out;
      if (a.block <= kFastMaxBlockForK4<Real>) {
        direct_fast<Real, Math, 4, kFastMaxBlockForK4<Real>, Pot>
            <<<grid, a.block, shared, stream>>>(a.bodies, a.n_padded, a.j_per_split, a.eps2, dst);
      } else {
        direct_fast<Real, Math, 2, 1024, Pot>
            <<<grid, a.block, shared, stream>>>(a.bodies, a.n_padded, a.j_per_split, a.eps2, dst);
      }
      NBODY_CUDA_CHECK_LAUNCH("direct_fast");
      if (a.splits > 1) {
        reduce_splits<Real, Pot><<<gpu::blocks_for(a.n_padded, 256), 256, 0, stream>>>(
            a.partial, a.n_padded, a.splits, nullptr, a.out);
        NBODY_CUDA_CHECK_LAUNCH("reduce_splits");
      }
      break;
    }
  }
}

template <class Real, bool Softened>
void launch_softened(Kernel kernel, const LaunchArgs<Real>& args, cudaStream_t stream) {
  if (args.potential) {
    launch_with<Real, Softened, true>(kernel, args, stream);
  } else {
    launch_with<Real, Softened, false>(kernel, args, stream);
  }
}

}  // namespace

template <class Real>
void launch(Kernel kernel, const LaunchArgs<Real>& args, cudaStream_t stream) {
  if (args.n == 0) return;
  if (softened(args.eps2)) {
    launch_softened<Real, true>(kernel, args, stream);
  } else {
    launch_softened<Real, false>(kernel, args, stream);
  }
}

template <class Real>
void launch_active(const ActiveArgs<Real>& args, cudaStream_t stream) {
  if (args.n == 0 || args.n_targets == 0) return;
  // The math policy of the kernel DirectForces was made with, softened or not, with or
  // without the potentials.
  auto with = [&](auto fast, auto soft) {
    constexpr bool F = decltype(fast)::value, S = decltype(soft)::value;
    using Math = typename MathFor<Real, F, S>::type;
    if (args.potential) {
      launch_active_with<Real, Math, true>(args, stream);
    } else {
      launch_active_with<Real, Math, false>(args, stream);
    }
  };
  auto with_fast = [&](auto soft) {
    args.fast_math ? with(std::true_type{}, soft) : with(std::false_type{}, soft);
  };
  softened(args.eps2) ? with_fast(std::true_type{}) : with_fast(std::false_type{});
}

template <class Real>
int active_blocks_per_sm() {
  using Math = typename MathFor<Real, true, true>::type;
  int blocks = 0;
  NBODY_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &blocks, direct_active<Real, Math, false>, kActiveBlock, 0));
  return blocks > 0 ? blocks : 1;
}

template <class Real>
void launch_zero_others(Vec4<Real>* out, const unsigned* active, unsigned n_active, unsigned begin,
                        unsigned end, cudaStream_t stream) {
  if (n_active == 0) return;
  zero_others<Real>
      <<<gpu::blocks_for(n_active, 256), 256, 0, stream>>>(out, active, n_active, begin, end);
  NBODY_CUDA_CHECK_LAUNCH("zero_others");
}

template <class Real>
int fast_blocks_per_sm(int block) {
  using Math = typename MathFor<Real, true, true>::type;
  int blocks = 0;
  const std::size_t shared = std::size_t(block) * sizeof(Vec4<Real>);
  if (block <= kFastMaxBlockForK4<Real>) {
    NBODY_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &blocks, direct_fast<Real, Math, 4, kFastMaxBlockForK4<Real>, false>, block, shared));
  } else {
    NBODY_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &blocks, direct_fast<Real, Math, 2, 1024, false>, block, shared));
  }
  return blocks > 0 ? blocks : 1;
}

template void launch<float>(Kernel, const LaunchArgs<float>&, cudaStream_t);
template void launch<double>(Kernel, const LaunchArgs<double>&, cudaStream_t);
template int fast_blocks_per_sm<float>(int);
template int fast_blocks_per_sm<double>(int);
template void launch_active<float>(const ActiveArgs<float>&, cudaStream_t);
template void launch_active<double>(const ActiveArgs<double>&, cudaStream_t);
template int active_blocks_per_sm<float>();
template int active_blocks_per_sm<double>();
template void launch_zero_others<float>(Vec4<float>*, const unsigned*, unsigned, unsigned, unsigned,
                                        cudaStream_t);
template void launch_zero_others<double>(Vec4<double>*, const unsigned*, unsigned, unsigned,
                                         unsigned, cudaStream_t);

}  // namespace nbody::cuda_direct
