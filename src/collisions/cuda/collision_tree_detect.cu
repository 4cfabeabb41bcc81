// The GPU engine's tree search (CollisionOptions::search = Tree), seed 001 §3 as the CPU's
// collisions/contact_tree.hpp states it: bodies sorted by Morton key (an implicit
// quadtree/octree: every cell one run of sorted keys), each body's leaf from its sorted
// neighbours, parent climbing while the cell is narrower than twice the body's reach, then
// one thread per body over the 3^dim cells around it at that level, descending into cells
// that hold many bodies (an explicit stack) and skipping those out of reach. A pair is
// searched from its larger body, so each is found once; the pairs go to the engine's
// common partner lists (collision_detect.cu), so the resolution is the grid's.
#include <cuda_runtime.h>

#include <cfloat>
#include <cstdint>

#include "collisions/cuda/collision_engine.cuh"
#include "collisions/cuda/collision_engine_shared.cuh"
#include "core/cuda/cuda_check.cuh"
#include "core/morton.hpp"

namespace nbody::cuda_collisions {
namespace {

// The CPU's constants (contact_tree.cpp): the same levels, so the same work per body.
constexpr double kMargin = 1e-5;
constexpr double kAbsoluteMargin = 1e-6;  // finest cells
constexpr unsigned kScanBodies = 16;
// Deepest descent: 2^dim - 1 siblings waiting per level, 31 levels at most.
constexpr int kStack = 7 * 21 + 8;

__host__ __device__ inline int bits_for(int dim) {
  return dim == 2 ? 31 : 21;
}

__device__ inline unsigned long long compact(unsigned long long k, int dim) {
  unsigned long long out = 0;
  for (int b = 0; b < 32; ++b) out |= ((k >> (dim * b)) & 1ull) << b;
  return out;
}

/// Morton code of cell coordinates (axis 0 the most significant of each group).
__device__ inline unsigned long long morton(const unsigned long long* c, int dim) {
  unsigned long long k = 0;
  for (int a = 0; a < dim; ++a) k |= spread(c[a], dim) << (dim - 1 - a);
  return k;
}

/// Finest-cell coordinate of v (clamped; NaN -> 0), as a real number and as a cell.
__device__ inline double cell_units(double v, double lo, double inv_h, int bits) {
  const double t = (v - lo) * inv_h;
  const double top = double((1ull << bits) - 1);
  return t >= 0 ? fmin(t, top) : 0.0;
}

__global__ void setup_tree(const Extent* e, int dim, TreeFrame* f) {
  double side = 0;
  for (int k = 0; k < 3; ++k) {
    f->lo[k] = k < dim ? e->lo[k] : 0.0;
    if (k < dim) side = fmax(side, e->hi[k] - e->lo[k]);
  }
  f->bits = bits_for(dim);
  f->dim = dim;
  f->h = side > 0 ? ldexp(side, -f->bits) : 1.0;
  f->inv_h = 1.0 / f->h;
}

__global__ void tree_keys_kernel(BodyArrays b, unsigned n, const TreeFrame* frame,
                                 unsigned long long* keys, unsigned* index) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const TreeFrame f = *frame;
  const double pos[3] = {b.x[i], b.y[i], b.z[i]};
  unsigned long long c[3] = {0, 0, 0};
  for (int a = 0; a < f.dim; ++a)
    c[a] = static_cast<unsigned long long>(cell_units(pos[a], f.lo[a], f.inv_h, f.bits));
  keys[i] = morton(c, f.dim);
  index[i] = i;
}

/// Each sorted body's search level (a shift of the finest): its leaf, then up while
/// narrower than twice its reach.
__global__ void tree_levels_kernel(BodyArrays b, unsigned n, const TreeFrame* frame,
                                   const unsigned long long* keys, const unsigned* index,
                                   double skin, unsigned char* shift) {
  const unsigned s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= n) return;
  const TreeFrame f = *frame;
  int leaf = n == 1 ? f.bits : 0;
  if (s > 0 && keys[s] != keys[s - 1])
    leaf = max(leaf, (63 - __clzll(keys[s] ^ keys[s - 1])) / f.dim);
  if (s + 1 < n && keys[s] != keys[s + 1])
    leaf = max(leaf, (63 - __clzll(keys[s] ^ keys[s + 1])) / f.dim);
  const double need =
      2 * b.r[index[s]] * (1 + skin) * (1 + kMargin) * f.inv_h + 1 + kAbsoluteMargin;
  int reach = 1;
  while (reach < f.bits && ldexp(1.0, reach) < need) ++reach;
  shift[s] = static_cast<unsigned char>(max(leaf, reach));
}

struct Cell {
  unsigned long long prefix;  // Morton code of the cell's coordinates at `shift`
  int shift;
};

template <bool kGated>
__global__ void emit_tree_kernel(BodyArrays b, unsigned n, const TreeFrame* frame,
                                 const unsigned long long* keys, const unsigned* index,
                                 const unsigned char* shifts, double skin,
                                 unsigned long long* pairs, unsigned capacity,
                                 unsigned long long* count) {
  const unsigned s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= n) return;
  const TreeFrame f = *frame;
  const unsigned i = index[s];
  const double ri = b.r[i];
  if (!(ri > 0)) return;  // owns no pair: the other body is never smaller
  const double pos[3] = {b.x[i], b.y[i], b.z[i]};
  const double reach = 1 + skin;
  const double span = 2 * ri * reach * (1 + kMargin);  // the farthest pair it owns
  double u[3] = {0, 0, 0};
  for (int a = 0; a < f.dim; ++a) u[a] = cell_units(pos[a], f.lo[a], f.inv_h, f.bits);
  const int s0 = shifts[s];
  const unsigned long long top = (1ull << (f.bits - s0)) - 1;
  Cell stack[kStack];
  int depth = 0;
  const int zspan = f.dim == 3 ? 1 : 0;
  for (int d0 = -1; d0 <= 1; ++d0) {
    for (int d1 = -1; d1 <= 1; ++d1) {
      for (int d2 = -zspan; d2 <= zspan; ++d2) {
        const int delta[3] = {d0, d1, d2};
        unsigned long long c[3] = {0, 0, 0};
        bool inside = true;
        for (int a = 0; a < f.dim; ++a) {
          c[a] = (static_cast<unsigned long long>(u[a]) >> s0) + (long long)delta[a];
          inside = inside && c[a] <= top;  // -1 wraps above top
        }
        if (inside) stack[depth++] = {morton(c, f.dim), s0};
        while (depth > 0) {
          const Cell cell = stack[--depth];
          const int level_bits = f.dim * cell.shift;
          const unsigned first = lower_bound(keys, n, cell.prefix << level_bits);
          const unsigned last = lower_bound(keys, n, (cell.prefix + 1) << level_bits);
          if (first == last) continue;
          double gap2 = 0;
          const double width = ldexp(1.0, cell.shift);
          for (int a = 0; a < f.dim; ++a) {
            const double cc = double(compact(cell.prefix >> (f.dim - 1 - a), f.dim));
            const double below = cc * width - u[a], above = u[a] - (cc + 1) * width;
            const double gap = fmax(0.0, fmax(below - 1, above - 1)) * f.h;
            gap2 += gap * gap;
          }
          if (gap2 > span * span) continue;  // out of reach (grown by a finest cell)
          if (last - first <= kScanBodies || cell.shift == 0 || depth + (1 << f.dim) > kStack) {
            for (unsigned t = first; t < last; ++t) {
              const unsigned j = index[t];
              const double rj = b.r[j];
              if (t == s || !(rj < ri || (rj == ri && t > s))) continue;  // the larger's pair
              const double ddx = b.x[j] - pos[0], ddy = b.y[j] - pos[1], ddz = b.z[j] - pos[2];
              const double touch = (ri + rj) * reach;
              if (ddx * ddx + ddy * ddy + ddz * ddz >= touch * touch) continue;
              if (kGated && !through_gate(b, i, j)) continue;
              const unsigned long long slot = atomicAdd(count, 1ULL);
              if (slot < capacity) {
                const unsigned lo = i < j ? i : j, hi = i < j ? j : i;
                pairs[slot] = (static_cast<unsigned long long>(lo) << 32) | hi;
              }
            }
            continue;
          }
          for (unsigned ch = 0; ch < (1u << f.dim); ++ch)
            stack[depth++] = {(cell.prefix << f.dim) | ch, cell.shift - 1};
        }
      }
    }
  }
}

}  // namespace

void CollisionEngine::tree_keys(const BodyArrays& b, std::size_t n, const Extent* extent,
                                cudaStream_t stream) {
  auto* frame = reinterpret_cast<TreeFrame*>(grid_.data());
  setup_tree<<<1, 1, 0, stream>>>(extent, options_.dim, frame);
  NBODY_CUDA_CHECK_LAUNCH("collisions setup_tree");
  tree_keys_kernel<<<blocks_for(n), kThreads, 0, stream>>>(b, unsigned(n), frame, keys_.data(),
                                                           index_.data());
  NBODY_CUDA_CHECK_LAUNCH("collisions tree_keys");
}

void CollisionEngine::tree_levels(const BodyArrays& b, std::size_t n, double skin,
                                  cudaStream_t stream) {
  tree_shift_.reserve(n, "collision tree levels");
  tree_levels_kernel<<<blocks_for(n), kThreads, 0, stream>>>(
      b, unsigned(n), reinterpret_cast<const TreeFrame*>(grid_.data()), keys_sorted_.data(),
      index_sorted_.data(), skin, tree_shift_.data());
  NBODY_CUDA_CHECK_LAUNCH("collisions tree_levels");
}

void CollisionEngine::emit_tree_pairs(const BodyArrays& b, std::size_t n, double skin,
                                      unsigned capacity, cudaStream_t stream) {
  auto* emit = b.ready_bin >= 0 ? emit_tree_kernel<true> : emit_tree_kernel<false>;
  emit<<<blocks_for(n), kThreads, 0, stream>>>(
      b, unsigned(n), reinterpret_cast<const TreeFrame*>(grid_.data()), keys_sorted_.data(),
      index_sorted_.data(), tree_shift_.data(), skin, pairs_.data(), capacity,
      stats_.data() + kPairs);
  NBODY_CUDA_CHECK_LAUNCH("collisions emit_tree_pairs");
}

}  // namespace nbody::cuda_collisions
