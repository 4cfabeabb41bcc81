// The fast kernel's strategy for large N: every pair evaluated once (Newton's third law),
// so one r^2 and one rsqrt serve two interactions. ~9.4 instructions per interaction
// against ~13.25 for the one-sided kernel, whose float32 version is bound by instruction
// issue (see docs/performance.md).
//
// The N x N interaction matrix is cut into bands of kBand i-bodies (one block's i-set:
// WARPS warps x 32 lanes x KI bodies in registers). A task is one band against a chunk of
// j-bodies that lie after the band (the upper triangle), or the band against itself
// (one-sided, through shared memory: it holds the self pairs). For each tile of 32 x KJ
// j-bodies, every warp loads the tile into registers (lane l holds KJ bodies) and rotates
// it one lane per step with __shfl_sync, 32 steps: each lane meets every j-body of the
// tile, adding j's pull to its i-bodies and i's pull to the travelling j-accumulators.
// After 32 rotations the j-bodies are home; the block sums its warps' j-accumulators in
// shared memory and adds them to out with one atomicAdd per component and j-body; the
// i-accumulators are added at the end of the task. out must be zero before the launch.
// Floating-point atomics make the summation order (and so the last bits) vary between
// runs; the tiled kernel is the deterministic one. With the potentials (Pot) each
// accumulator has a 4th component, rotated and summed like the others.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "gravity/cuda/device_math.cuh"
#include "gravity/cuda/direct_kernels.cuh"
#include "gravity/cuda/pair_terms.cuh"

namespace nbody::cuda_direct {

using cuda_gravity::MathFor;
using cuda_gravity::mutual_pair_term;
using cuda_gravity::pair_term;
using gpu::Vec4;

namespace {

constexpr unsigned kBandInternal = 1;

/// With Pot, the potentials too: .w of out, the j-bodies' travelling with them and summed
/// through a 4th row of the shared accumulators.
template <class Real, class Math, int KI, int KJ, int WARPS, bool Pot>
__global__ void __launch_bounds__(WARPS * 32)
    direct_mutual(const Vec4<Real>* __restrict__ bodies, const MutualTask* __restrict__ tasks,
                  Real eps2, Vec4<Real>* __restrict__ out) {
  constexpr unsigned kThreads = WARPS * 32;
  constexpr unsigned kBand = kThreads * KI;
  constexpr unsigned kTile = 32 * KJ;
  constexpr unsigned kRows = Pot ? 4u : 3u;  // accumulated components per j-body
  constexpr std::size_t kSharedBand = kBand * sizeof(Vec4<Real>);
  constexpr std::size_t kSharedAcc = std::size_t(WARPS) * kRows * kTile * sizeof(Real);
  __shared__ __align__(
      32) unsigned char shared_raw[kSharedBand > kSharedAcc ? kSharedBand : kSharedAcc];

  const MutualTask task = tasks[blockIdx.x];
  const unsigned lane = threadIdx.x & 31u;
  const unsigned warp = threadIdx.x >> 5;
  const unsigned band0 = task.band * kBand;
  const unsigned i0 = band0 + warp * 32u * KI + lane;
  Real xi[KI], yi[KI], zi[KI], mi[KI], axi[KI], ayi[KI], azi[KI], phii[KI];
#pragma unroll
  for (int k = 0; k < KI; ++k) {
    const Vec4<Real> b = bodies[i0 + unsigned(k) * 32u];
    xi[k] = b.x;
    yi[k] = b.y;
    zi[k] = b.z;
    mi[k] = b.w;
    axi[k] = ayi[k] = azi[k] = phii[k] = Real(0);
  }

  if (task.kind == kBandInternal) {
    auto* tile = reinterpret_cast<Vec4<Real>*>(shared_raw);
    for (unsigned j = threadIdx.x; j < kBand; j += kThreads) tile[j] = bodies[band0 + j];
    __syncthreads();
#pragma unroll 8
    for (unsigned j = 0; j < kBand; ++j) {
      const Vec4<Real> bj = tile[j];
#pragma unroll
      for (int k = 0; k < KI; ++k) {
        pair_term<Pot, Real, Math>(bj.x - xi[k], bj.y - yi[k], bj.z - zi[k], bj.w, eps2, axi[k],
                                   ayi[k], azi[k], phii[k], band0 + j == i0 + unsigned(k) * 32u);
      }
    }
  } else {
    auto* j_acc = reinterpret_cast<Real*>(shared_raw);  // [WARPS][kRows][kTile]
    const unsigned from = (lane + 1u) & 31u;
    for (unsigned jt = task.j_begin; jt < task.j_end; jt += kTile) {
      Real xj[KJ], yj[KJ], zj[KJ], mj[KJ], axj[KJ], ayj[KJ], azj[KJ], phij[KJ];
#pragma unroll
      for (int q = 0; q < KJ; ++q) {
        const Vec4<Real> b = bodies[jt + unsigned(q) * 32u + lane];
        xj[q] = b.x;
        yj[q] = b.y;
        zj[q] = b.z;
        mj[q] = b.w;
        axj[q] = ayj[q] = azj[q] = phij[q] = Real(0);
      }
      // Fully unrolling the 32 steps would not fit the instruction cache.
#pragma unroll 2
      for (int step = 0; step < 32; ++step) {
#pragma unroll
        for (int k = 0; k < KI; ++k) {
#pragma unroll
          for (int q = 0; q < KJ; ++q) {
            mutual_pair_term<Pot, Real, Math>(xj[q] - xi[k], yj[q] - yi[k], zj[q] - zi[k], mi[k],
                                              mj[q], eps2, axi[k], ayi[k], azi[k], phii[k], axj[q],
                                              ayj[q], azj[q], phij[q]);
          }
        }
#pragma unroll
        for (int q = 0; q < KJ; ++q) {
          xj[q] = __shfl_sync(0xffffffffu, xj[q], from);
          yj[q] = __shfl_sync(0xffffffffu, yj[q], from);
          zj[q] = __shfl_sync(0xffffffffu, zj[q], from);
          mj[q] = __shfl_sync(0xffffffffu, mj[q], from);
          axj[q] = __shfl_sync(0xffffffffu, axj[q], from);
          ayj[q] = __shfl_sync(0xffffffffu, ayj[q], from);
          azj[q] = __shfl_sync(0xffffffffu, azj[q], from);
          if constexpr (Pot) phij[q] = __shfl_sync(0xffffffffu, phij[q], from);
        }
      }
      // 32 rotations: every j-body is back in its own lane.
#pragma unroll
      for (int q = 0; q < KJ; ++q) {
        const unsigned j = unsigned(q) * 32u + lane;
        j_acc[(warp * kRows + 0u) * kTile + j] = axj[q];
        j_acc[(warp * kRows + 1u) * kTile + j] = ayj[q];
        j_acc[(warp * kRows + 2u) * kTile + j] = azj[q];
        if constexpr (Pot) j_acc[(warp * kRows + 3u) * kTile + j] = phij[q];
      }
      __syncthreads();
      for (unsigned e = threadIdx.x; e < kRows * kTile; e += kThreads) {
        const unsigned c = e / kTile, j = e % kTile;
        Real sum = 0;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) sum += j_acc[(unsigned(w) * kRows + c) * kTile + j];
        atomicAdd(reinterpret_cast<Real*>(out + jt + j) + c, sum);
      }
      __syncthreads();
    }
  }
#pragma unroll
  for (int k = 0; k < KI; ++k) {
    Real* o = reinterpret_cast<Real*>(out + i0 + unsigned(k) * 32u);
    atomicAdd(o + 0, axi[k]);
    atomicAdd(o + 1, ayi[k]);
    atomicAdd(o + 2, azi[k]);
    if constexpr (Pot) atomicAdd(o + 3, phii[k]);
  }
}

template <class Real, bool Softened, bool Pot = false>
auto mutual_kernel() {
  using Math = typename MathFor<Real, true, Softened>::type;
  return direct_mutual<Real, Math, kMutualKI<Real>, kMutualKJ<Real>, kMutualWarps<Real>, Pot>;
}

}  // namespace

template <class Real>
std::vector<MutualTask> plan_mutual(unsigned n_padded, std::size_t concurrent_blocks) {
  constexpr unsigned band = kMutualBand<Real>, tile = kMutualTile<Real>;
  const unsigned bands = n_padded / band;
  std::size_t tile_visits = 0;
  for (unsigned b = 0; b < bands; ++b) tile_visits += (n_padded - (b + 1) * band) / tile;
  // About 16 tasks per block slot: with the largest tasks first the last wave is short.
  const std::size_t wanted = 16 * std::max<std::size_t>(concurrent_blocks, 1);
  const unsigned chunk =
      unsigned(std::max<std::size_t>(1, (tile_visits + wanted - 1) / wanted)) * tile;
  std::vector<MutualTask> tasks;
  for (unsigned b = 0; b < bands; ++b) {
    tasks.push_back({b, band * b, band * (b + 1), kBandInternal});
    for (unsigned j = band * (b + 1); j < n_padded; j += chunk) {
      tasks.push_back({b, j, std::min(j + chunk, n_padded), 0});
    }
  }
  // Cost in instruction issues: ~19 per pair off the diagonal, ~13 per one-sided interaction.
  auto cost = [](const MutualTask& t) {
    return double(t.j_end - t.j_begin) * (t.kind == kBandInternal ? 13.0 : 19.0);
  };
  std::stable_sort(tasks.begin(), tasks.end(),
                   [&](const MutualTask& a, const MutualTask& b) { return cost(a) > cost(b); });
  return tasks;
}

template <class Real>
void launch_mutual(const Vec4<Real>* bodies, const MutualTask* tasks, unsigned n_tasks, Real eps2,
                   bool potential, Vec4<Real>* out, cudaStream_t stream) {
  if (n_tasks == 0) return;
  constexpr int threads = kMutualWarps<Real> * 32;
  auto go = [&](auto kernel) { kernel<<<n_tasks, threads, 0, stream>>>(bodies, tasks, eps2, out); };
  const bool softened = eps2 >= Real(1e-30);
  if (potential) {
    softened ? go(mutual_kernel<Real, true, true>()) : go(mutual_kernel<Real, false, true>());
  } else {
    softened ? go(mutual_kernel<Real, true>()) : go(mutual_kernel<Real, false>());
  }
  NBODY_CUDA_CHECK_LAUNCH("direct_mutual");
}

template <class Real>
int mutual_blocks_per_sm() {
  int blocks = 0;
  NBODY_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &blocks, mutual_kernel<Real, true>(), kMutualWarps<Real> * 32, 0));
  return blocks > 0 ? blocks : 1;
}

template std::vector<MutualTask> plan_mutual<float>(unsigned, std::size_t);
template std::vector<MutualTask> plan_mutual<double>(unsigned, std::size_t);
template void launch_mutual<float>(const Vec4<float>*, const MutualTask*, unsigned, float, bool,
                                   Vec4<float>*, cudaStream_t);
template void launch_mutual<double>(const Vec4<double>*, const MutualTask*, unsigned, double, bool,
                                    Vec4<double>*, cudaStream_t);
template int mutual_blocks_per_sm<float>();
template int mutual_blocks_per_sm<double>();

}  // namespace nbody::cuda_direct
