// The device's neighbourhood density (cell_density.cuh).
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>

#include "core/cuda/cuda_check.cuh"
#include "integrators/cell_density_rule.hpp"
#include "nbody/physics/timestep.hpp"
#include "simulation/cuda/cell_density.cuh"

namespace nbody::cuda_resident {

namespace {

/// Doubles as unsigned integers in the same order (negative ones flipped whole).
__device__ __forceinline__ unsigned long long ordered(double v) {
  const auto bits = static_cast<unsigned long long>(__double_as_longlong(v));
  return bits >> 63 ? ~bits : bits | (1ull << 63);
}
__device__ __forceinline__ double from_ordered(unsigned long long u) {
  return __longlong_as_double(static_cast<long long>(u >> 63 ? u & ~(1ull << 63) : ~u));
}

__global__ void init_bounds_kernel(unsigned long long* bounds) {
  for (int a = 0; a < 3; ++a) {
    bounds[2 * a] = ~0ull;  // min
    bounds[2 * a + 1] = 0;  // max
  }
}

/// The finite coordinates' min and max per axis (one atomic per warp and axis).
__global__ void bounds_kernel(State s, int dim, unsigned long long* bounds) {
  unsigned long long mn[3] = {~0ull, ~0ull, ~0ull}, mx[3] = {0, 0, 0};
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < s.n; i += gridDim.x * blockDim.x) {
    const double c[3] = {s.x[i], s.y[i], s.z[i]};
    for (int a = 0; a < dim; ++a) {
      if (!isfinite(c[a])) continue;
      const unsigned long long u = ordered(c[a]);
      mn[a] = min(mn[a], u);
      mx[a] = max(mx[a], u);
    }
  }
  for (int a = 0; a < dim; ++a) {
    for (int offset = 16; offset > 0; offset >>= 1) {
      mn[a] = min(mn[a], __shfl_down_sync(0xffffffffu, mn[a], offset));
      mx[a] = max(mx[a], __shfl_down_sync(0xffffffffu, mx[a], offset));
    }
    if ((threadIdx.x & 31u) == 0) {
      atomicMin(&bounds[2 * a], mn[a]);
      atomicMax(&bounds[2 * a + 1], mx[a]);
    }
  }
}

/// The cube's corner and side from the bounds, as the host computes them.
__device__ void cube(const unsigned long long* bounds, int dim, double* lo, double* side) {
  *side = 0;
  for (int a = 0; a < 3; ++a) lo[a] = 0;
  for (int a = 0; a < dim; ++a) {
    if (bounds[2 * a] > bounds[2 * a + 1]) continue;  // no finite coordinate
    const double mn = from_ordered(bounds[2 * a]), mx = from_ordered(bounds[2 * a + 1]);
    lo[a] = mn;
    *side = fmax(*side, mx - mn);
  }
  if (!(*side > 0) || !isfinite(*side)) *side = 1;
}

__global__ void keys_kernel(State s, int dim, const unsigned long long* bounds, std::uint64_t* keys,
                            unsigned* index) {
  double lo[3], side;
  cube(bounds, dim, lo, &side);
  const double scale = ldexp(1.0, density::key_bits(dim)) / side;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < s.n; i += gridDim.x * blockDim.x) {
    keys[i] = density::key(lo, scale, dim, s.x[i], s.y[i], s.z[i]);
    index[i] = i;
  }
}

/// The masses in key order, and a last 0 (the exclusive scan's total).
__global__ void gather_mass_kernel(State s, const unsigned* index, double* mass) {
  for (unsigned p = blockIdx.x * blockDim.x + threadIdx.x; p <= s.n; p += gridDim.x * blockDim.x)
    mass[p] = p < s.n ? s.m[index[p]] : 0.0;
}

__global__ void run_level_kernel(const std::uint64_t* keys, unsigned runs, unsigned want, int dim,
                                 std::uint8_t* level) {
  for (unsigned r = blockIdx.x * blockDim.x + threadIdx.x; r < runs; r += gridDim.x * blockDim.x)
    level[r] = std::uint8_t(density::common_level(keys[r], keys[r + want - 1], dim));
}

__global__ void omega2_kernel(const std::uint64_t* keys, const unsigned* index,
                              const double* mass_before, const std::uint8_t* level, unsigned n,
                              unsigned want, int dim, const unsigned long long* bounds, double G,
                              double softening, double* omega2) {
  double lo[3], side;
  cube(bounds, dim, lo, &side);
  for (unsigned p = blockIdx.x * blockDim.x + threadIdx.x; p < n; p += gridDim.x * blockDim.x)
    omega2[index[p]] =
        density::omega2_at(keys, mass_before, level, n, want, p, dim, side, G, softening);
}

}  // namespace

void DeviceCellDensity::compute(const State& s, int dim, double G, double softening, double* omega2,
                                cudaStream_t stream) {
  const unsigned n = s.n;
  if (n == 0) return;
  bounds_.reserve(6, "density bounds");
  keys_.reserve(n, "density keys");
  keys_sorted_.reserve(n, "density keys");
  index_.reserve(n, "density order");
  index_sorted_.reserve(n, "density order");
  mass_.reserve(n + 1, "density masses");
  mass_before_.reserve(n + 1, "density masses");
  init_bounds_kernel<<<1, 1, 0, stream>>>(bounds_.data());
  NBODY_CUDA_CHECK_LAUNCH("density init_bounds_kernel");
  bounds_kernel<<<blocks_for(n), kThreads, 0, stream>>>(s, dim, bounds_.data());
  NBODY_CUDA_CHECK_LAUNCH("density bounds_kernel");
  keys_kernel<<<blocks_for(n), kThreads, 0, stream>>>(s, dim, bounds_.data(), keys_.data(),
                                                      index_.data());
  NBODY_CUDA_CHECK_LAUNCH("density keys_kernel");
  const int end_bit = dim * density::key_bits(dim);
  std::size_t sort_bytes = 0, scan_bytes = 0;
  NBODY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, keys_.data(),
                                                   keys_sorted_.data(), index_.data(),
                                                   index_sorted_.data(), n, 0, end_bit, stream));
  NBODY_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, mass_.data(),
                                                 mass_before_.data(), n + 1, stream));
  temp_.reserve(std::max(sort_bytes, scan_bytes), "density scratch");
  NBODY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp_.data(), sort_bytes, keys_.data(),
                                                   keys_sorted_.data(), index_.data(),
                                                   index_sorted_.data(), n, 0, end_bit, stream));
  gather_mass_kernel<<<blocks_for(n + 1), kThreads, 0, stream>>>(s, index_sorted_.data(),
                                                                 mass_.data());
  NBODY_CUDA_CHECK_LAUNCH("density gather_mass_kernel");
  NBODY_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp_.data(), scan_bytes, mass_.data(),
                                                 mass_before_.data(), n + 1, stream));
  const unsigned want = std::min<unsigned>(unsigned(kDensityCellBodies), n);
  const unsigned runs = n - want + 1;
  run_level_.reserve(runs, "density levels");
  run_level_kernel<<<blocks_for(runs), kThreads, 0, stream>>>(keys_sorted_.data(), runs, want, dim,
                                                              run_level_.data());
  NBODY_CUDA_CHECK_LAUNCH("density run_level_kernel");
  omega2_kernel<<<blocks_for(n), kThreads, 0, stream>>>(
      keys_sorted_.data(), index_sorted_.data(), mass_before_.data(), run_level_.data(), n, want,
      dim, bounds_.data(), G, softening, omega2);
  NBODY_CUDA_CHECK_LAUNCH("density omega2_kernel");
}

}  // namespace nbody::cuda_resident
