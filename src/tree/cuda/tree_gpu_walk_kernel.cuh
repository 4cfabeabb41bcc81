#pragma once
// The GPU tree walk kernel (tree_walk, one warp per group; the design is described in
// tree_gpu_walk.cu, which launches it; its variants and their grids: tree_gpu_walk_launch.cuh).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <type_traits>

#include "core/cuda/cuda_check.cuh"
#include "gravity/cuda/device_math.cuh"
#include "nbody/physics/opening_criterion.hpp"
#include "tree/cuda/tree_gpu.cuh"
#include "tree/cuda/tree_gpu_walk_lists.cuh"
#include "tree/cuda/tree_gpu_walk_warp.cuh"

namespace nbody::cuda_tree {

namespace {

// Warps per block: 4 in float, 2 in double (whose lists take twice the shared memory).
template <class Real>
constexpr int kWalkWarps = sizeof(Real) == 4 ? 4 : 2;
template <class Real>
constexpr int kWalkThreads = 32 * kWalkWarps<Real>;
// With quadrupoles, an accepted leaf of at most this many bodies goes into the list as its
// bodies: exact, and cheaper than its cell term (~34 operations against ~12 per body).
constexpr unsigned kQuadLeafBodies = 2;

/// The tree position of the walk's i-th body: i itself, or in the active walk the i-th
/// entry of the list of active tree positions.
template <bool Active>
__device__ __forceinline__ unsigned tree_position(const unsigned* active_pos, unsigned i) {
  if constexpr (Active) {
    return active_pos[i];
  } else {
    (void)active_pos;
    return i;
  }
}

/// Pass 1 (Single false): one warp per group, abandoning a group whose list passes
/// `budget` entries (recorded in t.expensive). Such groups are loose clumps of a
/// sparse region whose box reaches a dense one (measured: one 88-body halo group of a 1M
/// Plummer sphere collected 103,000 entries, 24x the mean, and alone set the walk's tail).
/// Pass 2 (Single true): one warp per body of those groups, with a point box (the classic
/// per-body criterion, a little less accurate than the group box) and the list shared out
/// over the lanes. At the default budget this changes no quantile of the 1M Plummer
/// errors (median 5.651e-4, p99 3.731e-3 before and after).
/// Pot: the potentials too (the Target's phi, each body's own pair left out through the
/// lists' tree positions), written to out[].w.
/// Active: the active walk (launch_active_walk): t.active_groups[g] is group g's range in
/// t.active_pos, whose entries are the tree positions of the bodies walked (empty groups
/// are skipped); the box tested is still the whole group's, so each active body gets the
/// interaction list of the full walk, and the same forces.
/// Mac: the bmax criterion (t.bmax: b_max^2 >= theta^2 d^2) or, with t.a_old set, the
/// relative one (M s^2 > alpha a_min d^4, a_min the smallest |a_old| / G of the whole
/// group's bodies; in pass 2 the body's own, GADGET-4's per-body test: a group's smallest
/// is set by its body nearest the system's centre, where |a| -> 0; Foreign: still the
/// group's, and so is the box a shared top cell is tested with); otherwise the geometric
/// test (a kernel of its own, so that the default one keeps its registers).
/// Foreign: the walk of TreeForces::walk_sources (t.foreign's sources when set, t.accumulate,
/// t.cost); its own variant too (else 80 -> 96 registers in the default float kernel).
template <class Real, class Math, bool Quad, bool Single, bool Pot, bool Active = false,
          bool Mac = false, bool Foreign = false>
__global__ void __launch_bounds__(kWalkThreads<Real>)
    tree_walk(TreeView<Real> t, Real theta2, Real eps2, unsigned long long budget, int* stacks,
              Vec4<Real>* out) {
  __shared__ ListsFor<Real, Quad, Pot> lists[kWalkWarps<Real>];
  // The sources: the tree's own cells and bodies, or foreign ones (a received essential tree,
  // TreeForces::walk_sources); the targets (groups, t.sorted, order, a_old) are the tree's.
  const bool own = !Foreign || t.foreign.box == nullptr;
  const Vec4<Real>* __restrict__ box = own ? t.box : t.foreign.box;
  const Vec4<Real>* __restrict__ com = own ? t.com : t.foreign.com;
  const Vec4<Real>* __restrict__ quad = own ? t.quad : t.foreign.quad;
  const CellLink* __restrict__ link = own ? t.link : t.foreign.link;
  const Vec4<Real>* __restrict__ sorted = own ? t.sorted : t.foreign.sorted;
  [[maybe_unused]] const Real* __restrict__ bmax = own ? t.bmax : t.foreign.bmax;
  // A decomposed run's shared top cells (TreeForces::share_top_cells; null otherwise). Only
  // the Foreign variant reads them: a decomposed run's walks all take it (launch_walk), and
  // the one-GPU kernel keeps its instructions (the check cost it 1.5 % at 64M on an H200).
  [[maybe_unused]] const unsigned char* __restrict__ shared = own ? t.shared : t.foreign.shared;
  [[maybe_unused]] const bool relative = Mac && t.a_old != nullptr;
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  const unsigned below = (1u << lane) - 1u;
  int* stack = stacks + (std::size_t(blockIdx.x) * kWalkWarps<Real> + warp) * kStackCapacity;
  ListsFor<Real, Quad, Pot>& my = lists[warp];
  const unsigned n_groups = t.counter[2];
  const bool planar = t.dim == 2;
  // A body on a cell face, or a hair outside its cell after rounding, still counts as
  // inside it (the CPU uses root_half * 2^-40 in double).
  const Real slack = box[0].w * (sizeof(Real) == 4 ? Real(0x1p-20) : Real(0x1p-40));

  for (;;) {
    unsigned g = 0;
    Group grp{};    // the bodies walked (Active: a range of t.active_pos)
    Group whole{};  // Active, pass 1: the whole group, whose box the walk tests
    if constexpr (Single) {
      unsigned item = 0;
      if (lane == 0) item = atomicAdd(&t.counter[5], 1u);
      item = __shfl_sync(kFull, item, 0);
      if (item >= t.counter[4] * kMaxGroup) break;
      g = t.expensive[item / kMaxGroup];
      const Group whole = Active ? t.active_groups[g] : t.groups[g];
      const unsigned i = whole.begin + item % kMaxGroup;
      if (i >= whole.end ||
          share_owner(tree_position<Active>(t.active_pos, i), t.share_parts) != t.share_part)
        continue;
      grp = {i, i + 1};
    } else {
      if (lane == 0) g = atomicAdd(&t.counter[3], 1u);
      g = __shfl_sync(kFull, g, 0);
      if (g >= n_groups) break;
      grp = t.groups[g];
      if constexpr (Active) {
        whole = grp;
        grp = t.active_groups[g];
        if (grp.end == grp.begin) continue;  // no active body in this group
      }
      if (share_owner(tree_position<Active>(t.active_pos, grp.begin), t.share_parts) !=
              t.share_part &&
          share_owner(tree_position<Active>(t.active_pos, grp.end - 1), t.share_parts) !=
              t.share_part) {
        continue;  // another process's bodies only
      }
    }
    const int slots = Single ? 1 : int((grp.end - grp.begin + 31u) / 32u);

    Target<Real> me;
    Real lx, ly, lz, hx, hy, hz;
#pragma unroll
    for (int k = 0; k < kPerLane; ++k) {
      const unsigned i = grp.begin + lane + 32u * unsigned(k);
      // Idle slots copy a group body.
      const unsigned held = tree_position<Active>(t.active_pos, i < grp.end ? i : grp.begin);
      const Vec4<Real> b = t.sorted[held];
      me.id[k] = held;
      me.x[k] = b.x;
      me.y[k] = b.y;
      me.z[k] = b.z;
      me.ax[k] = me.ay[k] = me.az[k] = me.phi[k] = Real(0);
      // The box: of the group's bodies, in the active walk of the whole group's (so that
      // an active body meets the cells it meets in the full walk).
      Vec4<Real> e = b;
      if constexpr (Active && !Single) {
        if (!t.own_box) {  // the input-order walk: the walked bodies' own box
          const unsigned j = whole.begin + lane + 32u * unsigned(k);
          e = t.sorted[j < whole.end ? j : whole.begin];
        }
      }
      lx = k == 0 ? e.x : min(lx, e.x);
      ly = k == 0 ? e.y : min(ly, e.y);
      lz = k == 0 ? e.z : min(lz, e.z);
      hx = k == 0 ? e.x : max(hx, e.x);
      hy = k == 0 ? e.y : max(hy, e.y);
      hz = k == 0 ? e.z : max(hz, e.z);
    }
    lx = warp_min(lx), ly = warp_min(ly), lz = warp_min(lz);
    hx = warp_max(hx), hy = warp_max(hy), hz = warp_max(hz);
    const Real gx = Real(0.5) * (lx + hx), gy = Real(0.5) * (ly + hy), gz = Real(0.5) * (lz + hz);
    const Real ghx = Real(0.5) * (hx - lx), ghy = Real(0.5) * (hy - ly),
               ghz = Real(0.5) * (hz - lz);
    // Pass 2, Foreign: a shared top cell is tested with the group's box, as pass 1 does, so that
    // every walk of a build decides its copies alike (else its mass could count twice or never).
    [[maybe_unused]] Real tc[3] = {gx, gy, gz}, th[3] = {ghx, ghy, ghz};
    if constexpr (Foreign && Single) {
      if (shared != nullptr) group_box<kPerLane>(t.sorted, t.groups[g], lane, tc, th);
    }
    [[maybe_unused]] Real alpha_a = Real(0);  // relative: alpha |a_old| / G, the group's smallest
    if constexpr (Mac) {
      // Pass 2: the body's own, as in GADGET-4's per-body walk; in a decomposed run's walks
      // (Foreign, the own tree's too) still its group's, as for its box at shared top cells
      // (below): every walk of a build must decide those alike.
      if (relative && Single && !Foreign) {
        alpha_a = t.alpha * t.a_old[t.order[me.id[0]]];
      } else if (relative) {
        const Group whole_group = t.groups[g];  // tree positions, in every variant
        Real a_min = Real(INFINITY);
#pragma unroll
        for (int k = 0; k < kPerLane; ++k) {
          const unsigned j = whole_group.begin + lane + 32u * unsigned(k);
          if (j < whole_group.end) a_min = min(a_min, t.a_old[t.order[j]]);
        }
        alpha_a = t.alpha * warp_min(a_min);
      }
    }

    auto flush_bodies = [&](int count) {
      if constexpr (Single) {
        evaluate_strided<Real, Math, Quad, Pot>(my, count, 0, eps2, lane, me);
      } else {
        with_slots(slots, [&](auto k) {
          evaluate_list<decltype(k)::value, Real, Math, Pot>(my.bodies, list_index<Pot>(my), count,
                                                             eps2, me);
        });
      }
    };
    auto flush_cells = [&](int count) {
      if constexpr (Quad && Single) {
        evaluate_strided<Real, Math, Quad, Pot>(my, 0, count, eps2, lane, me);
      } else if constexpr (Quad) {
        with_slots(slots, [&](auto k) {
          evaluate_quad<decltype(k)::value, Real, Math, Pot>(my.cells, count, eps2, me);
        });
      }
    };
    auto flush_big = [&](int count) {
      if constexpr (Single) {
        evaluate_big_strided<Real, Math, Pot>(link, sorted, my.big, count, eps2, lane, own, me);
      } else {
        with_slots(slots, [&](auto k) {
          evaluate_big<decltype(k)::value, Real, Math, Pot>(link, sorted, my.big, count, eps2, own,
                                                            me);
        });
      }
    };
    bool abandoned = false;

    unsigned long long entries = 0;  // list entries, each summed by every body of the group
    int size = 1, n_bodies = 0, n_cells = 0, n_big = 0;
    if (lane == 0) stack[0] = 0;
    __syncwarp();
    while (size > 0) {
      const int take = size < 32 ? size : 32;
      const int base = size - take;
      const int c = int(lane) < take ? stack[base + int(lane)] : -1;
      __syncwarp();  // every lane has read its cell before the pushes overwrite the slots
      size = base;
      bool accept = false, big_leaf = false;
      int leaf_bodies = 0, children = 0, first = 0;
      Vec4<Real> m{};
      if (c >= 0) {
        const Vec4<Real> b = box[c];
        m = com[c];
        const Real h = b.w, s = Real(2) * h;
        bool whole = false;  // a shared top cell in pass 2: the group's box (above)
        if constexpr (Foreign && Single) whole = shared != nullptr && shared[c] != 0;
        const Real cx = whole ? tc[0] : gx, cy = whole ? tc[1] : gy, cz = whole ? tc[2] : gz;
        const Real chx = whole ? th[0] : ghx, chy = whole ? th[1] : ghy, chz = whole ? th[2] : ghz;
        bool open = boxes_overlap(b.x, b.y, b.z, h, h, planar ? Real(0) : h, cx, cy, cz, chx, chy,
                                  chz, slack);
        if (!open) {
          const Real d2 = distance2_point_box(m.x, m.y, m.z, cx, cy, cz, chx, chy, chz);
          if constexpr (Mac) {
            const Real r = relative ? Real(0) : bmax[c];
            open = relative ? relative_must_open(m.w * s * s, alpha_a, d2, s * s)
                            : bh_must_open(r * r, theta2, d2);
          } else {
            open = bh_must_open(s * s, theta2, d2);
          }
        }
        // A shared top cell has the whole global cell's moments: the copy of one rank adds
        // it, the others' are dropped when accepted (kSilentTopCell), and none is a tiny leaf
        // (its bodies here are not the cell's).
        unsigned char top = 0;
        if constexpr (Foreign) top = !open && shared != nullptr ? shared[c] : 0;
        if (!open && top == kSilentTopCell) {
          // dropped: another rank's copy adds it
        } else if (!open) {
          accept = true;
          if (top != 0) {
            // the whole cell's moments
          } else if constexpr (Quad) {  // a tiny leaf: its bodies (kQuadLeafBodies)
            const CellLink lk = link[c];
            // (Foreign: a leaf without bodies, an essential tree's pruned cell, stays a cell)
            const unsigned count = lk.end - lk.begin;
            if (lk.first_child < 0 &&
                (Foreign ? count - 1u < kQuadLeafBodies : count <= kQuadLeafBodies)) {
              accept = false;
              leaf_bodies = int(lk.end - lk.begin);
              first = int(lk.begin);
            }
          }
        } else {
          const CellLink lk = link[c];
          if (lk.first_child >= 0) {
            children = lk.child_count;
            first = lk.first_child;
          } else if (Foreign && lk.end == lk.begin) {
            // A pruned cell of an essential tree that this group would open: the sender
            // judged its moments good enough for the receiver (tree_gpu_essential.cu), so
            // they are used, not dropped.
            accept = true;
          } else if (lk.end - lk.begin <= kLeafSize) {
            leaf_bodies = int(lk.end - lk.begin);
            first = int(lk.begin);
          } else {
            big_leaf = true;
          }
        }
      }
      // Accepted cells: pseudo-bodies (monopole) or quadrupole entries.
      const unsigned accepted = __ballot_sync(kFull, accept);
      if constexpr (Quad) {
        if (accept) {
          const std::size_t q = 2 * std::size_t(c);
          my.cells[n_cells + __popc(accepted & below)] = {m, quad[q], quad[q + 1]};
        }
        n_cells += __popc(accepted);
      } else {
        if (accept) {
          const int e = n_bodies + __popc(accepted & below);
          my.bodies[e] = m;
          if constexpr (Pot) my.index[e] = kNotABody;
        }
        n_bodies += __popc(accepted);
      }
      // Opened small leaves: their bodies copied into the list.
      int added = 0;
      const int at = n_bodies + warp_exclusive_sum(leaf_bodies, lane, added);
      for (int j = 0; j < leaf_bodies; ++j) {
        my.bodies[at + j] = sorted[first + j];
        if constexpr (Pot) my.index[at + j] = own ? unsigned(first + j) : kNotABody;
      }
      n_bodies += added;
      const unsigned bigs = __ballot_sync(kFull, big_leaf);
      if (big_leaf) my.big[n_big + __popc(bigs & below)] = c;
      n_big += __popc(bigs);
      // Children onto the stack.
      int pushed = 0;
      const int slot = size + warp_exclusive_sum(children, lane, pushed);
      if (size + pushed > int(kStackCapacity)) {  // cannot happen (tree_gpu.cuh); never write past
        if (lane == 0) atomicOr(&t.counter[1], 2u);
        break;
      }
      for (int j = 0; j < children; ++j) stack[slot + j] = first + j;
      size += pushed;
      __syncwarp();
      if (n_bodies >= kFlushAt) {
        flush_bodies(n_bodies);
        entries += unsigned(n_bodies);
        n_bodies = 0;
        __syncwarp();
      }
      if (Quad && n_cells >= kFlushAt) {
        flush_cells(n_cells);
        entries += unsigned(n_cells);
        n_cells = 0;
        __syncwarp();
      }
      if (n_big >= 32) {
        for (int e = 0; e < n_big; ++e) entries += link[my.big[e]].end - link[my.big[e]].begin;
        flush_big(n_big);
        n_big = 0;
        __syncwarp();
      }
      if (!Single && entries > budget) {  // uniform over the warp
        abandoned = true;
        break;
      }
    }
    if (abandoned) {
      if (lane == 0) t.expensive[atomicAdd(&t.counter[4], 1u)] = g;
      __syncwarp();
      continue;
    }
    flush_bodies(n_bodies);
    flush_cells(n_cells);
    entries += unsigned(n_bodies + n_cells);
    for (int e = 0; e < n_big; ++e) entries += link[my.big[e]].end - link[my.big[e]].begin;
    flush_big(n_big);
    __syncwarp();

    if constexpr (Single) {
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) {
        me.ax[0] += __shfl_xor_sync(kFull, me.ax[0], off);
        me.ay[0] += __shfl_xor_sync(kFull, me.ay[0], off);
        me.az[0] += __shfl_xor_sync(kFull, me.az[0], off);
        if constexpr (Pot) me.phi[0] += __shfl_xor_sync(kFull, me.phi[0], off);
      }
      if (lane == 0) {
        const unsigned i = t.order[tree_position<Active>(t.active_pos, grp.begin)];
        store(out[i], {me.ax[0], me.ay[0], planar ? Real(0) : me.az[0], Pot ? me.phi[0] : Real(0)},
              Foreign && t.accumulate);
        if (Foreign && t.cost) t.cost[i] += float(entries);
      }
    } else {
#pragma unroll
      for (int k = 0; k < kPerLane; ++k) {
        const unsigned i = grp.begin + lane + 32u * unsigned(k);
        if (i >= grp.end) continue;
        const unsigned at = tree_position<Active>(t.active_pos, i);
        if (share_owner(at, t.share_parts) == t.share_part) {
          const unsigned o = t.order[at];
          store(out[o],
                {me.ax[k], me.ay[k], planar ? Real(0) : me.az[k], Pot ? me.phi[k] : Real(0)},
                Foreign && t.accumulate);
          if (Foreign && t.cost) t.cost[o] += float(entries);
        }
      }
    }
    if (lane == 0) atomicAdd(t.interactions, entries * (grp.end - grp.begin));
  }
}

}  // namespace

}  // namespace nbody::cuda_tree
