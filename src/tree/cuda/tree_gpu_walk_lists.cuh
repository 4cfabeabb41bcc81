#pragma once
// The GPU tree walk's interaction lists (tree_gpu_walk.cu): a warp's lists in shared
// memory (pseudo-bodies, accepted cells with their quadrupoles, big leaves) and their
// evaluation against the bodies the lanes hold, with the direct sum's pair function and
// the quadrupole term (multipole.hpp), with their potentials when Pot is set
// (gravity/cuda/pair_terms.cuh). Only tree_gpu_walk.cu includes this.
#include <cuda_runtime.h>

#include <type_traits>

#include "gravity/cuda/pair_terms.cuh"
#include "nbody/physics/multipole.hpp"
#include "tree/cuda/tree_gpu.cuh"

namespace nbody::cuda_tree {

/// Bodies of a group per lane: lane, lane + 32, ...
inline constexpr int kPerLane = int(kMaxGroup / 32);
// The pseudo-body list (accepted cells as (com, mass), bodies of opened leaves) is
// evaluated once it holds kFlushAt entries; one round adds at most 32 cells and 32 leaves
// of <= kLeafSize bodies.
inline constexpr int kFlushAt = 32;
inline constexpr int kListCapacity = kFlushAt + 32 + 32 * int(kLeafSize);
inline constexpr int kQuadCapacity = kFlushAt + 32;  // accepted cells with their quadrupoles
inline constexpr int kBigCapacity = 64;              // leaves above kLeafSize (maximum depth only)

using cuda_gravity::cell_term;
using cuda_gravity::pair_term;

/// The group's bodies a lane holds (slots k < kPerLane), their accelerations, and for Pot
/// walks (elsewhere never touched, so the compiler drops them) their tree positions and
/// potentials.
template <class Real>
struct Target {
  Real x[kPerLane], y[kPerLane], z[kPerLane];
  Real ax[kPerLane], ay[kPerLane], az[kPerLane], phi[kPerLane];
  unsigned id[kPerLane];
};

/// A cell accepted with its quadrupole: com + mass, then (xx, yy, zz, xy), (xz, yz, tr, -).
template <class Real>
struct QuadEntry {
  Vec4<Real> com, q0, q1;
};

/// One warp's lists: pseudo-bodies, accepted cells with quadrupoles (Quad only), big leaves.
template <class Real, bool Quad>
struct WarpLists {
  Vec4<Real> bodies[kListCapacity];
  QuadEntry<Real> cells[Quad ? kQuadCapacity : 1];
  int big[kBigCapacity];
};
/// With the potentials, each pseudo-body's tree position too (kNotABody for an accepted
/// cell), so that a target leaves itself out of its potential (pair_terms.cuh).
template <class Real, bool Quad>
struct WarpListsWithIndex : WarpLists<Real, Quad> {
  unsigned index[kListCapacity];
};
inline constexpr unsigned kNotABody = 0xffffffffu;
template <class Real, bool Quad, bool Pot>
using ListsFor = std::conditional_t<Pot, WarpListsWithIndex<Real, Quad>, WarpLists<Real, Quad>>;

/// The list's tree positions (Pot) or nullptr.
template <bool Pot, class Lists>
__device__ __forceinline__ const unsigned* list_index(const Lists& my) {
  if constexpr (Pot) {
    return my.index;
  } else {
    return nullptr;
  }
}

/// Every target slot (K per lane) against list[0, count), from shared memory; index: the
/// entries' tree positions (read only with Pot).
template <int K, class Real, class Math, bool Pot>
__device__ __forceinline__ void evaluate_list(const Vec4<Real>* list, const unsigned* index,
                                              int count, Real eps2, Target<Real>& me) {
#pragma unroll 4
  for (int e = 0; e < count; ++e) {
    const Vec4<Real> b = list[e];
#pragma unroll
    for (int k = 0; k < K; ++k) {
      pair_term<Pot, Real, Math>(b.x - me.x[k], b.y - me.y[k], b.z - me.z[k], b.w, eps2, me.ax[k],
                                 me.ay[k], me.az[k], me.phi[k], Pot && index[e] == me.id[k]);
    }
  }
}

template <int K, class Real, class Math, bool Pot>
__device__ __forceinline__ void evaluate_quad(const QuadEntry<Real>* list, int count, Real eps2,
                                              Target<Real>& me) {
  for (int e = 0; e < count; ++e) {
    const QuadEntry<Real> c = list[e];
    const Quadrupole<Real> q{c.q0.x, c.q0.y, c.q0.z, c.q0.w, c.q1.x, c.q1.y, c.q1.z};
#pragma unroll
    for (int k = 0; k < K; ++k) {
      cell_term<Pot, Real, Math>(c.com.x - me.x[k], c.com.y - me.y[k], c.com.z - me.z[k], c.com.w,
                                 q, eps2, me.ax[k], me.ay[k], me.az[k], me.phi[k]);
    }
  }
}

/// Big leaves: their bodies straight from global memory (all lanes read the same one). own:
/// the sources are the targets' tree (else a foreign body is never the target itself).
template <int K, class Real, class Math, bool Pot>
__device__ __forceinline__ void evaluate_big(const CellLink* __restrict__ link,
                                             const Vec4<Real>* __restrict__ sorted, const int* list,
                                             int count, Real eps2, bool own, Target<Real>& me) {
  for (int e = 0; e < count; ++e) {
    const CellLink lk = link[list[e]];
    for (unsigned j = lk.begin; j < lk.end; ++j) {
      const Vec4<Real> b = sorted[j];
#pragma unroll
      for (int k = 0; k < K; ++k) {
        pair_term<Pot, Real, Math>(b.x - me.x[k], b.y - me.y[k], b.z - me.z[k], b.w, eps2, me.ax[k],
                                   me.ay[k], me.az[k], me.phi[k], Pot && own && j == me.id[k]);
      }
    }
  }
}

/// A lone body (every lane holds it): the lanes share the list, entry lane, lane + 32, ...
/// (the sums are reduced over the warp at the end of the walk).
template <class Real, class Math, bool Quad, bool Pot>
__device__ __forceinline__ void evaluate_strided(const ListsFor<Real, Quad, Pot>& my, int n_bodies,
                                                 int n_cells, Real eps2, unsigned lane,
                                                 Target<Real>& me) {
  const unsigned* index = list_index<Pot>(my);
  for (int e = int(lane); e < n_bodies; e += 32) {
    const Vec4<Real> b = my.bodies[e];
    pair_term<Pot, Real, Math>(b.x - me.x[0], b.y - me.y[0], b.z - me.z[0], b.w, eps2, me.ax[0],
                               me.ay[0], me.az[0], me.phi[0], Pot && index[e] == me.id[0]);
  }
  if constexpr (Quad) {
    for (int e = int(lane); e < n_cells; e += 32) {
      const QuadEntry<Real> c = my.cells[e];
      const Quadrupole<Real> q{c.q0.x, c.q0.y, c.q0.z, c.q0.w, c.q1.x, c.q1.y, c.q1.z};
      cell_term<Pot, Real, Math>(c.com.x - me.x[0], c.com.y - me.y[0], c.com.z - me.z[0], c.com.w,
                                 q, eps2, me.ax[0], me.ay[0], me.az[0], me.phi[0]);
    }
  }
}
template <class Real, class Math, bool Pot>
__device__ __forceinline__ void evaluate_big_strided(const CellLink* __restrict__ link,
                                                     const Vec4<Real>* __restrict__ sorted,
                                                     const int* list, int count, Real eps2,
                                                     unsigned lane, bool own, Target<Real>& me) {
  for (int e = 0; e < count; ++e) {
    const CellLink lk = link[list[e]];
    for (unsigned j = lk.begin + lane; j < lk.end; j += 32) {
      const Vec4<Real> b = sorted[j];
      pair_term<Pot, Real, Math>(b.x - me.x[0], b.y - me.y[0], b.z - me.z[0], b.w, eps2, me.ax[0],
                                 me.ay[0], me.az[0], me.phi[0], Pot && own && j == me.id[0]);
    }
  }
}

/// Calls f(std::integral_constant<int, K>{}) with K = the group's bodies per lane (1 to 4), so
/// that a small group does not pay for 4 slots per lane.
template <class F>
__device__ __forceinline__ void with_slots(int slots, F&& f) {
  switch (slots) {
    case 1:
      f(std::integral_constant<int, 1>{});
      break;
    case 2:
      f(std::integral_constant<int, 2>{});
      break;
    case 3:
      f(std::integral_constant<int, 3>{});
      break;
    default:
      f(std::integral_constant<int, 4>{});
      break;
  }
}

}  // namespace nbody::cuda_tree
