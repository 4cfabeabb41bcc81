// The device's neighbourhood density (cell_density.cuh).
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cfloat>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/merge_boxes.cuh"
#include "integrators/cell_density_rule.hpp"
#include "nbody/physics/timestep.hpp"
#include "simulation/cuda/cell_density.cuh"

namespace nbody::cuda_resident {

namespace {

/// A body's box for the bounds' reduction: its finite coordinates (an axis without one, or
/// beyond dim, is the empty interval), merged by gpu::MergeBoxes as the trees' bounds are.
struct Box {
  double lo[3], hi[3];
};
struct PointBox {
  const double *x, *y, *z;
  int dim;
  __device__ Box operator()(unsigned i) const {
    const double c[3] = {x[i], y[i], z[i]};
    Box b;
    for (int a = 0; a < 3; ++a) {
      const bool used = a < dim && isfinite(c[a]);
      b.lo[a] = used ? c[a] : DBL_MAX;
      b.hi[a] = used ? c[a] : -DBL_MAX;
    }
    return b;
  }
};

__global__ void keys_kernel(State s, int dim, const Box* bounds, std::uint64_t* keys,
                            unsigned* index) {
  double lo[3], side;
  density::cube(bounds->lo, bounds->hi, dim, lo, &side);
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
                              unsigned want, int dim, const Box* bounds, double G, double softening,
                              double* omega2) {
  double lo[3], side;
  density::cube(bounds->lo, bounds->hi, dim, lo, &side);
  for (unsigned p = blockIdx.x * blockDim.x + threadIdx.x; p < n; p += gridDim.x * blockDim.x)
    omega2[index[p]] =
        density::omega2_at(keys, mass_before, level, n, want, p, dim, side, G, softening);
}

}  // namespace

void DeviceCellDensity::compute(const State& s, int dim, double G, double softening, double* omega2,
                                cudaStream_t stream) {
  const unsigned n = s.n;
  if (n == 0) return;
  bounds_.reserve(sizeof(Box), "density bounds");
  keys_.reserve(n, "density keys");
  keys_sorted_.reserve(n, "density keys");
  index_.reserve(n, "density order");
  index_sorted_.reserve(n, "density order");
  mass_.reserve(n + 1, "density masses");
  mass_before_.reserve(n + 1, "density masses");
  Box* bounds = reinterpret_cast<Box*>(bounds_.data());
  const auto points = thrust::make_transform_iterator(thrust::counting_iterator<unsigned>(0),
                                                      PointBox{s.x, s.y, s.z, dim});
  const Box empty{{DBL_MAX, DBL_MAX, DBL_MAX}, {-DBL_MAX, -DBL_MAX, -DBL_MAX}};
  const int end_bit = dim * density::key_bits(dim);
  std::size_t box_bytes = 0, sort_bytes = 0, scan_bytes = 0;
  NBODY_CUDA_CHECK(cub::DeviceReduce::Reduce(nullptr, box_bytes, points, bounds, n,
                                             gpu::MergeBoxes<Box>{}, empty, stream));
  NBODY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, keys_.data(),
                                                   keys_sorted_.data(), index_.data(),
                                                   index_sorted_.data(), n, 0, end_bit, stream));
  NBODY_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, mass_.data(),
                                                 mass_before_.data(), n + 1, stream));
  temp_.reserve(std::max({box_bytes, sort_bytes, scan_bytes}), "density scratch");
  NBODY_CUDA_CHECK(cub::DeviceReduce::Reduce(temp_.data(), box_bytes, points, bounds, n,
                                             gpu::MergeBoxes<Box>{}, empty, stream));
  keys_kernel<<<blocks_for(n), kThreads, 0, stream>>>(s, dim, bounds, keys_.data(), index_.data());
  NBODY_CUDA_CHECK_LAUNCH("density keys_kernel");
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
  omega2_kernel<<<blocks_for(n), kThreads, 0, stream>>>(keys_sorted_.data(), index_sorted_.data(),
                                                        mass_before_.data(), run_level_.data(), n,
                                                        want, dim, bounds, G, softening, omega2);
  NBODY_CUDA_CHECK_LAUNCH("density omega2_kernel");
}

}  // namespace nbody::cuda_resident
