// TreeForces::launch_active (hierarchical time steps): the tree of all bodies as launch()
// builds it, then the walk of the active bodies alone; select_active, the same selection for
// the walks of a decomposed run's build (build_only, then walk_sources of its own tree and of
// every received one). Their tree positions come from a
// flag per body and cub::DeviceSelect in tree order, each walk group is cut down to its
// active bodies, and the walk (tree_gpu_walk.cu, Active) tests the whole group's box, so
// every active body gets the full walk's result bit for bit.
//
// A substep's tree is the last build refitted when the caller allows it (allow_refit: the
// device block steps do between a step's substeps, docs/timesteps.md): the bodies gathered into
// the build's order at their new places, each cell's box grown bottom-up to the smallest cube
// holding its old box and its bodies now, the moments (b_max, quadrupoles) summed anew. No
// keys, no sort, no level-by-level build, the same walk groups. The boxes only grow, so the
// walk opens every cell the build's edges would open, at a cost of longer lists as the bodies
// spread; the order goes stale until the next build (the step's last substep, every body
// active, is always a full launch()).
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>

#include <cub/device/device_select.cuh>

#include <algorithm>
#include <utility>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/launch.cuh"
#include "tree/cuda/tree_gpu.cuh"

namespace nbody::cuda_tree {

namespace {

// ---- launch_active ---------------------------------------------------------------------------

__global__ void mark_active(const unsigned* __restrict__ active, unsigned n_active,
                            unsigned char* __restrict__ flags) {
  const unsigned k = blockIdx.x * 256u + threadIdx.x;
  if (k < n_active) flags[active[k]] = 1;
}

/// The select predicate: tree position -> whether its body is active.
struct ActiveInTreeOrder {
  const unsigned char* flags;
  const unsigned* order;
  __device__ bool operator()(unsigned position) const { return flags[order[position]] != 0; }
};

/// First index in [0, count) whose value is >= v (values ascending).
__device__ __forceinline__ unsigned lower_bound(const unsigned* values, unsigned count,
                                                unsigned v) {
  unsigned lo = 0, hi = count;
  while (lo < hi) {
    const unsigned mid = lo + (hi - lo) / 2;
    if (values[mid] < v) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/// active_groups[g]: walk group g's range in the ascending list of active tree positions
/// (empty when none of its bodies is active), for g < the number of groups (<= most); the
/// walk's cursors reset.
template <class Real>
__global__ void active_groups(TreeView<Real> t, unsigned most, const unsigned* active_pos,
                              const unsigned* active_count, Group* active_groups) {
  const unsigned g = blockIdx.x * 256u + threadIdx.x;
  if (g == 0) {
    t.counter[3] = 0;
    t.counter[4] = 0;
    t.counter[5] = 0;
  }
  if (g >= most || g >= t.counter[2]) return;
  const Group whole = t.groups[g];
  const unsigned count = *active_count;
  active_groups[g] = {lower_bound(active_pos, count, whole.begin),
                      lower_bound(active_pos, count, whole.end)};
}

/// walked[i] = 1 for every tree position i of a group with an active body (the pieces of a
/// decomposed run's substep describe those: the walk tests each such group's whole box).
__global__ void mark_walked_groups(const Group* groups, const Group* active_groups,
                                   const unsigned* group_count, unsigned most,
                                   unsigned char* walked) {
  const unsigned g = blockIdx.x * 256u + threadIdx.x;
  if (g >= most || g >= *group_count || active_groups[g].end == active_groups[g].begin) return;
  for (unsigned i = groups[g].begin; i < groups[g].end; ++i) walked[i] = 1;
}

}  // namespace

template <class Real>
void TreeForces<Real>::launch_active(std::size_t n, Real eps, cudaStream_t stream, bool potential,
                                     const unsigned* active, std::size_t n_active) {
  n_ = n;
  walked_ = n_active;
  potential_ = potential;
  a_old_use_ = std::exchange(a_old_given_, false) && n > 0;
  if (n == 0) return;
  throw_if_failed();
  reserve(n);
  if (std::exchange(refit_allowed_, false) && n == built_n_) {
    refit(n, stream);
  } else {
    build(n, stream);
  }
  select_positions(n, active, n_active, stream);
  TreeView<Real> t = view(n);
  t.active_groups = active_groups_.data();
  t.active_pos = active_pos_.data();
  NBODY_CUDA_CHECK(cudaMemsetAsync(interactions_.data(), 0, sizeof(unsigned long long), stream));
  const WalkParams p = walk_params(t, potential);
  launch_active_walk(t, p, eps * eps, stacks_.data(), out(), stream);
  cursors_fresh_ = false;  // consumed: a walk_sources of this build resets them
  copy_counters(stream);
}

template <class Real>
void TreeForces<Real>::refit(std::size_t n, cudaStream_t stream) {
  ++refits_;
  top_shared_ = false;
  NBODY_CUDA_CHECK(cudaEventRecord(events_[0], stream));
  NBODY_CUDA_CHECK(cudaEventRecord(events_[1], stream));
  launch_gather(view(n), stream);
  NBODY_CUDA_CHECK(cudaEventRecord(events_[2], stream));
  NBODY_CUDA_CHECK(cudaEventRecord(events_[3], stream));
  launch_moments(view(n), quadrupole_, stream, true);
  // The walk's cursors, which the group write resets in a build.
  NBODY_CUDA_CHECK(cudaMemsetAsync(counter_.data() + 3, 0, 3 * sizeof(unsigned), stream));
  NBODY_CUDA_CHECK(cudaEventRecord(events_[4], stream));
}

template <class Real>
void TreeForces<Real>::select_active(std::size_t n, const unsigned* active, std::size_t n_active,
                                     cudaStream_t stream) {
  active_walk_ = true;
  select_positions(n, active, n_active, stream);
  if (n == 0) return;
  // The bodies of the groups walked, for the pieces (describe_bodies).
  const unsigned most_groups = unsigned(std::min(n, cell_capacity_));
  walked_groups_.reserve(body_capacity_, "tree walked groups");
  NBODY_CUDA_CHECK(cudaMemsetAsync(walked_groups_.data(), 0, n, stream));
  mark_walked_groups<<<gpu::blocks_for(most_groups, 256), 256, 0, stream>>>(
      groups_.data(), active_groups_.data(), counter_.data() + 2, most_groups,
      walked_groups_.data());
  NBODY_CUDA_CHECK_LAUNCH("tree mark_walked_groups");
}

template <class Real>
void TreeForces<Real>::select_positions(std::size_t n, const unsigned* active, std::size_t n_active,
                                        cudaStream_t stream) {
  walked_ = n_active;
  if (n == 0) return;
  // The active bodies' tree positions, the groups cut down to them.
  active_flags_.reserve(body_capacity_, "tree active flags");
  active_pos_.reserve(body_capacity_, "tree active positions");
  active_count_.reserve(1, "tree active count");
  active_groups_.reserve(cell_capacity_, "tree active groups");
  NBODY_CUDA_CHECK(cudaMemsetAsync(active_flags_.data(), 0, n, stream));
  if (n_active > 0) {
    mark_active<<<gpu::blocks_for(n_active, 256), 256, 0, stream>>>(active, unsigned(n_active),
                                                                    active_flags_.data());
    NBODY_CUDA_CHECK_LAUNCH("tree mark_active");
  }
  const ActiveInTreeOrder select{active_flags_.data(), order_.data()};
  const auto positions = thrust::make_counting_iterator(0u);
  const auto items = static_cast<long long>(n);
  std::size_t bytes = 0;
  NBODY_CUDA_CHECK(cub::DeviceSelect::If(nullptr, bytes, positions, active_pos_.data(),
                                         active_count_.data(), items, select, stream));
  scratch(bytes);
  NBODY_CUDA_CHECK(cub::DeviceSelect::If(temp_.data(), bytes, positions, active_pos_.data(),
                                         active_count_.data(), items, select, stream));
  const TreeView<Real> t = view(n);
  // Groups are non-empty and disjoint, and groups_ holds at most one per cell slot.
  const unsigned most_groups = unsigned(std::min(n, cell_capacity_));
  active_groups<Real><<<gpu::blocks_for(most_groups, 256), 256, 0, stream>>>(
      t, most_groups, active_pos_.data(), active_count_.data(), active_groups_.data());
  NBODY_CUDA_CHECK_LAUNCH("tree active_groups");
}

template void TreeForces<float>::launch_active(std::size_t, float, cudaStream_t, bool,
                                               const unsigned*, std::size_t);
template void TreeForces<double>::launch_active(std::size_t, double, cudaStream_t, bool,
                                                const unsigned*, std::size_t);
template void TreeForces<float>::select_active(std::size_t, const unsigned*, std::size_t,
                                               cudaStream_t);
template void TreeForces<double>::select_active(std::size_t, const unsigned*, std::size_t,
                                                cudaStream_t);

}  // namespace nbody::cuda_tree
