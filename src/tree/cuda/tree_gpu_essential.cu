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
// The essential tree: the root, and every child of an included cell that some box opens;
// so a cell is included iff every ancestor is opened for some box (a group inside a box
// opens only cells the box opens, so it meets only included cells). Found top down, one
// launch per level of the build (include_level): only the included inner cells are tested,
// each against the receiver's boxes through a hierarchy of their unions (BoxTree), which
// prunes the boxes far from the cell. Then two cub scans (compacted cell indices in cell
// order, which keep a cell's children contiguous; the body offsets of the included leaves)
// and a write kernel. An included leaf ships its bodies; an included inner cell that is
// not opened becomes a leaf without bodies (every receiver group accepts it whole); an
// opened one keeps its children. Cells keep their box, moments and b_max unchanged, so the
// root's half (the walk's slack) is the sender root's.
//
// Measured (2 H100s, 64M Plummer, relative criterion, ~4000 boxes a receiver): every cell
// tested against every box, then each cell's ancestors walked, took 5-7 ms a step with 64
// boxes; a warp per box walking this tree took 35-145 ms (neighbouring boxes traverse the
// same cells again).
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
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
#include "tree/cuda/tree_gpu_essential_boxes.cuh"
#include "tree/cuda/tree_gpu_essential_layout.cuh"

namespace nbody::cuda_tree {

namespace {

/// The receivers of one batch (at most 32: a bit each in the cells' masks).
constexpr unsigned kBatch = 32;
template <class Real>
struct Batch {
  BoxTree<Real> tree[kBatch];
  unsigned count;
};

/// One level of the batch's essential trees, top down (the levels of the build, from the
/// root), every receiver of the batch in one pass: a cell is included for receiver k when
/// its parent was opened for k (the root for all); an included inner cell is opened for k
/// when some box of k opens it (a leaf ships its bodies either way and is not tested).
/// Writes opened[c] and included[] of its children as masks (bit k: receiver k of the
/// batch); counts (when set) gets each receiver's included cells and bodies added (2 k, 2 k
/// + 1). One pass for all receivers: the counts and the writes then need no second pass over
/// the levels (with one receiver at a time, 4 ranks tested every level 5 times a step).
template <class Real>
__global__ void include_level(const Vec4<Real>* __restrict__ box,
                              const Vec4<Real>* __restrict__ com, const Real* __restrict__ bmax,
                              const CellLink* __restrict__ link,
                              const unsigned char* __restrict__ shared,
                              const unsigned* __restrict__ level_start, int level, int dim,
                              Batch<Real> batch, unsigned* opened, unsigned* included,
                              unsigned* counts) {
  __shared__ unsigned block_counts[2 * kBatch];
  for (unsigned j = threadIdx.x; j < 2 * kBatch; j += blockDim.x) block_counts[j] = 0;
  __syncthreads();
  const unsigned lb = level_start[level], le = level_start[level + 1];
  const unsigned all = batch.count == 32 ? ~0u : (1u << batch.count) - 1u;
  const Real slack = box[0].w * (sizeof(Real) == 4 ? Real(0x1p-20) : Real(0x1p-40));
  // This thread's counts (a receiver's cells, its bodies) and the receivers they touch.
  unsigned mine[2 * kBatch], seen = 0;
  for (unsigned c = lb + blockIdx.x * blockDim.x + threadIdx.x; c < le;
       c += gridDim.x * blockDim.x) {
    const unsigned in = c == 0 ? all : included[c];
    if (c == 0) included[0] = all;
    const CellLink lk = link[c];
    const bool leaf = lk.first_child < 0;
    unsigned open = 0;
    if (in != 0 && !leaf) {
      // A shared top cell is always sent opened: a receiver's copy of it must never meet a
      // pruned one that it would open (its own bodies there would then count twice).
      if (shared != nullptr && shared[c] != 0) {
        open = in;
      } else {
        const Real b2 = bmax != nullptr ? bmax[c] * bmax[c] : Real(-1);
        const Vec4<Real> q = box[c], m = com[c];
        for (unsigned rest = in; rest != 0; rest &= rest - 1) {
          const int k = __ffs(int(rest)) - 1;
          if (any_opens(q, m, b2, dim, slack, batch.tree[k])) open |= 1u << k;
        }
      }
    }
    opened[c] = open;
    for (int j = 0; j < (leaf ? 0 : lk.child_count); ++j) included[lk.first_child + j] = open;
    if (counts == nullptr) continue;
    const unsigned count = leaf ? lk.end - lk.begin : 0u;
    for (unsigned rest = in; rest != 0; rest &= rest - 1) {
      const int k = __ffs(int(rest)) - 1;
      if ((seen >> k & 1u) == 0) mine[2 * k] = mine[2 * k + 1] = 0;
      seen |= 1u << k;
      mine[2 * k] += 1;
      mine[2 * k + 1] += count;
    }
  }
  if (counts == nullptr) return;
  for (unsigned rest = seen; rest != 0; rest &= rest - 1) {
    const int k = __ffs(int(rest)) - 1;
    atomicAdd(&block_counts[2 * k], mine[2 * k]);
    if (mine[2 * k + 1]) atomicAdd(&block_counts[2 * k + 1], mine[2 * k + 1]);
  }
  __syncthreads();
  for (unsigned j = threadIdx.x; j < 2 * batch.count; j += blockDim.x)
    if (block_counts[j]) atomicAdd(&counts[j], block_counts[j]);
}

/// Receiver `bit`'s view of the masks for the scans: is cell c included (Included), and the
/// bodies an included leaf ships (Bodies).
struct Included {
  const unsigned* mask;
  unsigned bit;
  __host__ __device__ unsigned operator()(unsigned c) const { return (mask[c] >> bit) & 1u; }
};
struct LeafBodies {
  const unsigned* mask;
  const CellLink* link;
  unsigned bit;
  __host__ __device__ unsigned operator()(unsigned c) const {
    if (((mask[c] >> bit) & 1u) == 0) return 0;
    const CellLink lk = link[c];
    return lk.first_child < 0 ? lk.end - lk.begin : 0u;
  }
};

template <class Real>
__global__ void write_cells(TreeView<Real> t, unsigned cells, const unsigned* __restrict__ opened,
                            const unsigned* __restrict__ included, unsigned bit,
                            const unsigned* __restrict__ index, const unsigned* __restrict__ offset,
                            Packed<Real> out) {
  const unsigned c = blockIdx.x * 256u + threadIdx.x;
  if (c >= cells || ((included[c] >> bit) & 1u) == 0) return;
  const unsigned i = index[c], at = offset[c];
  pack_cell(t.box, t.com, t.quad, t.bmax, t.shared, c, out, i);
  const CellLink lk = t.link[c];
  if (lk.first_child >= 0) {
    // Opened: its children (all included, contiguous); otherwise a leaf without bodies.
    out.link[i] = ((opened[c] >> bit) & 1u) != 0
                      ? CellLink{int(index[lk.first_child]), lk.child_count, at, at}
                      : CellLink{-1, 0, at, at};
    return;
  }
  out.link[i] = {-1, 0, at, at + (lk.end - lk.begin)};
  for (unsigned j = 0; j < lk.end - lk.begin; ++j) out.bodies[at + j] = t.sorted[lk.begin + j];
}

}  // namespace

template <class Real>
std::size_t TreeForces<Real>::essential_bytes(EssentialCounts c) const {
  return layout<Real>(c, quadrupole_, mac_ == OpeningCriterion::Bmax, decomposed_).end;
}

template <class Real>
TreeSources<Real> TreeForces<Real>::essential_sources(const void* packed, EssentialCounts c) const {
  const Layout<Real> l = layout<Real>(c, quadrupole_, mac_ == OpeningCriterion::Bmax, decomposed_);
  const auto* base = static_cast<const unsigned char*>(packed);
  TreeSources<Real> s;
  s.box = reinterpret_cast<const Vec4<Real>*>(base + l.box);
  s.com = reinterpret_cast<const Vec4<Real>*>(base + l.com);
  s.quad = quadrupole_ ? reinterpret_cast<const Vec4<Real>*>(base + l.quad) : nullptr;
  s.link = reinterpret_cast<const CellLink*>(base + l.link);
  s.bmax = mac_ == OpeningCriterion::Bmax ? reinterpret_cast<const Real*>(base + l.bmax) : nullptr;
  s.shared = decomposed_ ? base + l.shared : nullptr;
  s.sorted = reinterpret_cast<const Vec4<Real>*>(base + l.bodies);
  s.cells = c.cells;
  s.bodies = c.bodies;
  return s;
}

template <class Real>
void TreeForces<Real>::essential_flags(std::size_t batch, cudaStream_t s, bool count) {
  Batch<Real> b{};
  const std::size_t first = batch * kBatch;
  b.count = unsigned(std::min<std::size_t>(kBatch, ess_.boxes - first));
  for (unsigned j = 0; j < b.count; ++j) {
    b.tree[j] = {reinterpret_cast<const TestBox<Real>*>(ess_.test.data()) + ess_.first[first + j],
                 ess_.leaves[first + j]};
  }
  constexpr int kLevelBlocks = 1024;  // a fixed grid striding over each level, as the build's
  for (int level = 0; level <= key_bits(dim_); ++level) {
    include_level<Real><<<kLevelBlocks, 256, 0, s>>>(
        box_.data(), com_.data(), mac_ == OpeningCriterion::Bmax ? bmax_.data() : nullptr,
        link_.data(), top_shared_ ? shared_.data() : nullptr, levels_.data(), level, dim_, b,
        ess_.open.data(), ess_.flags.data(), count ? ess_.counts.data() + 2 * first : nullptr);
    NBODY_CUDA_CHECK_LAUNCH("essential include_level");
  }
  ess_.flags_for = batch;
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
  // Every receiver's boxes, as the open test reads them, in one device array: each
  // receiver's hierarchy (BoxTree) over its boxes in the order given.
  std::vector<TestBox<Real>> test;
  ess_.first.assign(1, 0u);
  ess_.leaves.clear();
  for (const auto& receiver : boxes) {
    const std::vector<TestBox<Real>> tree =
        box_hierarchy(receiver, p.theta, mac_ == OpeningCriterion::Relative);
    test.insert(test.end(), tree.begin(), tree.end());
    ess_.first.push_back(unsigned(test.size()));
    ess_.leaves.push_back(unsigned(tree.size() + 1) / 2);
  }
  ess_.test.reserve(std::max<std::size_t>(8 * test.size(), 8), "essential tree receiver boxes");
  NBODY_CUDA_CHECK(cudaMemcpyAsync(ess_.test.data(), test.data(),
                                   test.size() * sizeof(TestBox<Real>), cudaMemcpyHostToDevice, s));
  ess_.open.reserve(cells_, "essential tree opened masks");
  ess_.flags.reserve(cells_, "essential tree include masks");
  ess_.index.reserve(cells_, "essential tree cell indices");
  ess_.offset.reserve(cells_, "essential tree body offsets");
  ess_.counts.reserve(2 * boxes.size(), "essential tree counts");
  if (2 * boxes.size() > ess_.host_capacity) {
    if (ess_.host) NBODY_CUDA_CHECK(cudaFreeHost(ess_.host));
    ess_.host = nullptr;
    NBODY_CUDA_CHECK(
        cudaMallocHost(reinterpret_cast<void**>(&ess_.host), 2 * boxes.size() * sizeof(unsigned)));
    ess_.host_capacity = 2 * boxes.size();
  }
  NBODY_CUDA_CHECK(cudaMemsetAsync(ess_.counts.data(), 0, 2 * boxes.size() * sizeof(unsigned), s));
  for (std::size_t batch = 0; batch * kBatch < boxes.size(); ++batch)
    essential_flags(batch, s, true);
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
  // One set of per-cell masks serves a batch of 32 receivers: the masks again unless the
  // count left this receiver's batch (the last one counted: below 33 ranks, the only one).
  if (ess_.flags_for != k / kBatch) essential_flags(k / kBatch, s, false);
  const unsigned bit = unsigned(k % kBatch);
  const auto cell = thrust::make_counting_iterator(0u);
  const auto included = thrust::make_transform_iterator(cell, Included{ess_.flags.data(), bit});
  const auto bodies =
      thrust::make_transform_iterator(cell, LeafBodies{ess_.flags.data(), link_.data(), bit});
  std::size_t bytes = 0;
  const auto items = static_cast<long long>(cells);
  NBODY_CUDA_CHECK(
      cub::DeviceScan::ExclusiveSum(nullptr, bytes, included, ess_.index.data(), items, s));
  scratch(bytes);
  NBODY_CUDA_CHECK(
      cub::DeviceScan::ExclusiveSum(temp_.data(), bytes, included, ess_.index.data(), items, s));
  bytes = 0;
  NBODY_CUDA_CHECK(
      cub::DeviceScan::ExclusiveSum(nullptr, bytes, bodies, ess_.offset.data(), items, s));
  scratch(bytes);
  NBODY_CUDA_CHECK(
      cub::DeviceScan::ExclusiveSum(temp_.data(), bytes, bodies, ess_.offset.data(), items, s));
  const EssentialCounts c{ess_.host[2 * k], ess_.host[2 * k + 1]};
  const Packed<Real> out =
      packed_at<Real>(packed, c, quadrupole_, mac_ == OpeningCriterion::Bmax, decomposed_);
  write_cells<Real><<<gpu::blocks_for(cells, 256), 256, 0, s>>>(
      view(n_), cells, ess_.open.data(), ess_.flags.data(), bit, ess_.index.data(),
      ess_.offset.data(), out);
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
