// The locally essential tree on the GPU, sender side (issue 35; the CPU's is
// src/tree/essential_tree.cpp, whose comment proves the test monotone): for a receiver
// described by boxes (the pieces of its own tree that describe_bodies gives), the cells and
// bodies of this tree that the receiver's walk can need, packed into one device buffer that
// the receiver walks as foreign sources (TreeForces::walk_sources).
//
// A cell is opened for a box when the walk's test (tree_walk, tree_gpu_walk_kernel.cuh,
// with the same helpers of physics/opening_criterion.hpp) opens it for a group whose box
// is the receiver's: a group inside the box opens no cell the box accepts. The box's test
// is made a little stricter (the box widened by 1e-4 of its largest half extent plus a few
// ulps of its centre, theta^2 and alpha_a times 1 - 1e-4): a group's box is computed in Real
// from the bodies, the receiver's box elsewhere, and they may differ by roundings.
//
// The essential tree is the union of the boxes' trees: every box walks this tree as a group
// walk would (box_walk, a warp per box, marking the cells it opens), and a cell is included
// iff its parent is marked (a group inside a box opens only cells the box opens, so it
// meets only included cells). Then two cub scans (compacted cell indices in cell order,
// which keep a cell's children contiguous; the body offsets of the included leaves) and a
// write kernel. An included leaf ships its bodies; an included inner cell that is not
// opened becomes a leaf without bodies (every receiver group accepts it whole); an opened
// one keeps its children. Cells keep their box, moments and b_max unchanged, so the root's
// half (the walk's slack) is the sender root's.
//
// Measured (2 H100s, 64M Plummer, relative criterion): the first version tested every cell
// against every box of a receiver (64 equal runs of its bodies) and walked each cell's
// ancestors; with a piece of the tree per ~n/2048 bodies that took 9-14 ms a step, as many
// tests as cells times boxes near the cut.
#include <cuda_runtime.h>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/launch.cuh"
#include "nbody/error.hpp"
#include "nbody/physics/opening_criterion.hpp"
#include "tree/cuda/tree_gpu.cuh"
#include "tree/cuda/tree_gpu_walk_warp.cuh"

namespace nbody::cuda_tree {

namespace {

/// The packed buffer's sections (byte offsets), each aligned to a Vec4<Real>.
template <class Real>
struct Layout {
  std::size_t box, com, quad, link, bmax, bodies, end;
};

constexpr std::size_t round_up(std::size_t x, std::size_t a) {
  return (x + a - 1) / a * a;
}

template <class Real>
Layout<Real> layout(EssentialCounts c, bool quadrupole, bool bmax) {
  constexpr std::size_t v = sizeof(Vec4<Real>);
  Layout<Real> l{};
  l.box = 0;
  l.com = l.box + c.cells * v;
  l.quad = l.com + c.cells * v;
  l.link = l.quad + (quadrupole ? 2 * c.cells * v : 0);
  l.bmax = l.link + round_up(c.cells * sizeof(CellLink), v);
  l.bodies = l.bmax + (bmax ? round_up(round_up(c.cells, 4) * sizeof(Real), v) : 0);
  l.end = l.bodies + c.bodies * v;
  return l;
}

/// The receiver box as the open test reads it (already widened, criterion constants scaled).
template <class Real>
struct TestBox {
  Real cx, cy, cz, hx, hy, hz, alpha_a, theta2;
};

/// The walk's test (tree_walk) for a group whose box is b: does it open the cell of box q
/// (centre, half), centre of mass and mass m, b_max^2 bmax2 (< 0: not the bmax criterion)?
template <class Real>
__device__ __forceinline__ bool opens(const Vec4<Real>& q, const Vec4<Real>& m, Real bmax2, int dim,
                                      Real slack, const TestBox<Real>& b) {
  const Real h = q.w, s = Real(2) * h;
  if (boxes_overlap(q.x, q.y, q.z, h, h, dim == 2 ? Real(0) : h, b.cx, b.cy, b.cz, b.hx, b.hy, b.hz,
                    slack))
    return true;
  const Real d2 = distance2_point_box(m.x, m.y, m.z, b.cx, b.cy, b.cz, b.hx, b.hy, b.hz);
  if (b.alpha_a > Real(0)) return relative_must_open(m.w * s * s, b.alpha_a, d2, s * s);
  return bh_must_open(bmax2 >= Real(0) ? bmax2 : s * s, b.theta2, d2);
}

/// Each box's essential tree as a group walk with that box would traverse it (tree_walk
/// without the sums): one warp per box (taken from cursor), a stack of cells to test; a cell
/// the box opens is marked (every box that opens it writes the same 1) and its children are
/// pushed. A cell is in the union of the boxes' trees iff its parent is marked.
template <class Real>
__global__ void box_walk(const Vec4<Real>* __restrict__ box, const Vec4<Real>* __restrict__ com,
                         const Real* __restrict__ bmax, const CellLink* __restrict__ link, int dim,
                         const TestBox<Real>* __restrict__ boxes, unsigned n_boxes,
                         unsigned* cursor, int* stacks, unsigned* overflow, unsigned char* opened) {
  const unsigned lane = threadIdx.x & 31u;
  const unsigned warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  int* stack = stacks + std::size_t(warp) * kStackCapacity;
  const Real slack = box[0].w * (sizeof(Real) == 4 ? Real(0x1p-20) : Real(0x1p-40));
  for (;;) {
    unsigned k = 0;
    if (lane == 0) k = atomicAdd(cursor, 1u);
    k = __shfl_sync(kFull, k, 0);
    if (k >= n_boxes) return;
    const TestBox<Real> b = boxes[k];
    int size = 1;
    if (lane == 0) stack[0] = 0;
    __syncwarp();
    while (size > 0) {
      const int take = size < 32 ? size : 32;
      const int base = size - take;
      const int c = int(lane) < take ? stack[base + int(lane)] : -1;
      __syncwarp();  // every lane has read its cell before the pushes overwrite the slots
      size = base;
      int children = 0, first = 0;
      if (c >= 0) {
        const Real b2 = bmax != nullptr ? bmax[c] * bmax[c] : Real(-1);
        if (opens(box[c], com[c], b2, dim, slack, b)) {
          opened[c] = 1;
          const CellLink lk = link[c];
          if (lk.first_child >= 0) children = lk.child_count, first = lk.first_child;
        }
      }
      int pushed = 0;
      const int slot = size + warp_exclusive_sum(children, lane, pushed);
      if (size + pushed > int(kStackCapacity)) {  // cannot happen (tree_gpu.cuh); never write past
        if (lane == 0) atomicOr(overflow, 2u);    // the walk's stack overflow flag
        return;
      }
      for (int j = 0; j < children; ++j) stack[slot + j] = first + j;
      size += pushed;
      __syncwarp();
    }
  }
}

/// The children of every marked cell, and the root, are included (included[] zeroed before).
__global__ void include_children(const CellLink* __restrict__ link,
                                 const unsigned char* __restrict__ opened, unsigned cells,
                                 unsigned* included) {
  const unsigned c = blockIdx.x * 256u + threadIdx.x;
  if (c >= cells) return;
  if (c == 0) included[0] = 1;
  if (!opened[c]) return;
  const CellLink lk = link[c];
  for (int j = 0; j < (lk.first_child >= 0 ? lk.child_count : 0); ++j)
    included[lk.first_child + j] = 1;
}

/// bodies[c]: an included leaf's body count. counts (when set) gets the included cells and
/// their bodies added.
__global__ void included_bodies(const CellLink* __restrict__ link,
                                const unsigned* __restrict__ included, unsigned cells,
                                unsigned* bodies, unsigned* counts) {
  const unsigned c = blockIdx.x * 256u + threadIdx.x;
  const bool in = c < cells && included[c] != 0;
  unsigned count = 0;
  if (c < cells) {
    const CellLink lk = link[c];
    count = in && lk.first_child < 0 ? lk.end - lk.begin : 0u;
    bodies[c] = count;
  }
  if (counts != nullptr) {
    __shared__ unsigned block_bodies;
    if (threadIdx.x == 0) block_bodies = 0;
    const int block_cells = __syncthreads_count(in);  // also orders the zeroing
    if (count) atomicAdd(&block_bodies, count);
    __syncthreads();
    if (threadIdx.x == 0 && block_cells) atomicAdd(&counts[0], unsigned(block_cells));
    if (threadIdx.x == 0 && block_bodies) atomicAdd(&counts[1], block_bodies);
  }
}

template <class Real>
struct Packed {
  Vec4<Real>* box;
  Vec4<Real>* com;
  Vec4<Real>* quad;
  CellLink* link;
  Real* bmax;
  Vec4<Real>* bodies;
};

template <class Real>
__global__ void write_cells(TreeView<Real> t, unsigned cells,
                            const unsigned char* __restrict__ opened,
                            const unsigned* __restrict__ included,
                            const unsigned* __restrict__ index, const unsigned* __restrict__ offset,
                            Packed<Real> out) {
  const unsigned c = blockIdx.x * 256u + threadIdx.x;
  if (c >= cells || !included[c]) return;
  const unsigned i = index[c], at = offset[c];
  out.box[i] = t.box[c];
  out.com[i] = t.com[c];
  if (out.quad) {
    out.quad[2 * std::size_t(i)] = t.quad[2 * std::size_t(c)];
    out.quad[2 * std::size_t(i) + 1] = t.quad[2 * std::size_t(c) + 1];
  }
  if (out.bmax) out.bmax[i] = t.bmax[c];
  const CellLink lk = t.link[c];
  if (lk.first_child >= 0) {
    // Opened: its children (all included, contiguous); otherwise a leaf without bodies.
    out.link[i] = opened[c] ? CellLink{int(index[lk.first_child]), lk.child_count, at, at}
                            : CellLink{-1, 0, at, at};
    return;
  }
  out.link[i] = {-1, 0, at, at + (lk.end - lk.begin)};
  for (unsigned j = 0; j < lk.end - lk.begin; ++j) out.bodies[at + j] = t.sorted[lk.begin + j];
}

template <class Real>
TestBox<Real> test_box(const ReceiverBox<Real>& r, double theta, bool relative) {
  // Stricter than any group inside the box (the file's comment).
  const double ulps = sizeof(Real) == 4 ? 1e-6 : 1e-14;
  const double margin =
      1e-4 * std::max({double(r.hx), double(r.hy), double(r.hz)}) +
      ulps * (std::fabs(double(r.cx)) + std::fabs(double(r.cy)) + std::fabs(double(r.cz)));
  return {r.cx,
          r.cy,
          r.cz,
          Real(double(r.hx) + margin),
          Real(double(r.hy) + margin),
          Real(double(r.hz) + margin),
          relative ? Real(double(r.alpha_a) * (1 - 1e-4)) : Real(0),  // else by theta
          Real(theta * theta * (1 - 1e-4))};
}

}  // namespace

template <class Real>
std::size_t TreeForces<Real>::essential_bytes(EssentialCounts c) const {
  return layout<Real>(c, quadrupole_, mac_ == OpeningCriterion::Bmax).end;
}

template <class Real>
TreeSources<Real> TreeForces<Real>::essential_sources(const void* packed, EssentialCounts c) const {
  const Layout<Real> l = layout<Real>(c, quadrupole_, mac_ == OpeningCriterion::Bmax);
  const auto* base = static_cast<const unsigned char*>(packed);
  TreeSources<Real> s;
  s.box = reinterpret_cast<const Vec4<Real>*>(base + l.box);
  s.com = reinterpret_cast<const Vec4<Real>*>(base + l.com);
  s.quad = quadrupole_ ? reinterpret_cast<const Vec4<Real>*>(base + l.quad) : nullptr;
  s.link = reinterpret_cast<const CellLink*>(base + l.link);
  s.bmax = mac_ == OpeningCriterion::Bmax ? reinterpret_cast<const Real*>(base + l.bmax) : nullptr;
  s.sorted = reinterpret_cast<const Vec4<Real>*>(base + l.bodies);
  s.cells = c.cells;
  s.bodies = c.bodies;
  return s;
}

template <class Real>
void TreeForces<Real>::essential_flags(std::size_t k, cudaStream_t s, bool count) {
  const unsigned cells = cells_;
  NBODY_CUDA_CHECK(cudaMemsetAsync(ess_.open.data(), 0, cells, s));
  NBODY_CUDA_CHECK(cudaMemsetAsync(ess_.flags.data(), 0, cells * sizeof(unsigned), s));
  NBODY_CUDA_CHECK(cudaMemsetAsync(ess_.cursor.data(), 0, sizeof(unsigned), s));
  // The walk's stacks and grid (walk_warps warps, kStackCapacity each), 4 warps a block.
  const unsigned blocks = walk_warps<Real>(quadrupole_, dim_) / 4;
  box_walk<Real><<<blocks, 128, 0, s>>>(
      box_.data(), com_.data(), mac_ == OpeningCriterion::Bmax ? bmax_.data() : nullptr,
      link_.data(), dim_, reinterpret_cast<const TestBox<Real>*>(ess_.test.data()) + ess_.first[k],
      ess_.first[k + 1] - ess_.first[k], ess_.cursor.data(), stacks_.data(), counter_.data() + 1,
      ess_.open.data());
  NBODY_CUDA_CHECK_LAUNCH("essential box_walk");
  include_children<<<gpu::blocks_for(cells, 256), 256, 0, s>>>(link_.data(), ess_.open.data(),
                                                               cells, ess_.flags.data());
  NBODY_CUDA_CHECK_LAUNCH("essential include_children");
  included_bodies<<<gpu::blocks_for(cells, 256), 256, 0, s>>>(
      link_.data(), ess_.flags.data(), cells, ess_.bodies.data(),
      count ? ess_.counts.data() + 2 * k : nullptr);
  NBODY_CUDA_CHECK_LAUNCH("essential included_bodies");
  ess_.flags_for = k;
}

template <class Real>
std::vector<EssentialCounts> TreeForces<Real>::count_essential(
    const std::vector<ReceiverBox<Real>>& boxes, const WalkParams& p, cudaStream_t s) {
  std::vector<std::vector<ReceiverBox<Real>>> receivers;
  for (const auto& b : boxes) receivers.push_back({b});
  return count_essential(receivers, p, s);
}

template <class Real>
std::vector<EssentialCounts> TreeForces<Real>::count_essential(
    const std::vector<std::vector<ReceiverBox<Real>>>& boxes, const WalkParams& p, cudaStream_t s) {
  std::vector<EssentialCounts> counts(boxes.size());
  ess_.boxes = boxes.size();
  ess_.flags_for = ~std::size_t(0);
  ess_.theta = p.theta;
  const unsigned cells = n_ == 0 ? 0u : cells_;
  if (cells == 0 || boxes.empty()) return counts;
  // Every receiver's boxes, as the open test reads them, in one device array.
  static_assert(sizeof(TestBox<Real>) == 8 * sizeof(Real));
  std::vector<TestBox<Real>> test;
  ess_.first.assign(1, 0u);
  for (const auto& receiver : boxes) {
    for (const auto& b : receiver)
      test.push_back(test_box(b, p.theta, mac_ == OpeningCriterion::Relative));
    ess_.first.push_back(unsigned(test.size()));
  }
  ess_.test.reserve(std::max<std::size_t>(8 * test.size(), 8), "essential tree receiver boxes");
  NBODY_CUDA_CHECK(cudaMemcpyAsync(ess_.test.data(), test.data(),
                                   test.size() * sizeof(TestBox<Real>), cudaMemcpyHostToDevice, s));
  ess_.open.reserve(cells_, "essential tree opened flags");
  ess_.flags.reserve(cells_, "essential tree include flags");
  ess_.index.reserve(cells_, "essential tree cell indices");
  ess_.bodies.reserve(cells_, "essential tree body counts");
  ess_.offset.reserve(cells_, "essential tree body offsets");
  ess_.counts.reserve(2 * boxes.size(), "essential tree counts");
  ess_.cursor.reserve(1, "essential tree box cursor");
  if (2 * boxes.size() > ess_.host_capacity) {
    if (ess_.host) NBODY_CUDA_CHECK(cudaFreeHost(ess_.host));
    ess_.host = nullptr;
    NBODY_CUDA_CHECK(
        cudaMallocHost(reinterpret_cast<void**>(&ess_.host), 2 * boxes.size() * sizeof(unsigned)));
    ess_.host_capacity = 2 * boxes.size();
  }
  NBODY_CUDA_CHECK(cudaMemsetAsync(ess_.counts.data(), 0, 2 * boxes.size() * sizeof(unsigned), s));
  for (std::size_t k = 0; k < boxes.size(); ++k) essential_flags(k, s, true);
  NBODY_CUDA_CHECK(cudaMemcpyAsync(ess_.host, ess_.counts.data(),
                                   2 * boxes.size() * sizeof(unsigned), cudaMemcpyDeviceToHost, s));
  NBODY_CUDA_CHECK(cudaStreamSynchronize(s));
  for (std::size_t k = 0; k < boxes.size(); ++k)
    counts[k] = {ess_.host[2 * k], ess_.host[2 * k + 1]};
  return counts;
}

template <class Real>
void TreeForces<Real>::write_essential(std::size_t k, void* packed, cudaStream_t s) {
  if (k >= ess_.boxes) {
    throw Error("GPU tree: write_essential(" + std::to_string(k) + ") after count_essential of " +
                std::to_string(ess_.boxes) + " receivers");
  }
  const unsigned cells = n_ == 0 ? 0u : cells_;
  if (cells == 0) return;
  // One set of per-cell arrays serves all receivers: the flags again unless the count left
  // this receiver's (the last one counted: with 2 ranks, the only one).
  if (ess_.flags_for != k) essential_flags(k, s, false);
  std::size_t bytes = 0;
  const auto items = static_cast<long long>(cells);
  NBODY_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, ess_.flags.data(),
                                                 ess_.index.data(), items, s));
  scratch(bytes);
  NBODY_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp_.data(), bytes, ess_.flags.data(),
                                                 ess_.index.data(), items, s));
  bytes = 0;
  NBODY_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, ess_.bodies.data(),
                                                 ess_.offset.data(), items, s));
  scratch(bytes);
  NBODY_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp_.data(), bytes, ess_.bodies.data(),
                                                 ess_.offset.data(), items, s));
  const EssentialCounts c{ess_.host[2 * k], ess_.host[2 * k + 1]};
  const Layout<Real> l = layout<Real>(c, quadrupole_, mac_ == OpeningCriterion::Bmax);
  auto* base = static_cast<unsigned char*>(packed);
  const Packed<Real> out{
      reinterpret_cast<Vec4<Real>*>(base + l.box),
      reinterpret_cast<Vec4<Real>*>(base + l.com),
      quadrupole_ ? reinterpret_cast<Vec4<Real>*>(base + l.quad) : nullptr,
      reinterpret_cast<CellLink*>(base + l.link),
      mac_ == OpeningCriterion::Bmax ? reinterpret_cast<Real*>(base + l.bmax) : nullptr,
      reinterpret_cast<Vec4<Real>*>(base + l.bodies)};
  write_cells<Real><<<gpu::blocks_for(cells, 256), 256, 0, s>>>(
      view(n_), cells, ess_.open.data(), ess_.flags.data(), ess_.index.data(), ess_.offset.data(),
      out);
  NBODY_CUDA_CHECK_LAUNCH("essential write_cells");
}

#define NBODY_ESSENTIAL_INSTANTIATE(Real)                                                      \
  template std::size_t TreeForces<Real>::essential_bytes(EssentialCounts) const;               \
  template TreeSources<Real> TreeForces<Real>::essential_sources(const void*, EssentialCounts) \
      const;                                                                                   \
  template void TreeForces<Real>::essential_flags(std::size_t, cudaStream_t, bool);            \
  template std::vector<EssentialCounts> TreeForces<Real>::count_essential(                     \
      const std::vector<ReceiverBox<Real>>&, const WalkParams&, cudaStream_t);                 \
  template std::vector<EssentialCounts> TreeForces<Real>::count_essential(                     \
      const std::vector<std::vector<ReceiverBox<Real>>>&, const WalkParams&, cudaStream_t);    \
  template void TreeForces<Real>::write_essential(std::size_t, void*, cudaStream_t);
NBODY_ESSENTIAL_INSTANTIATE(float)
NBODY_ESSENTIAL_INSTANTIATE(double)
#undef NBODY_ESSENTIAL_INSTANTIATE

}  // namespace nbody::cuda_tree
