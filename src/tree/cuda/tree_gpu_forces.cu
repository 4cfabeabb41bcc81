// TreeForces: the GPU tree's buffers and the order of its stages (tree_gpu.cuh), each
// between two CUDA events so that --timings can show milliseconds per stage.
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include <algorithm>
#include <cfloat>
#include <string>
#include <type_traits>
#include <utility>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/launch.cuh"
#include "core/cuda/merge_boxes.cuh"
#include "nbody/error.hpp"
#include "tree/cuda/tree_gpu.cuh"

namespace nbody::cuda_tree {

namespace {

template <class Real>
struct ToBounds {
  int dim;
  __host__ __device__ Bounds operator()(const Vec4<Real>& b) const {
    const double z = dim == 2 ? 0.0 : double(b.z);
    return {{double(b.x), double(b.y), z}, {double(b.x), double(b.y), z}};
  }
};

using MergeBounds = gpu::MergeBoxes<Bounds>;

constexpr const char* kStageNames[] = {"bbox", "sort", "build", "summarise", "force"};
// The insertion build's: insertion (with its keys) then the layout, the seeds' "sort".
constexpr const char* kInsertionStageNames[] = {"bbox", "build", "sort", "summarise", "force"};

/// Cells the arrays start with for n bodies; the build grows them by half when a system
/// needs more (until_cells_fit). 3n/8 was too few for a Plummer sphere of 64M bodies: grown to
/// 0.56 n, it held more than n/2 does (2 H200s, 2026-11-30).
std::size_t initial_cells(std::size_t n) {
  return n / 2 + 64;
}

/// Whether the forces take the packed bodies' place (out()).
bool forces_over_bodies(TreeBuild build, bool input_walk) {
  return build == TreeBuild::Morton && !input_walk;
}

}  // namespace

template <class Real>
TreeForces<Real>::TreeForces(int dim, double theta, bool quadrupole, OpeningCriterion mac,
                             double alpha, TreeBuild build)
    : dim_(dim), theta_(theta), quadrupole_(quadrupole), mac_(mac), alpha_(alpha), build_(build) {
  for (auto& e : events_) NBODY_CUDA_CHECK(cudaEventCreate(&e));
  counter_.reserve(6, "tree counters");
  levels_.reserve(34, "tree levels");
  level_done_.reserve(33, "tree level tickets");
  NBODY_CUDA_CHECK(cudaMemset(level_done_.data(), 0, 33 * sizeof(unsigned)));
  NBODY_CUDA_CHECK(cudaMemset(counter_.data(), 0, 6 * sizeof(unsigned)));
  // cudaMemset may return before it ran, on the legacy stream, which the launches' streams
  // (non-blocking) do not wait for: the first build must find these zeros.
  NBODY_CUDA_CHECK(cudaDeviceSynchronize());
  interactions_.reserve(1, "tree interaction count");
  bounds_.reserve(2, "bounding box");  // the bodies', the root cube's (set_root_box)
  NBODY_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&host_counters_),
                                  4 * sizeof(unsigned) + sizeof(unsigned long long)));
  std::fill_n(host_counters_, 6, 0u);
  const std::size_t warps = walk_warps<Real>(quadrupole_, dim_);
  stacks_.reserve(warps * kStackCapacity, "tree walk stacks");
}

template <class Real>
TreeForces<Real>::~TreeForces() {
  for (auto& e : events_) {
    if (e) cudaEventDestroy(e);
  }
  cudaFreeHost(host_counters_);
}

template <class Real>
std::string TreeForces<Real>::name() const {
  return std::string("tree-cuda-") + (dim_ == 2 ? "quadtree" : "octree");
}

template <class Real>
void TreeForces<Real>::check_size(std::size_t n) const {
  if (n >= (std::size_t(1) << 31)) {
    throw Error("GPU tree: N = " + std::to_string(n) + " bodies is too many (at most 2^31 - 1)");
  }
}

template <class Real>
void TreeForces<Real>::reserve(std::size_t n) {
  const bool over = forces_over_bodies(build_, input_walk_);
  if (n <= body_capacity_) {  // an input-order walk set after a build needs out_ now
    if (!over) out_.reserve(body_capacity_, "tree accelerations");
    return;
  }
  // Say up front what n bodies need, rather than failing on whichever buffer comes last.
  const bool insertion = build_ == TreeBuild::Insertion;
  const std::size_t per_body =
      (over ? 2 : 3) * sizeof(Vec4<Real>) +
      (insertion ? 2 : 1) * (sizeof(unsigned) + sizeof(unsigned long long)) +
      (mac_ == OpeningCriterion::Relative ? sizeof(Real) : 0);
  const std::size_t per_cell = 2 * sizeof(Vec4<Real>) + (quadrupole_ ? 2 * sizeof(Vec4<Real>) : 0) +
                               sizeof(CellLink) + 2 * sizeof(unsigned) + sizeof(Group) +
                               (mac_ == OpeningCriterion::Bmax ? sizeof(Real) : 0);
  const std::size_t needed = n * per_body + initial_cells(n) * per_cell;
  // What the tree holds now is given back as it grows (each buffer is freed before its
  // larger one is taken): on 2 H200s at 2^30 bodies, a rank's tree of 2^29 bodies, grown
  // after the first migration, was refused 53 GB with 40 GB free while it held 48 GB.
  const std::size_t held = body_capacity_ * per_body + cell_capacity_ * per_cell;
  std::size_t free = 0, total = 0;
  NBODY_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  if (needed > free + held) {
    throw Error("GPU tree: N = " + std::to_string(n) + " bodies need about " +
                gpu::bytes_text(needed) + " of GPU memory, the device has " +
                gpu::bytes_text(free) + " free of " + gpu::bytes_text(total) +
                (held > 0 ? " and the tree holds " + gpu::bytes_text(held) : std::string()));
  }
  bodies_.reserve(n, over ? "tree bodies, then accelerations" : "tree bodies");
  if (!over) out_.reserve(n, "tree accelerations");
  sorted_.reserve(n, "tree-ordered bodies");
  order_.reserve(n, "tree order");
  keys_.reserve(n, "Morton keys");
  if (insertion) {
    order_tmp_.reserve(n, "tree order (sort input)");
    keys_tmp_.reserve(n, "Morton keys (sort input)");
  }
  if (mac_ == OpeningCriterion::Relative) a_old_.reserve(n, "tree old accelerations");
  body_capacity_ = n;
  reserve_cells(initial_cells(n));
}

/// The Morton build's bodies are read last by the gather into tree order, before the walk
/// writes the forces: these can then take their place (16 bytes a body). The insertion build
/// and the input-order walk read them later, so they keep out_. Every launch packs afresh.
template <class Real>
Vec4<Real>* TreeForces<Real>::out() const {
  return forces_over_bodies(build_, input_walk_) ? bodies_.data() : out_.data();
}

template <class Real>
void TreeForces<Real>::reserve_cells(std::size_t cells) {
  if (cells <= cell_capacity_) return;
  if (cells > std::size_t(UINT32_MAX) / 2) {
    throw Error("GPU tree: " + std::to_string(cells) + " cells do not fit 32-bit cell indices");
  }
  if (build_ == TreeBuild::Insertion) ins_cell_node_.reserve(cells, "tree cell nodes");
  box_.reserve(cells, "tree cell boxes");
  com_.reserve(cells, "tree cell moments");
  if (quadrupole_) quad_.reserve(2 * cells, "tree quadrupoles");
  if (mac_ == OpeningCriterion::Bmax) bmax_.reserve(cells, "tree cell b_max");
  link_.reserve(cells, "tree cell links");
  group_count_.reserve(cells, "tree group counts");
  group_offset_.reserve(cells, "tree group offsets");
  groups_.reserve(cells, "tree walk groups");  // at most one group per cell (and per body)
  expensive_.reserve(cells, "tree abandoned groups");
  cell_capacity_ = cells;
}

template <class Real>
TreeView<Real> TreeForces<Real>::view(std::size_t n) const {
  TreeView<Real> v;
  v.dim = dim_;
  v.n = unsigned(n);
  v.capacity = unsigned(cell_capacity_);
  v.bodies = bodies_.data();
  v.sorted = sorted_.data();
  v.order = order_.data();
  v.keys = keys_.data();
  v.bounds = bounds_.data() + (root_box_set_ ? 1 : 0);
  v.counter = counter_.data();
  v.level_start = levels_.data();
  v.level_done = level_done_.data();
  v.box = box_.data();
  v.com = com_.data();
  v.quad = quad_.data();
  v.link = link_.data();
  v.group_count = group_count_.data();
  v.group_offset = group_offset_.data();
  v.groups = groups_.data();
  v.expensive = expensive_.data();
  v.interactions = interactions_.data();
  v.share_part = unsigned(part_);
  v.share_parts = unsigned(parts_);
  v.bmax = mac_ == OpeningCriterion::Bmax ? bmax_.data() : nullptr;  // the moments fill it
  v.shared = top_shared_ ? shared_.data() : nullptr;
  return v;
}

template <class Real>
Real* TreeForces<Real>::old_accelerations(std::size_t n) {
  if (!opens_by_old_accelerations(mac_, theta_)) return nullptr;
  reserve(n);
  a_old_given_ = true;
  return a_old_.data();
}

template <class Real>
WalkParams TreeForces<Real>::walk_params(TreeView<Real>& t, bool potential) {
  WalkParams p{theta_, quadrupole_, potential};
  if (a_old_use_) {
    t.a_old = a_old_.data();
    t.alpha = Real(alpha_);
  }
  return p;
}

template <class Real>
void TreeForces<Real>::throw_if_failed() const {
  if (host_counters_[1] & 2u) {
    throw Error("GPU tree: a walk stack overflowed (a bug: please report the input)");
  }
}

template <class Real>
void TreeForces<Real>::scratch(std::size_t bytes) {
  if (bytes > temp_bytes_) {
    temp_.reserve(bytes, "cub scratch");
    temp_bytes_ = bytes;
  }
}

template <class Real>
unsigned TreeForces<Real>::build(std::size_t n, cudaStream_t stream) {
  const auto items = static_cast<long long>(n);
  top_shared_ = false;  // a new tree: share_top_cells marks its cells again
  NBODY_CUDA_CHECK(cudaEventRecord(events_[0], stream));

  // bbox
  const auto input = thrust::make_transform_iterator(bodies_.data(), ToBounds<Real>{dim_});
  const Bounds empty{{DBL_MAX, DBL_MAX, DBL_MAX}, {-DBL_MAX, -DBL_MAX, -DBL_MAX}};
  std::size_t bytes = 0;
  NBODY_CUDA_CHECK(cub::DeviceReduce::Reduce(nullptr, bytes, input, bounds_.data(), items,
                                             MergeBounds{}, empty, stream));
  scratch(bytes);
  NBODY_CUDA_CHECK(cub::DeviceReduce::Reduce(temp_.data(), bytes, input, bounds_.data(), items,
                                             MergeBounds{}, empty, stream));
  if (root_box_set_) {
    NBODY_CUDA_CHECK(cudaMemcpyAsync(bounds_.data() + 1, &root_box_, sizeof(Bounds),
                                     cudaMemcpyHostToDevice, stream));
  }
  NBODY_CUDA_CHECK(cudaEventRecord(events_[1], stream));

  unsigned cells = 0;
  if (build_ == TreeBuild::Insertion) {
    cells = build_insertion(n, stream);
  } else {
    cells = build_morton(n, stream);
  }
  NBODY_CUDA_CHECK(cudaEventRecord(events_[3], stream));
  cells_ = cells;
  built_n_ = build_ == TreeBuild::Morton ? n : 0;  // what a refit may start from

  // summarise: moments bottom-up, then the walk groups
  launch_moments(view(n), quadrupole_, stream);
  launch_group_count(view(n), cells, stream);
  bytes = 0;
  NBODY_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, group_count_.data(),
                                                 group_offset_.data(),
                                                 static_cast<long long>(cells), stream));
  scratch(bytes);
  NBODY_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp_.data(), bytes, group_count_.data(),
                                                 group_offset_.data(),
                                                 static_cast<long long>(cells), stream));
  launch_group_write(view(n), cells, stream);
  NBODY_CUDA_CHECK(cudaEventRecord(events_[4], stream));
  return cells;
}

template <class Real>
void TreeForces<Real>::copy_counters(cudaStream_t stream) {
  NBODY_CUDA_CHECK(cudaEventRecord(events_[5], stream));
  NBODY_CUDA_CHECK(cudaMemcpyAsync(host_counters_, counter_.data(), 4 * sizeof(unsigned),
                                   cudaMemcpyDeviceToHost, stream));
  NBODY_CUDA_CHECK(cudaMemcpyAsync(host_interactions(), interactions_.data(),
                                   sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream));
}

/// Later builds place the root cube as for bodies of this box (null: their own), so that every
/// rank given the same box builds cells of one global tree.
template <class Real>
void TreeForces<Real>::set_root_box(const Bounds* box) {
  root_box_set_ = box != nullptr;
  if (box != nullptr) root_box_ = *box;
}

template <class Real>
void TreeForces<Real>::build_only(std::size_t n, cudaStream_t stream) {
  n_ = n;
  walked_ = n;
  active_walk_ = false;
  refit_allowed_ = false;
  // The old accelerations given for this build serve each of its walks (own tree, then every
  // received one); the next build needs them again.
  a_old_use_ = std::exchange(a_old_given_, false) && n > 0;
  if (n == 0) return;
  throw_if_failed();
  reserve(n);
  build(n, stream);
  cursors_fresh_ = true;  // the group write reset them
  NBODY_CUDA_CHECK(cudaMemsetAsync(interactions_.data(), 0, sizeof(unsigned long long), stream));
}

template <class Real>
void TreeForces<Real>::walk_sources(std::size_t n, Real eps, cudaStream_t stream, bool potential,
                                    const TreeSources<Real>* foreign, bool accumulate) {
  potential_ = potential;
  if (n != n_) {
    throw Error("GPU tree: walk_sources of " + std::to_string(n) + " bodies after a build of " +
                std::to_string(n_));
  }
  if (n == 0) return;
  if (foreign != nullptr && foreign->cells == 0) return;  // nothing received
  if (input_walk_ && (foreign != nullptr || accumulate || cost_ != nullptr)) {
    throw Error("GPU tree: the input-order walk takes no foreign sources, sums or costs");
  }
  // The walk's cursors (groups, abandoned groups, the second pass's) back to 0 for each further
  // walk of the build (received trees); the first finds them reset by the build.
  if (!std::exchange(cursors_fresh_, false)) {
    NBODY_CUDA_CHECK(cudaMemsetAsync(counter_.data() + 3, 0, 3 * sizeof(unsigned), stream));
  }
  TreeView<Real> t = view(n);
  if (foreign != nullptr) t.foreign = *foreign;
  t.accumulate = accumulate;
  t.cost = cost_;
  const WalkParams p = walk_params(t, potential);
  if (input_walk_) {
    prepare_input_walk(t, n, stream);
    launch_active_walk(t, p, eps * eps, stacks_.data(), out(), stream);
  } else if (active_walk_) {  // select_active: the active bodies alone
    t.active_groups = active_groups_.data();
    t.active_pos = active_pos_.data();
    launch_active_walk(t, p, eps * eps, stacks_.data(), out(), stream);
  } else {
    launch_walk(t, p, eps * eps, stacks_.data(), out(), stream);
  }
  copy_counters(stream);
}

template <class Real>
void TreeForces<Real>::launch(std::size_t n, Real eps, cudaStream_t stream, bool potential) {
  potential_ = potential;
  build_only(n, stream);
  walk_sources(n, eps, stream, potential, nullptr, false);
}

template <class Real>
std::vector<std::pair<std::string, double>> TreeForces<Real>::stage_ms() const {
  throw_if_failed();
  std::vector<std::pair<std::string, double>> stages;
  if (n_ == 0) return stages;
  for (int s = 0; s < kStages; ++s) {
    float ms = 0;
    NBODY_CUDA_CHECK(cudaEventElapsedTime(&ms, events_[s], events_[s + 1]));
    stages.emplace_back(build_ == TreeBuild::Insertion ? kInsertionStageNames[s] : kStageNames[s],
                        double(ms));
  }
  return stages;
}

template <class Real>
double TreeForces<Real>::interactions_per_body() const {
  return walked_ ? double(*host_interactions()) / double(walked_) : 0.0;
}

template class TreeForces<float>;
template class TreeForces<double>;

}  // namespace nbody::cuda_tree
