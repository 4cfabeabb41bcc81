// The GPU tree's force walk: one warp per group of <= kMaxGroup tree-ordered bodies, each
// lane owning up to 4 of them (lane, lane + 32, ...), so that every list entry read feeds
// 4 interactions.
//
// The warp walks with a stack of cells in global memory (its own slice; the grid is
// persistent, warps take groups from an atomic cursor, so the stacks are sized by the
// GPU, not by N). Each round pops up to 32 cells, one per lane, and tests them against the
// group's bounding box with the CPU tree's test (opening_criterion.hpp: overlap, or
// s^2 >= theta^2 d^2 with d from the centre of mass to the box): __ballot_sync sorts the
// lanes' answers into the accepted cells and the opened leaves, appended to two lists in
// shared memory, and the opened inner cells push their children (a warp prefix sum gives
// each lane its slots). When a list holds 32 entries the whole warp evaluates it: every
// lane against every entry (a broadcast read), with the direct sum's pair function and,
// for --quadrupole, the quadrupole term (multipole.hpp) on accepted cells.
#include <cuda_runtime.h>

#include <algorithm>

#include "gravity/cuda/cuda_check.cuh"
#include "gravity/cuda/device_math.cuh"
#include "nbody/physics/multipole.hpp"
#include "nbody/physics/opening_criterion.hpp"
#include "nbody/physics/pair_force.hpp"
#include "tree/cuda/tree_gpu.cuh"

namespace nbody::cuda_tree {

namespace {

constexpr int kWalkThreads = 256;
constexpr int kWalkWarps = kWalkThreads / 32;
constexpr int kPerLane = int(kMaxGroup / 32);
constexpr unsigned kFull = 0xffffffffu;
constexpr int kListCapacity = 64;  // < 32 waiting + <= 32 new

template <class Real>
struct Target {
  Real x[kPerLane], y[kPerLane], z[kPerLane];
  Real ax[kPerLane], ay[kPerLane], az[kPerLane];
};

template <class Real, class Math, bool Quad>
__device__ __forceinline__ void evaluate_cells(const TreeView<Real>& t, const int* list, int count, Real eps2,
                                               Target<Real>& me) {
  for (int e = 0; e < count; ++e) {
    const std::size_t c = std::size_t(list[e]);
    const Vec4<Real> m = t.com[c];
#pragma unroll
    for (int k = 0; k < kPerLane; ++k) {
      accumulate_pair_acceleration<Real, Math>(m.x - me.x[k], m.y - me.y[k], m.z - me.z[k], m.w, eps2, me.ax[k],
                                               me.ay[k], me.az[k]);
    }
    if constexpr (Quad) {
      const Vec4<Real> q0 = t.quad[2 * c], q1 = t.quad[2 * c + 1];
      const Quadrupole<Real> q{q0.x, q0.y, q0.z, q0.w, q1.x, q1.y};
#pragma unroll
      for (int k = 0; k < kPerLane; ++k) {
        accumulate_quadrupole_acceleration<Real, Math>(m.x - me.x[k], m.y - me.y[k], m.z - me.z[k], q, eps2,
                                                       me.ax[k], me.ay[k], me.az[k]);
      }
    }
  }
}

/// Returns the bodies evaluated (for the interaction count).
template <class Real, class Math>
__device__ __forceinline__ unsigned evaluate_leaves(const TreeView<Real>& t, const int* list, int count, Real eps2,
                                                    Target<Real>& me) {
  unsigned bodies = 0;
  for (int e = 0; e < count; ++e) {
    const CellLink lk = t.link[list[e]];
    bodies += lk.end - lk.begin;
    for (unsigned j = lk.begin; j < lk.end; ++j) {
      const Vec4<Real> b = t.sorted[j];
#pragma unroll
      for (int k = 0; k < kPerLane; ++k) {
        accumulate_pair_acceleration<Real, Math>(b.x - me.x[k], b.y - me.y[k], b.z - me.z[k], b.w, eps2, me.ax[k],
                                                 me.ay[k], me.az[k]);
      }
    }
  }
  return bodies;
}

template <class Real>
__device__ __forceinline__ Real warp_min(Real v) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v = min(v, __shfl_xor_sync(kFull, v, off));
  return v;
}
template <class Real>
__device__ __forceinline__ Real warp_max(Real v) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v = max(v, __shfl_xor_sync(kFull, v, off));
  return v;
}

template <class Real, class Math, bool Quad>
__global__ void __launch_bounds__(kWalkThreads) tree_walk(TreeView<Real> t, Real theta2, Real eps2, int* stacks,
                                                          Vec4<Real>* out) {
  __shared__ int cell_lists[kWalkWarps][kListCapacity];
  __shared__ int leaf_lists[kWalkWarps][kListCapacity];
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  const unsigned below = (1u << lane) - 1u;
  int* stack = stacks + (std::size_t(blockIdx.x) * kWalkWarps + warp) * kStackCapacity;
  int* cells = cell_lists[warp];
  int* leaves = leaf_lists[warp];
  const unsigned n_groups = t.counter[2];
  const bool planar = t.dim == 2;
  // A body on a cell face, or a hair outside its cell after rounding, still counts as
  // inside it (the CPU uses root_half * 2^-40 in double).
  const Real slack = t.box[0].w * (sizeof(Real) == 4 ? Real(0x1p-20) : Real(0x1p-40));

  for (;;) {
    unsigned g = 0;
    if (lane == 0) g = atomicAdd(&t.counter[3], 1u);
    g = __shfl_sync(kFull, g, 0);
    if (g >= n_groups) break;
    const Group grp = t.groups[g];

    Target<Real> me;
    Real lx, ly, lz, hx, hy, hz;
#pragma unroll
    for (int k = 0; k < kPerLane; ++k) {
      const unsigned i = grp.begin + lane + 32u * unsigned(k);
      const Vec4<Real> b = t.sorted[i < grp.end ? i : grp.begin];  // idle slots copy a group body
      me.x[k] = b.x;
      me.y[k] = b.y;
      me.z[k] = b.z;
      me.ax[k] = me.ay[k] = me.az[k] = Real(0);
      lx = k == 0 ? b.x : min(lx, b.x);
      ly = k == 0 ? b.y : min(ly, b.y);
      lz = k == 0 ? b.z : min(lz, b.z);
      hx = k == 0 ? b.x : max(hx, b.x);
      hy = k == 0 ? b.y : max(hy, b.y);
      hz = k == 0 ? b.z : max(hz, b.z);
    }
    lx = warp_min(lx), ly = warp_min(ly), lz = warp_min(lz);
    hx = warp_max(hx), hy = warp_max(hy), hz = warp_max(hz);
    const Real gx = Real(0.5) * (lx + hx), gy = Real(0.5) * (ly + hy), gz = Real(0.5) * (lz + hz);
    const Real ghx = Real(0.5) * (hx - lx), ghy = Real(0.5) * (hy - ly), ghz = Real(0.5) * (hz - lz);

    unsigned long long entries = 0;  // list entries summed by the group's bodies
    int size = 1, n_cells = 0, n_leaves = 0;
    if (lane == 0) stack[0] = 0;
    __syncwarp();
    while (size > 0) {
      const int take = size < 32 ? size : 32;
      const int base = size - take;
      const int c = int(lane) < take ? stack[base + int(lane)] : -1;
      __syncwarp();  // every lane has read its cell before the pushes overwrite the slots
      size = base;
      bool accept = false, open_leaf = false;
      int children = 0, first_child = 0;
      if (c >= 0) {
        const Vec4<Real> box = t.box[c];
        const Vec4<Real> m = t.com[c];
        const Real h = box.w, s = Real(2) * h;
        const bool open =
            boxes_overlap(box.x, box.y, box.z, h, h, planar ? Real(0) : h, gx, gy, gz, ghx, ghy, ghz, slack) ||
            bh_must_open(s * s, theta2, distance2_point_box(m.x, m.y, m.z, gx, gy, gz, ghx, ghy, ghz));
        if (!open) {
          accept = true;
        } else {
          const CellLink lk = t.link[c];
          if (lk.first_child < 0) {
            open_leaf = true;
          } else {
            children = lk.child_count;
            first_child = lk.first_child;
          }
        }
      }
      const unsigned accepted = __ballot_sync(kFull, accept);
      if (accept) cells[n_cells + __popc(accepted & below)] = c;
      n_cells += __popc(accepted);
      const unsigned opened = __ballot_sync(kFull, open_leaf);
      if (open_leaf) leaves[n_leaves + __popc(opened & below)] = c;
      n_leaves += __popc(opened);
      // Children onto the stack: an inclusive prefix sum over the lanes gives the slots.
      int upto = children;
#pragma unroll
      for (int off = 1; off < 32; off <<= 1) {
        const int v = __shfl_up_sync(kFull, upto, off);
        if (int(lane) >= off) upto += v;
      }
      const int pushed = __shfl_sync(kFull, upto, 31);
      if (size + pushed > int(kStackCapacity)) {  // cannot happen (tree_gpu.cuh); never write past
        if (lane == 0) atomicOr(&t.counter[1], 2u);
        break;
      }
      for (int j = 0; j < children; ++j) stack[size + upto - children + j] = first_child + j;
      size += pushed;
      __syncwarp();
      if (n_cells >= 32) {
        evaluate_cells<Real, Math, Quad>(t, cells, n_cells, eps2, me);
        entries += unsigned(n_cells);
        n_cells = 0;
        __syncwarp();
      }
      if (n_leaves >= 32) {
        entries += evaluate_leaves<Real, Math>(t, leaves, n_leaves, eps2, me);
        n_leaves = 0;
        __syncwarp();
      }
    }
    evaluate_cells<Real, Math, Quad>(t, cells, n_cells, eps2, me);
    entries += unsigned(n_cells);
    entries += evaluate_leaves<Real, Math>(t, leaves, n_leaves, eps2, me);
    __syncwarp();

#pragma unroll
    for (int k = 0; k < kPerLane; ++k) {
      const unsigned i = grp.begin + lane + 32u * unsigned(k);
      if (i < grp.end) out[t.order[i]] = {me.ax[k], me.ay[k], planar ? Real(0) : me.az[k], Real(0)};
    }
    if (lane == 0) atomicAdd(t.interactions, entries * (grp.end - grp.begin));
  }
}

template <class Real, bool Softened, bool Quad>
auto walk_kernel() {
  using Math = typename cuda_direct::MathFor<Real, true, Softened>::type;
  return tree_walk<Real, Math, Quad>;
}

template <class Real, bool Softened, bool Quad>
unsigned walk_blocks() {
  int device = 0, sms = 1, blocks = 0;
  NBODY_CUDA_CHECK(cudaGetDevice(&device));
  NBODY_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  NBODY_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, walk_kernel<Real, Softened, Quad>(),
                                                                 kWalkThreads, 0));
  return unsigned(sms) * unsigned(blocks > 0 ? blocks : 1);
}

}  // namespace

template <class Real>
unsigned walk_warps(bool, int) {
  // The stacks are allocated once for the variant with the most resident warps.
  const unsigned blocks = std::max({walk_blocks<Real, true, false>(), walk_blocks<Real, false, false>(),
                                    walk_blocks<Real, true, true>(), walk_blocks<Real, false, true>()});
  return blocks * unsigned(kWalkWarps);
}

template <class Real>
void launch_walk(const TreeView<Real>& t, const WalkParams& p, Real eps2, int* stacks, Vec4<Real>* out,
                 cudaStream_t stream) {
  const Real theta2 = Real(p.theta * p.theta);
  auto go = [&](auto kernel, unsigned blocks) {
    kernel<<<blocks, kWalkThreads, 0, stream>>>(t, theta2, eps2, stacks, out);
  };
  if (eps2 >= Real(1e-30)) {
    p.quadrupole ? go(walk_kernel<Real, true, true>(), walk_blocks<Real, true, true>())
                 : go(walk_kernel<Real, true, false>(), walk_blocks<Real, true, false>());
  } else {
    p.quadrupole ? go(walk_kernel<Real, false, true>(), walk_blocks<Real, false, true>())
                 : go(walk_kernel<Real, false, false>(), walk_blocks<Real, false, false>());
  }
  NBODY_CUDA_CHECK_LAUNCH("tree_walk");
}

template unsigned walk_warps<float>(bool, int);
template unsigned walk_warps<double>(bool, int);
template void launch_walk<float>(const TreeView<float>&, const WalkParams&, float, int*, Vec4<float>*, cudaStream_t);
template void launch_walk<double>(const TreeView<double>&, const WalkParams&, double, int*, Vec4<double>*,
                                  cudaStream_t);

}  // namespace nbody::cuda_tree
