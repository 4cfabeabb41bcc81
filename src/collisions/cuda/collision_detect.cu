// The GPU collision engine's detection (see collision_engine.cuh for the design): the
// bodies' extent, the hierarchical grid's keys (or the tree's Morton keys,
// collision_tree_detect.cu) radix-sorted with cub, the candidate pairs (within the skin of
// touching) found by binary search on the sorted keys, and their per-body partner lists
// (CSR, partners ascending): the same lists, whichever search found the pairs.
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "collisions/cuda/collision_engine.cuh"
#include "collisions/cuda/collision_engine_shared.cuh"
#include "core/cuda/cuda_check.cuh"
#include "core/cuda/merge_boxes.cuh"
#include "nbody/error.hpp"
#include "nbody/physics/timestep.hpp"

namespace nbody::cuda_collisions {

namespace {

constexpr int kMaxLevels = 16;
constexpr int kCellBits = 20;     // cells per axis per level < 2^20
constexpr double kMargin = 1e-5;  // cells a little larger than needed, against rounding
constexpr unsigned kCellMask = (1u << kCellBits) - 1u;

struct MergeExtent {
  __host__ __device__ Extent operator()(const Extent& a, const Extent& b) const {
    Extent r = gpu::MergeBoxes<Extent>{}(a, b);  // the box; then the radii
    r.rmin = fmin(a.rmin, b.rmin);
    r.rmax = fmax(a.rmax, b.rmax);
    return r;
  }
};
struct BodyExtent {
  BodyArrays b;
  __host__ __device__ Extent operator()(unsigned i) const {
    const double r = b.r[i];
    return {{b.x[i], b.y[i], b.z[i]}, {b.x[i], b.y[i], b.z[i]}, r > 0 ? r : DBL_MAX, r};
  }
};

__global__ void setup_grid(const Extent* e, int dim, double skin, Grid* g) {
  double extent = 0;
  for (int k = 0; k < dim; ++k) extent = fmax(extent, e->hi[k] - e->lo[k]);
  const double reach = (1 + skin) * (1 + kMargin);
  const double dmax = 2 * e->rmax * reach;
  const double dmin = e->rmin < DBL_MAX ? 2 * e->rmin * reach : dmax;
  double h0 = fmax(fmax(dmin, dmax / double(1 << (kMaxLevels - 1))),
                   extent / double(1 << kCellBits) * (1 + 1e-9));
  if (!(h0 > 0) || !isfinite(h0)) h0 = 1.0;
  int levels = 1;
  while (levels < kMaxLevels && h0 * double(1 << (levels - 1)) < dmax) ++levels;
  for (int k = 0; k < 3; ++k) g->lo[k] = k < dim ? e->lo[k] : 0.0;
  g->h0 = h0;
  g->reach = 1 + skin;
  g->levels = levels;
  g->dim = dim;
  g->level_mask = 0;
}

__device__ __forceinline__ int body_level(double r, const Grid& g) {
  const double d = 2 * r * g.reach * (1 + kMargin);
  int l = 0;
  while (l < g.levels - 1 && g.h0 * double(1 << l) < d) ++l;
  return l;
}

__device__ __forceinline__ unsigned cell_coord(double v, double lo, double size) {
  const double c = floor((v - lo) / size);
  return c >= 0 ? (c < double(kCellMask) ? unsigned(c) : kCellMask) : 0u;  // NaN -> 0
}

__device__ __forceinline__ unsigned long long cell_key(int level, unsigned ix, unsigned iy,
                                                       unsigned iz) {
  return (static_cast<unsigned long long>(level) << 60) |
         (static_cast<unsigned long long>(ix) << 40) | (static_cast<unsigned long long>(iy) << 20) |
         iz;
}

__global__ void make_keys(BodyArrays b, unsigned n, Grid* grid, unsigned long long* keys,
                          unsigned* index) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Grid g = *grid;
  const int l = body_level(b.r[i], g);
  const double size = g.h0 * double(1 << l);
  keys[i] = cell_key(l, cell_coord(b.x[i], g.lo[0], size), cell_coord(b.y[i], g.lo[1], size),
                     g.dim == 2 ? 0u : cell_coord(b.z[i], g.lo[2], size));
  index[i] = i;
  atomicOr(&grid->level_mask, 1u << l);
}

/// Candidate pairs: each body scans the cells around it on its level and every coarser
/// one present; a pair on one level is taken from its earlier body in sorted order.
/// kGated: through the gate of block steps (a separate instance, so that the plain search
/// keeps its registers).
template <bool kGated>
__global__ void emit_pairs(BodyArrays b, unsigned n, const Grid* grid,
                           const unsigned long long* keys, const unsigned* index, double skin,
                           unsigned long long* pairs, unsigned capacity,
                           unsigned long long* count) {
  const unsigned s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= n) return;
  const Grid g = *grid;
  const unsigned i = index[s];
  const double xi = b.x[i], yi = b.y[i], zi = b.z[i], ri = b.r[i];
  const int li = int(keys[s] >> 60);
  const double reach = 1 + skin;
  for (int L = li; L < g.levels; ++L) {
    if (!(g.level_mask & (1u << L))) continue;
    const double size = g.h0 * double(1 << L);
    const int cx = int(cell_coord(xi, g.lo[0], size)), cy = int(cell_coord(yi, g.lo[1], size));
    const int cz = g.dim == 2 ? 0 : int(cell_coord(zi, g.lo[2], size));
    for (int dx = -1; dx <= 1; ++dx) {
      for (int dy = -1; dy <= 1; ++dy) {
        const int x = cx + dx, y = cy + dy;
        if (x < 0 || y < 0 || x > int(kCellMask) || y > int(kCellMask)) continue;
        // The cells z-1 .. z+1 of one (x, y) column are one run of keys.
        const unsigned z0 = unsigned(cz > 0 ? cz - 1 : 0);
        const unsigned z1 = g.dim == 2 ? 0u : unsigned(cz < int(kCellMask) ? cz + 1 : cz);
        const unsigned first = lower_bound(keys, n, cell_key(L, unsigned(x), unsigned(y), z0));
        const unsigned last = lower_bound(keys, n, cell_key(L, unsigned(x), unsigned(y), z1) + 1);
        for (unsigned t = first; t < last; ++t) {
          if (L == li && t <= s) continue;
          const unsigned j = index[t];
          const double ddx = b.x[j] - xi, ddy = b.y[j] - yi, ddz = b.z[j] - zi;
          const double touch = (ri + b.r[j]) * reach;
          if (ddx * ddx + ddy * ddy + ddz * ddz >= touch * touch) continue;
          if (kGated && !through_gate(b, i, j)) continue;
          const unsigned long long slot = atomicAdd(count, 1ULL);
          if (slot < capacity) {
            const unsigned a = i < j ? i : j, c = i < j ? j : i;
            pairs[slot] = (static_cast<unsigned long long>(a) << 32) | c;
          }
        }
      }
    }
  }
}

__global__ void direct_pairs(const unsigned long long* pairs, unsigned count,
                             unsigned long long* directed) {
  const unsigned p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= count) return;
  const unsigned long long k = pairs[p];
  directed[2 * std::size_t(p)] = k;
  directed[2 * std::size_t(p) + 1] = (k << 32) | (k >> 32);
}

__global__ void partner_offsets(const unsigned long long* directed, unsigned entries, unsigned n,
                                unsigned* offset) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > n) return;
  offset[i] = lower_bound(directed, entries, static_cast<unsigned long long>(i) << 32);
}

}  // namespace

std::size_t CollisionEngine::detect(const BodyArrays& b, std::size_t n, double skin,
                                    cudaStream_t stream) {
  const auto items = static_cast<long long>(n);
  const unsigned un = unsigned(n);
  keys_.reserve(n, "collision keys");
  keys_sorted_.reserve(n, "collision keys");
  index_.reserve(n, "collision order");
  index_sorted_.reserve(n, "collision order");
  partner_offset_.reserve(n + 1, "collision partner offsets");

  auto* extent = reinterpret_cast<Extent*>(bounds_.data());
  auto* grid = reinterpret_cast<Grid*>(grid_.data());
  const auto input =
      thrust::make_transform_iterator(thrust::counting_iterator<unsigned>(0), BodyExtent{b});
  const Extent empty{{DBL_MAX, DBL_MAX, DBL_MAX}, {-DBL_MAX, -DBL_MAX, -DBL_MAX}, DBL_MAX, 0.0};
  std::size_t bytes = 0;
  NBODY_CUDA_CHECK(cub::DeviceReduce::Reduce(nullptr, bytes, input, extent, items, MergeExtent{},
                                             empty, stream));
  scratch(bytes);
  NBODY_CUDA_CHECK(cub::DeviceReduce::Reduce(temp_.data(), bytes, input, extent, items,
                                             MergeExtent{}, empty, stream));
  const bool tree = options_.search == CollisionSearch::Tree;
  if (tree) {
    tree_keys(b, n, extent, stream);  // seed 001's quadtree/octree (collision_tree_detect.cu)
  } else {
    setup_grid<<<1, 1, 0, stream>>>(extent, options_.dim, skin, grid);
    NBODY_CUDA_CHECK_LAUNCH("collisions setup_grid");
    make_keys<<<blocks_for(n), kThreads, 0, stream>>>(b, un, grid, keys_.data(), index_.data());
    NBODY_CUDA_CHECK_LAUNCH("collisions make_keys");
  }
  bytes = 0;
  NBODY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys_.data(),
                                                   keys_sorted_.data(), index_.data(),
                                                   index_sorted_.data(), items, 0, 64, stream));
  scratch(bytes);
  NBODY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp_.data(), bytes, keys_.data(),
                                                   keys_sorted_.data(), index_.data(),
                                                   index_sorted_.data(), items, 0, 64, stream));

  if (tree) tree_levels(b, n, skin, stream);

  // Pairs: emitted with an atomic cursor into room for an estimate, again with the exact
  // room when it overflowed; their order is fixed afterwards by the sort.
  std::size_t capacity = std::max<std::size_t>(pair_capacity_, 4 * n + 1024);
  for (;;) {
    pairs_.reserve(capacity, "collision pairs");
    pair_capacity_ = std::max(pair_capacity_, capacity);
    NBODY_CUDA_CHECK(
        cudaMemsetAsync(stats_.data() + kPairs, 0, sizeof(unsigned long long), stream));
    const auto room = unsigned(std::min<std::size_t>(capacity, UINT32_MAX));
    if (tree) {
      emit_tree_pairs(b, n, skin, room, stream);
    } else {
      auto* emit = b.ready_bin >= 0 ? emit_pairs<true> : emit_pairs<false>;
      emit<<<blocks_for(n), kThreads, 0, stream>>>(b, un, grid, keys_sorted_.data(),
                                                   index_sorted_.data(), skin, pairs_.data(), room,
                                                   stats_.data() + kPairs);
      NBODY_CUDA_CHECK_LAUNCH("collisions emit_pairs");
    }
    NBODY_CUDA_CHECK(cudaMemcpyAsync(host_ + kPairs, stats_.data() + kPairs,
                                     sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream));
    NBODY_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (host_[kPairs] <= capacity) break;
    if (host_[kPairs] > (std::size_t(1) << 31)) {
      throw Error("collisions: " + std::to_string(host_[kPairs]) +
                  " candidate pairs (bodies far too dense for their radii)");
    }
    capacity = std::size_t(host_[kPairs]) + 1024;
  }
  const std::size_t pairs = host_[kPairs];
  const std::size_t entries = 2 * pairs;
  directed_.reserve(std::max<std::size_t>(entries, 1), "collision partners");
  directed_sorted_.reserve(std::max<std::size_t>(entries, 1), "collision partners");
  if (pairs > 0) {
    direct_pairs<<<blocks_for(pairs), kThreads, 0, stream>>>(pairs_.data(), unsigned(pairs),
                                                             directed_.data());
    NBODY_CUDA_CHECK_LAUNCH("collisions direct_pairs");
    bytes = 0;
    NBODY_CUDA_CHECK(
        cub::DeviceRadixSort::SortKeys(nullptr, bytes, directed_.data(), directed_sorted_.data(),
                                       static_cast<long long>(entries), 0, 64, stream));
    scratch(bytes);
    NBODY_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(
        temp_.data(), bytes, directed_.data(), directed_sorted_.data(),
        static_cast<long long>(entries), 0, 64, stream));
  }
  partner_offsets<<<blocks_for(n + 1), kThreads, 0, stream>>>(
      directed_sorted_.data(), unsigned(entries), un, partner_offset_.data());
  NBODY_CUDA_CHECK_LAUNCH("collisions partner_offsets");
  return pairs;
}

std::vector<IndexPair> CollisionEngine::find_pairs(BodyArrays bodies, std::size_t n, double skin,
                                                   cudaStream_t stream) {
  std::vector<IndexPair> out;
  if (n < 2) return out;
  const std::size_t pairs = detect(bodies, n, skin, stream);
  std::vector<unsigned long long> keys(2 * pairs);
  if (pairs) {
    NBODY_CUDA_CHECK(cudaMemcpyAsync(keys.data(), directed_sorted_.data(),
                                     keys.size() * sizeof(unsigned long long),
                                     cudaMemcpyDeviceToHost, stream));
  }
  NBODY_CUDA_CHECK(cudaStreamSynchronize(stream));
  for (const unsigned long long k : keys) {
    const std::size_t i = k >> 32, j = k & 0xffffffffu;
    if (i < j) out.push_back({i, j});
  }
  return out;  // sorted by (i, j): the directed keys are
}

}  // namespace nbody::cuda_collisions
