#pragma once
// The GPU tree's walk against other sources (issue 35: a rank owns only its bodies): the
// cells and bodies of a received locally essential tree as the sources of a walk whose
// targets stay the walking tree's own groups, and what a sender needs to know of a receiver
// to write that tree (tree_gpu_essential.cu). Plain C++ (the GPU tests include it).
#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "core/cuda/device_buffer.cuh"
#include "core/cuda/vec4.cuh"

namespace nbody::cuda_tree {

struct CellLink;

/// A tree's cells and bodies as the sources of a walk (a received essential tree); the walk's
/// targets (groups, bodies, order, a_old) stay the TreeView's own.
template <class Real>
struct TreeSources {
  const gpu::Vec4<Real>* box = nullptr;
  const gpu::Vec4<Real>* com = nullptr;
  const gpu::Vec4<Real>* quad = nullptr;
  const CellLink* link = nullptr;
  const gpu::Vec4<Real>* sorted = nullptr;
  const Real* bmax = nullptr;
  /// Per cell, in a decomposed run: 0, kAddingTopCell or kSilentTopCell (null: none).
  const unsigned char* shared = nullptr;
  unsigned cells = 0, bodies = 0;
};

/// A shared top cell (TreeForces::share_top_cells): its moments are the whole global cell's,
/// summed over the ranks that hold part of it; the lowest such rank's copy adds it to a walk
/// that accepts it (kAddingTopCell), the others' are dropped (kSilentTopCell).
constexpr unsigned char kAddingTopCell = 1;
constexpr unsigned char kSilentTopCell = 2;

/// Where a receiver's bodies lie (scaled units, the walk's): a box, and for the relative
/// criterion alpha * the smallest |a_old| / G of its bodies (0: open by theta, as the walk
/// without a_old).
template <class Real>
struct ReceiverBox {
  Real cx, cy, cz, hx, hy, hz;
  Real alpha_a = 0;
};

/// A piece of a rank's bodies as it tells the other ranks (describe_bodies): a cell of its
/// tree, the box of the cell's bodies, and their smallest and mean |a_old| / G (0 without).
struct BodyPiece {
  double lo[3], hi[3];
  double a_min, a_mean;
};

/// describe_bodies' device and pinned arrays; launched: the bodies a piece of the last
/// launch_describe (0: none pending).
struct PieceScratch {
  gpu::DeviceBuffer<unsigned> ranges, count;  // the pieces' (begin, end) in tree order; count
  gpu::DeviceBuffer<double> stats;            // 8 per piece
  gpu::PinnedBuffer<unsigned> ranges_host;
  gpu::PinnedBuffer<double> stats_host;
  unsigned launched = 0;
};

/// share_top_cells' device and pinned arrays (tree_gpu_shared_top.cu), kept from one
/// evaluation to the next: no allocation (a cudaFree waits for the whole device) and no host
/// wait but for the span and the candidates. span_launched: launch_top_span queued the span.
struct TopScratch {
  gpu::DeviceBuffer<unsigned long long> words;  // [0] the candidates' count, [1..2] the span
  gpu::DeviceBuffer<unsigned char> spans, records, updates;
  gpu::PinnedBuffer<unsigned long long> words_host;
  gpu::PinnedBuffer<unsigned char> spans_host, records_host, updates_host;
  cudaEvent_t span_ready = nullptr;      // after the span's copy to words_host
  cudaEvent_t updates_copied = nullptr;  // after the last updates' copy from updates_host
  bool span_launched = false;
  TopScratch() = default;
  TopScratch(const TopScratch&) = delete;
  TopScratch& operator=(const TopScratch&) = delete;
  ~TopScratch() {
    if (span_ready) cudaEventDestroy(span_ready);
    if (updates_copied) cudaEventDestroy(updates_copied);
  }
};

/// The size of one receiver's essential tree.
struct EssentialCounts {
  unsigned cells = 0, bodies = 0;
};

/// TreeForces' state for the essential trees (tree_gpu_essential.cu): the last count's boxes and
/// theta; per cell the opened and include flags, compacted indices, leaves' body counts
/// and offsets; per receiver the counts (device, and pinned host).
template <class Real>
struct EssentialScratch {
  std::size_t boxes = 0;         // receivers of the last count
  std::vector<unsigned> first;   // receiver k's box hierarchy: test[first[k], first[k + 1])
  std::vector<unsigned> leaves;  // and its leaves (a power of 2)
  gpu::DeviceBuffer<Real> test;  // every receiver's boxes (8 Reals each)
  double theta = 0;
  // The batch of 32 receivers whose masks open and flags hold (bit k: the batch's receiver k
  // opens the cell, the cell is included for it).
  std::size_t flags_for = ~std::size_t(0);
  gpu::DeviceBuffer<unsigned> open, flags, index, offset, counts;
  unsigned* host = nullptr;
  std::size_t host_capacity = 0;
  EssentialScratch() = default;
  EssentialScratch(const EssentialScratch&) = delete;
  EssentialScratch& operator=(const EssentialScratch&) = delete;
  ~EssentialScratch() {
    if (host) cudaFreeHost(host);
  }
};

}  // namespace nbody::cuda_tree
