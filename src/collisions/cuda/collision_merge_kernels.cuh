#pragma once
// The merge rounds' kernels of the GPU collision engine (collision_resolve.cu runs them):
// each body's overlapping partner, the change of the others' potential under gravity, and
// the merges of mutual choices into the smaller id. Only collision_resolve.cu includes this.
#include <cuda_runtime.h>

#include "collisions/cuda/collision_engine.cuh"
#include "collisions/cuda/collision_engine_shared.cuh"
#include "nbody/physics/collision_response.hpp"

namespace nbody::cuda_collisions {
namespace {

/// Merge round, part 1: each body's overlapping partner of smallest index (-1: none);
/// counts the contacts (from the smaller index) on the first round.
__global__ void choose_partner(BodyArrays b, unsigned n, const unsigned long long* partners,
                               const unsigned* offset, bool first, int* choice,
                               unsigned long long* stats) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const CollisionBody<double> me = load(b, i);
  int best = -1;
  unsigned contacts = 0;
  for (unsigned e = offset[i]; e < offset[i + 1]; ++e) {
    const unsigned j = unsigned(partners[e] & 0xffffffffu);
    const CollisionBody<double> other = load(b, j);
    const CollisionBody<double>& a = i < j ? me : other;
    const CollisionBody<double>& c2 = i < j ? other : me;
    if (!within_reach(a, c2, 1.0) || !resolvable_overlap(contact_between(a, c2), a, c2)) continue;
    if (best < 0) best = int(j);
    if (!first) break;
    if (j > i) ++contacts;
  }
  choice[i] = best;
  if (contacts) atomicAdd(&stats[kContacts], static_cast<unsigned long long>(contacts));
}

/// Merge round, part 2 under gravity (before the bodies change): for each merge of the
/// round (mutual choices, from the smaller index), W_after - W_before of the merged body
/// against every other body (merge_pass's third_body_change on the CPU, where merges are
/// sequential). The merges of one round happen at once, so the terms between two merging
/// pairs P and Q are those of the two merged bodies, half counted from each side. O(N) per
/// merge.
__device__ __forceinline__ bool merges_this_round(const int* choice, unsigned k) {
  const int j = choice[k];
  return j >= 0 && choice[j] == int(k);
}

/// Which of i and j a merge keeps: the active body when one is a test particle, else the
/// smaller id (as the CPU's merge_pass).
__device__ __forceinline__ unsigned survivor(const BodyArrays& b, unsigned i, unsigned j) {
  const bool test_i = i >= b.n_active, test_j = j >= b.n_active;
  if (test_i != test_j) return test_i ? j : i;
  return b.id[i] <= b.id[j] ? i : j;
}

__device__ __forceinline__ CollisionBody<double> merged_pair(const BodyArrays& b, unsigned i,
                                                             unsigned j, int dim) {
  const unsigned keep = survivor(b, i, j);
  return merge_bodies(load(b, keep), load(b, keep == i ? j : i), dim);
}

__global__ void merge_third_body(BodyArrays b, unsigned n, const int* choice, int dim, double G,
                                 double eps2, double* third) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  third[i] = 0;
  const int j = choice[i];
  if (j < 0 || unsigned(j) <= i || choice[j] != int(i)) return;
  const CollisionBody<double> a = load(b, i), c = load(b, unsigned(j));
  const CollisionBody<double> m = merged_pair(b, i, unsigned(j), dim);
  double change = 0;
  for (unsigned k = 0; k < n; ++k) {
    if (k == i || k == unsigned(j)) continue;
    const CollisionBody<double> o = load(b, k);
    const double before =
        pair_potential_energy(a, o, G, eps2) + pair_potential_energy(c, o, G, eps2);
    if (!merges_this_round(choice, k)) {
      change += pair_potential_energy(m, o, G, eps2) - before;
    } else if (k < unsigned(choice[k])) {  // pair Q, once, from its smaller index
      const unsigned l = unsigned(choice[k]);
      const CollisionBody<double> o2 = load(b, l);
      const double all_before =
          before + pair_potential_energy(a, o2, G, eps2) + pair_potential_energy(c, o2, G, eps2);
      change += 0.5 * (pair_potential_energy(m, merged_pair(b, k, l, dim), G, eps2) - all_before);
    }
  }
  third[i] = change;
}

/// Merge round, part 3: mutual choices merge into the smaller id (a matching: every body
/// is in at most one merge, so no two threads touch one body).
__global__ void merge_pairs(BodyArrays b, unsigned n, const int* choice, int dim, double G,
                            double eps2, const double* third, unsigned char* alive,
                            double* loss_by_body, unsigned long long* stats) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  loss_by_body[i] = 0;
  const int j = choice[i];
  if (j < 0 || unsigned(j) <= i || choice[j] != int(i)) return;
  const unsigned keep = survivor(b, i, unsigned(j));
  const unsigned gone = keep == i ? unsigned(j) : i;
  const CollisionBody<double> a = load(b, keep), c = load(b, gone);
  const double w = pair_potential_energy(a, c, G, eps2);
  const CollisionBody<double> m = merge_bodies(a, c, dim);
  b.x[keep] = m.x, b.y[keep] = m.y, b.z[keep] = m.z;
  b.vx[keep] = m.vx, b.vy[keep] = m.vy, b.vz[keep] = m.vz;
  b.m[keep] = m.mass, b.r[keep] = m.radius;
  if (b.ax) {  // hierarchical steps move the velocity back with it before new forces
    b.ax[keep] = merged_acceleration(b.ax[keep], b.ax[gone], a.mass, c.mass);
    b.ay[keep] = merged_acceleration(b.ay[keep], b.ay[gone], a.mass, c.mass);
    b.az[keep] = merged_acceleration(b.az[keep], b.az[gone], a.mass, c.mass);
  }
  alive[gone] = 0;
  atomicAdd(&stats[kMerges], 1ULL);
  if (gone < b.n_active) atomicAdd(&stats[kActiveGone], 1ULL);
  loss_by_body[i] = merge_kinetic_loss(a, c) + w - (third ? third[i] : 0.0);
}

}  // namespace
}  // namespace nbody::cuda_collisions
