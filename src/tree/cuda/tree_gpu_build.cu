// The GPU tree's build stages: Morton keys, gather into tree order, the level-by-level
// top-down build, the bottom-up moments and the walk groups (see tree_gpu.cuh).
//
// Every per-level kernel runs a fixed grid that strides over the level's cells, whose
// range it reads from device memory: the host never waits for a level's size, and a
// level that does not exist costs one empty launch.
#include <cuda_runtime.h>

#include <cstdint>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/launch.cuh"
#include "core/morton.hpp"
#include "nbody/physics/multipole.hpp"
#include "tree/cuda/tree_gpu.cuh"
#include "tree/cuda/tree_gpu_group_runs.cuh"

namespace nbody::cuda_tree {

namespace {

constexpr int kThreads = 256;
constexpr int kLevelBlocks = 1024;  // fixed grid of the per-level kernels

template <class Real>
__global__ void morton_keys(TreeView<Real> t, unsigned long long* keys, unsigned* index) {
  double cx, cy, cz, half;
  root_cube(*t.bounds, t.dim, cx, cy, cz, half);
  const int bits = key_bits(t.dim);
  const double cells = double(1ULL << bits);
  const double to_grid = cells / (2 * half);
  auto grid = [&](double v, double lo) {
    const double g = floor((v - lo) * to_grid);
    return (unsigned long long)(g >= 0 ? (g < cells - 1 ? g : cells - 1) : 0.0);  // NaN -> 0
  };
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i == 0) t.box[0] = {Real(cx), Real(cy), Real(cz), Real(half)};
  if (i >= t.n) return;
  const Vec4<Real> b = t.bodies[i];
  const unsigned long long gx = grid(double(b.x), cx - half), gy = grid(double(b.y), cy - half);
  keys[i] = t.dim == 2
                ? spread2(gx) | spread2(gy) << 1
                : spread3(gx) | spread3(gy) << 1 | spread3(grid(double(b.z), cz - half)) << 2;
  index[i] = unsigned(i);
}

template <class Real>
__global__ void gather_bodies(TreeView<Real> t) {
  const std::size_t k = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= t.n) return;
  Vec4<Real> b = t.bodies[t.order[k]];
  if (t.dim == 2) b.z = Real(0);
  t.sorted[k] = b;
}

template <class Real>
__global__ void init_root(TreeView<Real> t) {
  // The root box again (morton_keys wrote it): a rebuild after the cell arrays grew finds
  // them new.
  double cx, cy, cz, half;
  root_cube(*t.bounds, t.dim, cx, cy, cz, half);
  t.box[0] = {Real(cx), Real(cy), Real(cz), Real(half)};
  t.link[0] = {-1, 0, 0u, t.n};
  t.counter[0] = 1;  // cells used
  t.counter[1] = 0;  // overflow / stack flags
  t.level_start[0] = 0;
  t.level_start[1] = 1;
}

__device__ __forceinline__ unsigned key_digit(const unsigned long long* keys, unsigned k, int shift,
                                              unsigned mask) {
  return unsigned(keys[k] >> shift) & mask;
}

/// First index in [lo, hi) whose key digit at `shift` is >= d (digits are sorted there),
/// found by the whole warp: each round probes 32 evenly spaced keys at once and keeps the
/// gap where the digit changes, so a range of n keys takes log_33(n) rounds of one load
/// per lane (4 for 10^6 bodies) instead of log_2(n) dependent loads of one thread.
/// lo, hi and the result are the same in every lane.
__device__ unsigned warp_digit_lower_bound(const unsigned long long* keys, unsigned lo, unsigned hi,
                                           int shift, unsigned mask, unsigned d, unsigned lane) {
  constexpr unsigned full = 0xffffffffu;
  while (hi - lo > 32) {
    const unsigned long long n = hi - lo;
    auto probe = [&](unsigned j) { return lo + unsigned((j + 1) * n / 33); };  // j = 0..31
    const bool below = key_digit(keys, probe(lane), shift, mask) < d;
    const unsigned count = unsigned(__popc(__ballot_sync(full, below)));  // probes below d
    const unsigned new_lo = count > 0 ? probe(count - 1) + 1 : lo;
    hi = count < 32 ? probe(count) : hi;
    lo = new_lo;
  }
  const unsigned k = lo + lane;
  const bool below = k < hi && key_digit(keys, k, shift, mask) < d;
  return lo + unsigned(__popc(__ballot_sync(full, below)));
}

/// One level of the top-down build: a warp per cell of the level. A cell of more than
/// kLeafSize bodies is split by its key digit at this level into its non-empty children,
/// appended at the end of the cell arrays. (It was a thread per cell with binary searches:
/// the first levels, a few cells of ~10^5-10^6 bodies, were chains of ~140 dependent loads
/// each, and the 21 launches took ~0.6 ms of a 1M build on an H100.)
template <class Real>
__global__ void build_level(TreeView<Real> t, int level) {
  constexpr unsigned full = 0xffffffffu;
  const int dim = t.dim, bits = key_bits(dim);
  // After a level ran out of cell slots, the slots reserved past the end hold stale links
  // (body ranges of another build, or never set): nothing more is read until the host
  // rebuilds with more room (the tickets below are still taken, which reset each level).
  const bool out_of_room = *static_cast<volatile unsigned*>(&t.counter[1]) != 0;
  const unsigned lb = t.level_start[level], le = out_of_room ? lb : t.level_start[level + 1];
  const unsigned children = 1u << dim, mask = children - 1;
  const int shift = dim * (bits - level - 1);
  const unsigned lane = threadIdx.x & 31u;
  const unsigned warps = gridDim.x * (blockDim.x / 32);
  for (unsigned c = lb + (blockIdx.x * blockDim.x + threadIdx.x) / 32; c < le; c += warps) {
    const CellLink lk = t.link[c];
    if (lk.end - lk.begin <= kLeafSize || level >= bits) continue;  // a leaf
    // Lane d ends with the first body of child d (lanes >= children: the cell's end).
    unsigned edge = lane == 0 ? lk.begin : lk.end;
    unsigned from = lk.begin;
    for (unsigned d = 1; d < children; ++d) {
      from = warp_digit_lower_bound(t.keys, from, lk.end, shift, mask, d, lane);
      if (lane == d) edge = from;
    }
    const unsigned next_edge = __shfl_down_sync(full, edge, 1);
    const bool used = lane < children && next_edge > edge;
    const unsigned used_mask = __ballot_sync(full, used);
    unsigned base = 0;
    if (lane == 0) base = atomicAdd(&t.counter[0], unsigned(__popc(used_mask)));
    base = __shfl_sync(full, base, 0);
    if (base + unsigned(__popc(used_mask)) > t.capacity) {
      if (lane == 0) atomicOr(&t.counter[1], 1u);  // out of cell slots: the host grows and rebuilds
      continue;
    }
    if (used) {
      const Vec4<Real> p = t.box[c];
      const Real h = p.w * Real(0.5);
      const unsigned slot = base + unsigned(__popc(used_mask & ((1u << lane) - 1u)));
      t.link[slot] = {-1, 0, edge, next_edge};
      t.box[slot] = {p.x + ((lane & 1u) ? h : -h), p.y + ((lane & 2u) ? h : -h),
                     dim == 2 ? Real(0) : p.z + ((lane & 4u) ? h : -h), h};
    }
    if (lane == 0) {
      t.link[c].first_child = int(base);
      t.link[c].child_count = __popc(used_mask);
    }
  }
  finish_level(t, level);
}

/// b_max of a cell whose centre of mass (as stored) is (x, y, z): the largest distance from
/// it to a body of the cell, exact for a leaf; for an inner cell the bound max over the
/// children of |com_child - com| + b_max_child (the CPU tree's, tree_moments.cpp), which
/// opens at least the cells the exact value would.
template <class Real>
__device__ double body_reach(const TreeView<Real>& t, const CellLink& lk, Real x, Real y, Real z) {
  double reach = 0;
  auto distance = [&](const Vec4<Real>& p) {
    const double dx = double(p.x) - double(x), dy = double(p.y) - double(y),
                 dz = double(p.z) - double(z);
    return sqrt(dx * dx + dy * dy + dz * dz);
  };
  if (lk.first_child < 0) {
    for (unsigned k = lk.begin; k < lk.end; ++k) reach = fmax(reach, distance(t.sorted[k]));
  } else {
    for (int ch = lk.first_child; ch < lk.first_child + lk.child_count; ++ch)
      reach = fmax(reach, distance(t.com[ch]) + double(t.bmax[ch]));
  }
  return reach;
}

/// A refit's box of cell c (TreeForces::refit): the smallest cube holding its old box and
/// its bodies' places now (a leaf) or its children's boxes, already grown (the levels run
/// bottom-up). So a cell only grows between builds and holds every body it stands for: the
/// overlap test still opens it for a group among its bodies, and the criteria judge it by
/// an edge no smaller than the build's.
template <class Real>
__device__ Vec4<Real> grown_box(const TreeView<Real>& t, const CellLink& lk, Vec4<Real> old) {
  const bool planar = t.dim == 2;
  double lo[3] = {double(old.x) - old.w, double(old.y) - old.w, double(old.z) - old.w};
  double hi[3] = {double(old.x) + old.w, double(old.y) + old.w, double(old.z) + old.w};
  auto hold = [&](double x, double y, double z, double h) {
    lo[0] = fmin(lo[0], x - h), hi[0] = fmax(hi[0], x + h);
    lo[1] = fmin(lo[1], y - h), hi[1] = fmax(hi[1], y + h);
    lo[2] = fmin(lo[2], z - h), hi[2] = fmax(hi[2], z + h);
  };
  if (lk.first_child < 0) {
    for (unsigned k = lk.begin; k < lk.end; ++k) {
      const Vec4<Real> b = t.sorted[k];
      hold(double(b.x), double(b.y), double(b.z), 0.0);
    }
  } else {
    for (int ch = lk.first_child; ch < lk.first_child + lk.child_count; ++ch) {
      const Vec4<Real> b = t.box[ch];
      hold(double(b.x), double(b.y), double(b.z), double(b.w));
    }
  }
  const Real cx = Real(0.5 * (lo[0] + hi[0])), cy = Real(0.5 * (lo[1] + hi[1]));
  const Real cz = planar ? Real(0) : Real(0.5 * (lo[2] + hi[2]));
  // The half edge from the rounded centre, rounded up: the cube holds the whole range.
  double half = fmax(fmax(hi[0] - double(cx), double(cx) - lo[0]),
                     fmax(hi[1] - double(cy), double(cy) - lo[1]));
  if (!planar) half = fmax(half, fmax(hi[2] - double(cz), double(cz) - lo[2]));
  Real h = Real(half);
  if (double(h) < half) h = nextafter(h, Real(INFINITY));
  return {cx, cy, cz, h};
}

template <class Real>
__global__ void moments_level(TreeView<Real> t, int level, bool quadrupole, bool grow) {
  const unsigned lb = t.level_start[level], le = t.level_start[level + 1];
  const bool planar = t.dim == 2;
  for (unsigned c = lb + blockIdx.x * blockDim.x + threadIdx.x; c < le;
       c += gridDim.x * blockDim.x) {
    const CellLink lk = t.link[c];
    if (grow) t.box[c] = grown_box(t, lk, t.box[c]);
    double m = 0, mx = 0, my = 0, mz = 0;
    if (lk.first_child < 0) {
      for (unsigned k = lk.begin; k < lk.end; ++k) {
        const Vec4<Real> b = t.sorted[k];
        m += double(b.w);
        mx += double(b.w) * double(b.x);
        my += double(b.w) * double(b.y);
        mz += double(b.w) * double(b.z);
      }
    } else {
      for (int ch = lk.first_child; ch < lk.first_child + lk.child_count; ++ch) {
        const Vec4<Real> g = t.com[ch];
        m += double(g.w);
        mx += double(g.w) * double(g.x);
        my += double(g.w) * double(g.y);
        mz += double(g.w) * double(g.z);
      }
    }
    // Massless cells (test particles) keep the geometric centre, as on the CPU.
    const Vec4<Real> box = t.box[c];
    const double gx = m > 0 ? mx / m : double(box.x);
    const double gy = m > 0 ? my / m : double(box.y);
    const double gz = planar ? 0.0 : (m > 0 ? mz / m : double(box.z));
    t.com[c] = {Real(gx), Real(gy), Real(gz), Real(m)};
    if (t.bmax) t.bmax[c] = Real(body_reach(t, lk, Real(gx), Real(gy), Real(gz)));
    if (!quadrupole) continue;
    Quadrupole<double> q;
    if (lk.first_child < 0) {
      for (unsigned k = lk.begin; k < lk.end; ++k) {
        const Vec4<Real> b = t.sorted[k];
        add_point_quadrupole(q, double(b.w), double(b.x) - gx, double(b.y) - gy, double(b.z) - gz);
      }
    } else {
      for (int ch = lk.first_child; ch < lk.first_child + lk.child_count; ++ch) {
        const Vec4<Real> g = t.com[ch];
        const Vec4<Real> q0 = t.quad[2 * std::size_t(ch)], q1 = t.quad[2 * std::size_t(ch) + 1];
        const Quadrupole<double> child{double(q0.x), double(q0.y), double(q0.z), double(q0.w),
                                       double(q1.x), double(q1.y), double(q1.z)};
        add_shifted_quadrupole(q, child, double(g.w), double(g.x) - gx, double(g.y) - gy,
                               double(g.z) - gz);
      }
    }
    t.quad[2 * std::size_t(c)] = {Real(q.xx), Real(q.yy), Real(q.zz), Real(q.xy)};
    t.quad[2 * std::size_t(c) + 1] = {Real(q.xz), Real(q.yz), Real(q.tr), Real(0)};
  }
}

// ---- Walk groups: the CPU tree's make_groups (tree_walk.cpp), one cell per thread -------

/// Calls emit(begin, end) for the groups cell c is responsible for: the root when it is
/// small or a leaf, big leaves (in chunks of kMaxGroup), and for a big inner cell the runs
/// of consecutive small children that fit in one group.
template <class Real, class Emit>
__device__ void cell_groups(const TreeView<Real>& t, unsigned c, Emit&& emit) {
  const CellLink lk = t.link[c];
  const unsigned count = lk.end - lk.begin;
  auto chunks = [&](unsigned b, unsigned e) {
    for (unsigned s = b; s < e; s += kMaxGroup) emit(s, e - s > kMaxGroup ? s + kMaxGroup : e);
  };
  if (lk.first_child < 0 || count <= kMaxGroup) {
    if (c == 0 || (lk.first_child < 0 && count > kMaxGroup)) chunks(lk.begin, lk.end);
    return;
  }
  // A larger child emits its own groups.
  small_child_runs(t.link, lk, chunks, [](int, const CellLink&) {});
}

template <class Real>
__global__ void count_groups(TreeView<Real> t, unsigned cells) {
  const unsigned c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cells) return;
  unsigned count = 0;
  cell_groups(t, c, [&](unsigned, unsigned) { ++count; });
  t.group_count[c] = count;
}

template <class Real>
__global__ void write_groups(TreeView<Real> t, unsigned cells) {
  const unsigned c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cells) return;
  unsigned slot = t.group_offset[c];
  cell_groups(t, c, [&](unsigned b, unsigned e) { t.groups[slot++] = {b, e}; });
  if (c == cells - 1) {
    t.counter[2] = slot;  // groups in all
    t.counter[3] = 0;     // the walk's cursor
    t.counter[4] = 0;     // groups abandoned by the walk's first pass
    t.counter[5] = 0;     // the second pass's cursor
  }
}

}  // namespace

template <class Real>
void launch_keys(const TreeView<Real>& t, cudaStream_t stream) {
  // Unsorted keys and indices go to the arrays the sort reads (keys_tmp, order_tmp): the
  // caller passes them as t.keys / t.order of a view made for this call.
  morton_keys<Real><<<gpu::blocks_for(t.n, kThreads), kThreads, 0, stream>>>(t, t.keys, t.order);
  NBODY_CUDA_CHECK_LAUNCH("tree morton_keys");
}

template <class Real>
void launch_gather(const TreeView<Real>& t, cudaStream_t stream) {
  gather_bodies<Real><<<gpu::blocks_for(t.n, kThreads), kThreads, 0, stream>>>(t);
  NBODY_CUDA_CHECK_LAUNCH("tree gather_bodies");
}

template <class Real>
void launch_build(const TreeView<Real>& t, cudaStream_t stream) {
  init_root<Real><<<1, 1, 0, stream>>>(t);
  NBODY_CUDA_CHECK_LAUNCH("tree init_root");
  for (int level = 0; level < key_bits(t.dim); ++level) {
    build_level<Real><<<kLevelBlocks, kThreads, 0, stream>>>(t, level);
    NBODY_CUDA_CHECK_LAUNCH("tree build_level");
  }
}

template <class Real>
void launch_moments(const TreeView<Real>& t, bool quadrupole, cudaStream_t stream, bool grow) {
  for (int level = key_bits(t.dim); level >= 0; --level) {
    moments_level<Real><<<kLevelBlocks, kThreads, 0, stream>>>(t, level, quadrupole, grow);
    NBODY_CUDA_CHECK_LAUNCH("tree moments_level");
  }
}

template <class Real>
void launch_group_count(const TreeView<Real>& t, unsigned cells, cudaStream_t stream) {
  count_groups<Real><<<gpu::blocks_for(cells, kThreads), kThreads, 0, stream>>>(t, cells);
  NBODY_CUDA_CHECK_LAUNCH("tree count_groups");
}

template <class Real>
void launch_group_write(const TreeView<Real>& t, unsigned cells, cudaStream_t stream) {
  write_groups<Real><<<gpu::blocks_for(cells, kThreads), kThreads, 0, stream>>>(t, cells);
  NBODY_CUDA_CHECK_LAUNCH("tree write_groups");
}

#define NBODY_TREE_BUILD(Real)                                                           \
  template void launch_keys<Real>(const TreeView<Real>&, cudaStream_t);                  \
  template void launch_gather<Real>(const TreeView<Real>&, cudaStream_t);                \
  template void launch_build<Real>(const TreeView<Real>&, cudaStream_t);                 \
  template void launch_moments<Real>(const TreeView<Real>&, bool, cudaStream_t, bool);   \
  template void launch_group_count<Real>(const TreeView<Real>&, unsigned, cudaStream_t); \
  template void launch_group_write<Real>(const TreeView<Real>&, unsigned, cudaStream_t);
NBODY_TREE_BUILD(float)
NBODY_TREE_BUILD(double)
#undef NBODY_TREE_BUILD

}  // namespace nbody::cuda_tree
