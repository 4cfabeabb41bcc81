#pragma once
// What the GPU tree's kernels see (tree_gpu.cuh): the tree's limits, the cells' links and
// walk groups, how a distributed run deals bodies out, and TreeView, the device pointers
// and sizes every kernel takes by value. Plain C++ but for the device helpers (the GPU tests
// include it).
#include <cuda_runtime.h>

#include <cstdint>

#include "core/cuda/device_buffer.cuh"
#include "core/cuda/vec4.cuh"
#include "tree/cuda/tree_gpu_sources.cuh"

namespace nbody::cuda_tree {

using gpu::DeviceBuffer;
using gpu::Vec4;

/// Bodies per leaf at most (except at maximum depth), and per walk group: the CPU tree's
/// (src/tree/tree_solver.cpp), so both walk the same kind of tree.
inline constexpr unsigned kLeafSize = 8;
inline constexpr unsigned kMaxGroup = 128;
/// Key bits per axis (maximum depth): as the CPU tree.
__host__ __device__ constexpr int key_bits(int dim) {
  return dim == 2 ? 31 : 21;
}
/// A warp's stack of cells still to test. Popping up to 32 from the top and pushing the
/// children of the opened ones keeps the stack sorted by depth, with the entries of each
/// depth from one push (<= 32 x 2^dim): at most 21 x 256 in 3D and 31 x 128 in 2D.
inline constexpr unsigned kStackCapacity = 6144;

struct Bounds {
  double lo[3], hi[3];
};

#ifdef __CUDACC__
/// Root cube from the bounds (as the CPU tree: centre of the box, half the largest extent
/// times 1 + 1e-9; all bodies at one point get a cube of positive size). Both builds.
__device__ inline void root_cube(const Bounds& b, int dim, double& cx, double& cy, double& cz,
                                 double& half) {
  const double lz = dim == 2 ? 0.0 : b.lo[2], hz = dim == 2 ? 0.0 : b.hi[2];
  cx = 0.5 * (b.lo[0] + b.hi[0]);
  cy = 0.5 * (b.lo[1] + b.hi[1]);
  cz = 0.5 * (lz + hz);
  const double extent = fmax(fmax(b.hi[0] - b.lo[0], b.hi[1] - b.lo[1]), hz - lz);
  const double big =
      fmax(fmax(fmax(fabs(b.lo[0]), fabs(b.hi[0])), fmax(fabs(b.lo[1]), fabs(b.hi[1]))),
           fmax(fabs(lz), fabs(hz)));
  half = extent > 0 ? 0.5 * extent * (1 + 1e-9) : (big > 0 ? big : 1.0);
  if (!(half > 0) || !isfinite(half)) half = 1.0;  // NaN or infinite input: keys are then arbitrary
}
#endif

/// A cell: body range [begin, end) in tree order; first_child -1 for a leaf, children
/// contiguous from first_child in key-digit order.
struct CellLink {
  int first_child, child_count;
  unsigned begin, end;
};

struct Group {
  unsigned begin, end;
};

/// Bodies are dealt to the processes of a distributed run in chunks of this many (in tree
/// order), like cards: chunk c belongs to process c mod P. A process walks every group
/// with a body in its chunks (a group across a chunk border is walked by both owners, and
/// each writes only its own bodies). Not by group index: the cells, and so the groups,
/// are numbered by atomic slots, differently on every process; a body's tree position is
/// the same everywhere (the sort is deterministic). The size: about (mean group size) /
/// chunk of the groups straddle a border and are walked twice; with 1024-body chunks that
/// was ~10 % more walk on 2 and 4 H200s at N = 2^26 (docs/distributed.md). 16384 makes it
/// well under 1 % and still deals each process thousands of chunks at large N.
constexpr unsigned kShareChunkBodies = 16384;

__host__ __device__ inline unsigned share_owner(unsigned tree_position, unsigned parts) {
  return (tree_position / kShareChunkBodies) % parts;
}

/// What the kernels see (device pointers and sizes), passed by value.
template <class Real>
struct TreeView {
  int dim = 3;
  unsigned n = 0;
  unsigned capacity = 0;               // cells the arrays hold
  const Vec4<Real>* bodies = nullptr;  // particle order (input)
  Vec4<Real>* sorted = nullptr;        // tree order
  unsigned* order = nullptr;           // tree position -> particle index
  unsigned long long* keys = nullptr;  // sorted
  Bounds* bounds = nullptr;
  unsigned* counter = nullptr;  // [0] cells used, [1] overflow flag, [2] groups, [3] group cursor,
                                // [4] abandoned groups, [5] their bodies' cursor
  unsigned* level_start = nullptr;  // key_bits + 2 entries
  unsigned* level_done = nullptr;   // key_bits + 1 tickets
  Vec4<Real>* box = nullptr;        // cx, cy, cz, half
  Vec4<Real>* com = nullptr;        // com x, y, z, mass
  Vec4<Real>* quad = nullptr;       // 2 per cell: (xx, yy, zz, xy), (xz, yz, tr, 0)
  CellLink* link = nullptr;
  unsigned* group_count = nullptr;   // per cell
  unsigned* group_offset = nullptr;  // per cell (exclusive scan)
  Group* groups = nullptr;
  unsigned* expensive = nullptr;  // groups the walk's first pass abandoned
  unsigned long long* interactions = nullptr;
  // The active walk (TreeForces::launch_active): the tree positions of the active bodies,
  // ascending, and each walk group's range in that list.
  const unsigned* active_pos = nullptr;
  const Group* active_groups = nullptr;
  // Several processes: the walk takes the groups with a body in this process's chunks and
  // writes only those bodies (share_owner). Dealt out like cards, every process gets core
  // and halo bodies alike (a split into contiguous body ranges left one process with the
  // dense core).
  unsigned share_part = 0;
  unsigned share_parts = 1;
  // Opening criteria other than the geometric one (the walk's Mac variant): bmax, each
  // cell's b_max (filled by the moments when set); relative, every body's |a| / G of the
  // last evaluation in the scaled units of the walk's output, body order, and alpha.
  Real* bmax = nullptr;
  const Real* a_old = nullptr;
  Real alpha = 0;
  // The walk in input order (TreeForces::set_input_order_walk): the active walk over
  // consecutive runs of input-order bodies, each tested with the box of its own bodies
  // (not of t.groups[g], which is then the same list as active_groups).
  bool own_box = false;
  // TreeForces::walk_sources: foreign.box set, the sources are foreign's (targets: the tree's);
  // accumulate: out[i] +=; cost: each walked body's list entries added to cost[i] (body order).
  TreeSources<Real> foreign{};
  // A decomposed run's shared top cells (share_top_cells), per cell; null otherwise.
  const unsigned char* shared = nullptr;
  bool accumulate = false;
  float* cost = nullptr;
};

struct InsertTree;  // the insertion build's pointer tree (tree_gpu_insertion.cuh)

/// The end of a level's kernel (the Morton build's build_level, the insertion build's
/// layout_level), called by every thread: the last block to finish records where the next
/// level's cells end (what the level appended, capped at the capacity) and resets the
/// level's ticket for the next build. No block waits on another.
#if defined(__CUDACC__)  // the GPU tests include this header from plain C++
template <class Real>
__device__ inline void finish_level(const TreeView<Real>& t, int level) {
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    const unsigned ticket = atomicAdd(&t.level_done[level], 1u);
    if (ticket == gridDim.x - 1) {
      const unsigned used = atomicAdd(&t.counter[0], 0u);
      t.level_start[level + 2] = used < t.capacity ? used : t.capacity;
      t.level_done[level] = 0;
    }
  }
}
#endif

}  // namespace nbody::cuda_tree
