// The GPU collision engine's resolution (see collision_engine.cuh for the design), on the
// partner lists of the detection (collision_detect.cu): bounce passes (impulses by
// matchings, Jacobi push-apart), merge rounds (matchings, then compaction of the dead),
// the energy sums by cub reductions.
#include <cuda_runtime.h>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_select.cuh>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>

#include "collisions/cuda/collision_engine.cuh"
#include "collisions/cuda/collision_engine_shared.cuh"
#include "collisions/cuda/collision_merge_kernels.cuh"
#include "core/cuda/cuda_check.cuh"
#include "core/cuda/vec4.cuh"
#include "nbody/error.hpp"
#include "nbody/physics/collision_response.hpp"

namespace nbody::cuda_collisions {

namespace {

constexpr double kSkin = 0.25;  // candidates within 25% of touching (as the CPU)
// Impulse matchings per pass: a body in several approaching contacts gets one impulse per
// matching (the one with its partner of smallest index); the rest wait for the next pass.
constexpr int kImpulseRounds = 1;

// The bounce passes work on a packed copy of the bodies, (x, y, z, r) and (vx, vy, vz, m)
// in 32 bytes each, so that a partner costs two 32-byte sectors rather than eight.
using Packed = gpu::Vec4<double>;

__device__ __forceinline__ CollisionBody<double> unpack(const Packed& p, const Packed& v) {
  return {p.x, p.y, p.z, v.x, v.y, v.z, v.w, p.w};
}

__global__ void pack_bodies(BodyArrays b, unsigned n, Packed* pr, Packed* vm) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  pr[i] = {b.x[i], b.y[i], b.z[i], b.r[i]};
  vm[i] = {b.vx[i], b.vy[i], b.vz[i], b.m[i]};
}

__global__ void unpack_bodies(BodyArrays b, unsigned n, const Packed* pr, const Packed* vm) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Packed p = pr[i], v = vm[i];
  b.x[i] = p.x, b.y[i] = p.y, b.z[i] = p.z;
  b.vx[i] = v.x, b.vy[i] = v.y, b.vz[i] = v.z;
}

/// The positions of one pass, Jacobi-style: body i's new position from the push-apart of
/// all its contacts at the pass start (both sides evaluate each pair in canonical order,
/// so the shifts cancel in the pair's centre of mass exactly).
/// Under gravity (deep_only) only overlaps deeper than kDeepOverlap of the smaller radius
/// are pushed (resolve_bounce_under_gravity's rule); the others are counted, not moved.
__global__ void push_pass(const Packed* __restrict__ pr, const Packed* __restrict__ vm, unsigned n,
                          const unsigned long long* __restrict__ partners,
                          const unsigned* __restrict__ offset, bool first, bool deep_only,
                          Packed* __restrict__ next, unsigned long long* stats) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Packed mp = pr[i];
  double dx = 0, dy = 0, dz = 0;
  unsigned contacts = 0;
  for (unsigned e = offset[i]; e < offset[i + 1]; ++e) {
    const unsigned j = unsigned(partners[e] & 0xffffffffu);
    const Packed op = pr[j];
    const double gx = op.x - mp.x, gy = op.y - mp.y, gz = op.z - mp.z, t = mp.w + op.w;
    if (gx * gx + gy * gy + gz * gz >= t * t) continue;  // not touching: no mass needed
    const bool i_first = i < j;
    const CollisionBody<double> me = unpack(mp, vm[i]), other = unpack(op, vm[j]);
    const CollisionBody<double>& a = i_first ? me : other;
    const CollisionBody<double>& c2 = i_first ? other : me;
    const Contact<double> c = contact_between(a, c2);
    if (!resolvable_overlap(c, a, c2)) continue;
    if (i_first) ++contacts;
    if (deep_only && !(overlap_fraction(c.overlap, a.radius, c2.radius) > kDeepOverlap)) continue;
    const PairChange<double> dp = push_apart_shift(a, c2, c);
    if (i_first) {
      dx += dp.ax, dy += dp.ay, dz += dp.az;
    } else {
      dx += dp.bx, dy += dp.by, dz += dp.bz;
    }
  }
  next[i] = {mp.x + dx, mp.y + dy, mp.z + dz, mp.w};
  if (first && contacts) atomicAdd(&stats[kContacts], static_cast<unsigned long long>(contacts));
}

/// Impulses, part 1: each body's overlapping, approaching partner of smallest index.
__global__ void choose_approaching(const Packed* __restrict__ pr, const Packed* __restrict__ vm,
                                   unsigned n, const unsigned long long* __restrict__ partners,
                                   const unsigned* __restrict__ offset, int* choice) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Packed mp = pr[i];
  int best = -1;
  for (unsigned e = offset[i]; e < offset[i + 1] && best < 0; ++e) {
    const unsigned j = unsigned(partners[e] & 0xffffffffu);
    const Packed op = pr[j];
    const double gx = op.x - mp.x, gy = op.y - mp.y, gz = op.z - mp.z, t = mp.w + op.w;
    if (gx * gx + gy * gy + gz * gz >= t * t) continue;
    const CollisionBody<double> me = unpack(mp, vm[i]), other = unpack(op, vm[j]);
    const CollisionBody<double>& a = i < j ? me : other;
    const CollisionBody<double>& c2 = i < j ? other : me;
    const Contact<double> c = contact_between(a, c2);
    if (!resolvable_overlap(c, a, c2)) continue;
    const double u = (c2.vx - a.vx) * c.nx + (c2.vy - a.vy) * c.ny + (c2.vz - a.vz) * c.nz;
    if (u < 0) best = int(j);
  }
  choice[i] = best;
}

/// Impulses, part 2: mutual choices (a matching: no body in two pairs) exchange the
/// impulse of a collision with restitution e, applied to both bodies at once, so
/// every impulse keeps momentum and (e = 1) kinetic energy exactly as a sequential solver.
__global__ void impulse_pairs(const Packed* __restrict__ pr, Packed* vm, unsigned n,
                              const int* choice, double restitution, double* lost_by_body) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int j = choice[i];
  if (j < 0 || unsigned(j) <= i || choice[j] != int(i)) return;
  CollisionBody<double> a = unpack(pr[i], vm[i]), c2 = unpack(pr[j], vm[j]);
  double lost = 0;
  apply_velocity_change(a, c2,
                        bounce_velocity_change(a, c2, contact_between(a, c2), restitution, lost));
  vm[i] = {a.vx, a.vy, a.vz, a.mass};
  vm[j] = {c2.vx, c2.vy, c2.vz, c2.mass};
  lost_by_body[i] += lost;  // only this thread touches body i's entry in a matching
}

/// Under gravity, after a push pass (pr: positions before it, next: after): each pushed
/// pair's rise of potential energy taken out of its separating motion
/// (push_apart_compensation), Jacobi-style: body i's velocity change summed over its pushed
/// contacts into vm_next, the kinetic energy taken added (once per pair) to lost_by_body.
__global__ void compensate_pushes(const Packed* __restrict__ pr, const Packed* __restrict__ next,
                                  const Packed* __restrict__ vm, unsigned n,
                                  const unsigned long long* __restrict__ partners,
                                  const unsigned* __restrict__ offset, double G, double eps2,
                                  Packed* __restrict__ vm_next, double* lost_by_body) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Packed mp = pr[i];
  double dvx = 0, dvy = 0, dvz = 0, taken = 0;
  for (unsigned e = offset[i]; e < offset[i + 1]; ++e) {
    const unsigned j = unsigned(partners[e] & 0xffffffffu);
    const Packed op = pr[j];
    const double gx = op.x - mp.x, gy = op.y - mp.y, gz = op.z - mp.z, t = mp.w + op.w;
    if (gx * gx + gy * gy + gz * gz >= t * t) continue;
    const bool i_first = i < j;
    const CollisionBody<double> me = unpack(mp, vm[i]), other = unpack(op, vm[j]);
    const CollisionBody<double>& a = i_first ? me : other;
    const CollisionBody<double>& c2 = i_first ? other : me;
    const Contact<double> c = contact_between(a, c2);
    if (!resolvable_overlap(c, a, c2) ||
        !(overlap_fraction(c.overlap, a.radius, c2.radius) > kDeepOverlap))
      continue;
    const CollisionBody<double> a_new = unpack(next[i_first ? i : j], vm[i_first ? i : j]);
    const CollisionBody<double> b_new = unpack(next[i_first ? j : i], vm[i_first ? j : i]);
    const double dW =
        pair_potential_energy(a_new, b_new, G, eps2) - pair_potential_energy(a, c2, G, eps2);
    double removed = 0, unabsorbed = 0;
    const PairChange<double> dv = push_apart_compensation(a, c2, c, dW, removed, unabsorbed);
    if (i_first) {
      dvx += dv.ax, dvy += dv.ay, dvz += dv.az;
      taken += removed;
    } else {
      dvx += dv.bx, dvy += dv.by, dvz += dv.bz;
    }
  }
  const Packed v = vm[i];
  vm_next[i] = {v.x + dvx, v.y + dvy, v.z + dvz, v.w};
  lost_by_body[i] += taken;
}

/// Per body i, the sum over its candidate partners j > i of -G m_i m_j / sqrt(d^2 + eps^2)
/// (summed afterwards by a cub reduction: no order-dependent atomics).
__global__ void pair_potential(BodyArrays b, unsigned n, const unsigned long long* partners,
                               const unsigned* offset, double G, double eps2, double* w_by_body) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double w = 0;
  for (unsigned e = offset[i]; e < offset[i + 1]; ++e) {
    const unsigned j = unsigned(partners[e] & 0xffffffffu);
    if (j <= i) continue;
    w += pair_potential_energy(load(b, i), load(b, j), G, eps2);
  }
  w_by_body[i] = w;
}

__global__ void max_overlap(BodyArrays b, unsigned n, const unsigned long long* partners,
                            const unsigned* offset, unsigned long long* stats) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const CollisionBody<double> me = load(b, i);
  double worst = 0;
  for (unsigned e = offset[i]; e < offset[i + 1]; ++e) {
    const unsigned j = unsigned(partners[e] & 0xffffffffu);
    if (j <= i) continue;
    const CollisionBody<double> other = load(b, j);
    if (!within_reach(me, other, 1.0)) continue;
    const Contact<double> c = contact_between(me, other);
    if (c.overlap > 0) worst = fmax(worst, overlap_fraction(c.overlap, me.radius, other.radius));
  }
  // Non-negative doubles order like their bit patterns.
  if (worst > 0)
    atomicMax(&stats[kMaxOverlap], static_cast<unsigned long long>(__double_as_longlong(worst)));
}

double as_double(unsigned long long bits) {
  double d = 0;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

}  // namespace

CollisionStats CollisionEngine::resolve(BodyArrays b, std::size_t& n, cudaStream_t stream) {
  using Clock = std::chrono::steady_clock;
  CollisionStats stats;
  stats.searches = 0;
  if (n < 2) return stats;
  const auto start = Clock::now();
  // The gate holds bounces back (time symmetry); merges go at once (physics/timestep.hpp).
  if (options_.model == CollisionModel::Merge) b.ready_bin = -1;
  const unsigned initial_active = b.n_active;
  NBODY_CUDA_CHECK(cudaMemsetAsync(stats_.data(), 0, kStats * sizeof(unsigned long long), stream));
  std::size_t pairs = detect(b, n, kSkin, stream);
  stats.searches = 1;
  stats.candidates = pairs;
  const auto detected = Clock::now();
  const double eps2 = options_.softening * options_.softening;
  const bool energy = options_.G != 0;
  // The energy sums go through per-body terms and a cub reduction, not floating-point
  // atomics, so energy_lost has the same bits run after run (--deterministic).
  terms_.reserve(n, "collision energy terms");
  sums_.reserve(kSums, "collision energy sums");
  NBODY_CUDA_CHECK(cudaMemsetAsync(sums_.data(), 0, kSums * sizeof(double), stream));
  auto potential = [&](Sum k) {
    if (energy && pairs) {
      pair_potential<<<blocks_for(n), kThreads, 0, stream>>>(
          b, unsigned(n), directed_sorted_.data(), partner_offset_.data(), options_.G, eps2,
          terms_.data());
      NBODY_CUDA_CHECK_LAUNCH("collisions pair_potential");
      sum_terms(n, k, stream);
    }
  };
  double merge_loss = 0;

  if (options_.model == CollisionModel::Bounce) {
    potential(kSumPotentialBefore);
    NBODY_CUDA_CHECK(
        cudaMemsetAsync(terms_.data(), 0, n * sizeof(double), stream));  // kinetic lost per body
    // positions, velocities, next positions, next velocities (the compensation's)
    packed_.reserve(4 * n, "collision pass state");
    Packed* pr = packed_.data();
    Packed* vm = pr + n;
    Packed* next = vm + n;
    Packed* vm_next = next + n;
    choice_.reserve(n, "collision choices");
    pack_bodies<<<blocks_for(n), kThreads, 0, stream>>>(b, unsigned(n), pr, vm);
    NBODY_CUDA_CHECK_LAUNCH("collisions pack_bodies");
    for (int pass = 0; pass < options_.iterations && pairs > 0; ++pass) {
      // Velocities: kImpulseRounds matchings of approaching contacts; positions: one
      // Jacobi push-apart (resolve_bounce's order, as on the CPU: impulse, then separation).
      for (int round = 0; round < kImpulseRounds; ++round) {
        choose_approaching<<<blocks_for(n), kThreads, 0, stream>>>(
            pr, vm, unsigned(n), directed_sorted_.data(), partner_offset_.data(), choice_.data());
        NBODY_CUDA_CHECK_LAUNCH("collisions choose_approaching");
        impulse_pairs<<<blocks_for(n), kThreads, 0, stream>>>(pr, vm, unsigned(n), choice_.data(),
                                                              options_.restitution, terms_.data());
        NBODY_CUDA_CHECK_LAUNCH("collisions impulse_pairs");
      }
      push_pass<<<blocks_for(n), kThreads, 0, stream>>>(
          pr, vm, unsigned(n), directed_sorted_.data(), partner_offset_.data(), pass == 0, energy,
          next, stats_.data());
      NBODY_CUDA_CHECK_LAUNCH("collisions push_pass");
      if (energy) {  // under gravity: the pushes' potential energy out of the pairs' motion
        compensate_pushes<<<blocks_for(n), kThreads, 0, stream>>>(
            pr, next, vm, unsigned(n), directed_sorted_.data(), partner_offset_.data(), options_.G,
            eps2, vm_next, terms_.data());
        NBODY_CUDA_CHECK_LAUNCH("collisions compensate_pushes");
        std::swap(vm, vm_next);
      }
      std::swap(pr, next);
      ++stats.passes;
    }
    unpack_bodies<<<blocks_for(n), kThreads, 0, stream>>>(b, unsigned(n), pr, vm);
    NBODY_CUDA_CHECK_LAUNCH("collisions unpack_bodies");
    sum_terms(n, kSumKinetic, stream);
    potential(kSumPotentialAfter);
  } else {
    choice_.reserve(n, "collision choices");
    alive_.reserve(n, "collision flags");
    unsigned long long merged = 0;
    for (int round = 0; round < options_.iterations && pairs > 0; ++round) {
      NBODY_CUDA_CHECK(cudaMemsetAsync(alive_.data(), 1, n, stream));
      choose_partner<<<blocks_for(n), kThreads, 0, stream>>>(
          b, unsigned(n), directed_sorted_.data(), partner_offset_.data(), round == 0,
          choice_.data(), stats_.data());
      NBODY_CUDA_CHECK_LAUNCH("collisions choose_partner");
      if (energy) {
        third_.reserve(n, "collision merge energy");
        merge_third_body<<<blocks_for(n), kThreads, 0, stream>>>(
            b, unsigned(n), choice_.data(), options_.dim, options_.G, eps2, third_.data());
        NBODY_CUDA_CHECK_LAUNCH("collisions merge_third_body");
      }
      merge_pairs<<<blocks_for(n), kThreads, 0, stream>>>(
          b, unsigned(n), choice_.data(), options_.dim, options_.G, eps2,
          energy ? third_.data() : nullptr, alive_.data(), terms_.data(), stats_.data());
      NBODY_CUDA_CHECK_LAUNCH("collisions merge_pairs");
      sum_terms(n, kSumMergeLoss, stream);
      NBODY_CUDA_CHECK(cudaMemcpyAsync(host_ + kMerges, stats_.data() + kMerges,
                                       2 * sizeof(unsigned long long), cudaMemcpyDeviceToHost,
                                       stream));  // kMerges and kActiveGone
      NBODY_CUDA_CHECK(cudaMemcpyAsync(host_sums_ + kSumMergeLoss, sums_.data() + kSumMergeLoss,
                                       sizeof(double), cudaMemcpyDeviceToHost, stream));
      NBODY_CUDA_CHECK(cudaStreamSynchronize(stream));
      merge_loss += host_sums_[kSumMergeLoss];  // rounds in order: the same sum every run
      ++stats.passes;
      if (host_[kMerges] == merged) break;  // nothing overlaps any more
      merged = host_[kMerges];
      n = compact(b, n, stream);
      // The active bodies stay first (a stable compaction): those merged away leave.
      if (b.n_active != 0xffffffffu) b.n_active = unsigned(initial_active - host_[kActiveGone]);
      pairs = detect(b, n, kSkin, stream);
      ++stats.searches;
    }
  }
  if (pairs > 0) {
    max_overlap<<<blocks_for(n), kThreads, 0, stream>>>(b, unsigned(n), directed_sorted_.data(),
                                                        partner_offset_.data(), stats_.data());
    NBODY_CUDA_CHECK_LAUNCH("collisions max_overlap");
  }
  NBODY_CUDA_CHECK(cudaMemcpyAsync(host_, stats_.data(), kStats * sizeof(unsigned long long),
                                   cudaMemcpyDeviceToHost, stream));
  NBODY_CUDA_CHECK(cudaMemcpyAsync(host_sums_, sums_.data(), kSums * sizeof(double),
                                   cudaMemcpyDeviceToHost, stream));
  NBODY_CUDA_CHECK(cudaStreamSynchronize(stream));
  stats.contacts = host_[kContacts];
  stats.merges = host_[kMerges];
  stats.active_merged = host_[kActiveGone];
  stats.max_overlap = as_double(host_[kMaxOverlap]);
  stats.energy_lost = options_.model == CollisionModel::Bounce
                          ? host_sums_[kSumKinetic] + host_sums_[kSumPotentialBefore] -
                                host_sums_[kSumPotentialAfter]
                          : merge_loss;
  stats.detect_seconds = std::chrono::duration<double>(detected - start).count();
  stats.resolve_seconds = std::chrono::duration<double>(Clock::now() - detected).count();
  return stats;
}

std::size_t CollisionEngine::compact(BodyArrays b, std::size_t n, cudaStream_t stream) {
  compact_.reserve(n, "collision compaction");
  total_.reserve(1, "collision survivors");
  const auto items = static_cast<long long>(n);
  std::size_t bytes = 0;
  NBODY_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, bytes, b.x, alive_.data(), compact_.data(),
                                              total_.data(), items, stream));
  scratch(bytes);
  for (double* a : {b.x, b.y, b.z, b.vx, b.vy, b.vz, b.m, b.r, b.ax, b.ay, b.az}) {
    if (!a) continue;
    NBODY_CUDA_CHECK(cub::DeviceSelect::Flagged(temp_.data(), bytes, a, alive_.data(),
                                                compact_.data(), total_.data(), items, stream));
    NBODY_CUDA_CHECK(
        cudaMemcpyAsync(a, compact_.data(), n * sizeof(double), cudaMemcpyDeviceToDevice, stream));
  }
  if (b.id) {  // ids are 64-bit like doubles: the same staging buffer
    auto* staged = reinterpret_cast<std::uint64_t*>(compact_.data());
    std::size_t id_bytes = 0;
    NBODY_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, id_bytes, b.id, alive_.data(), staged,
                                                total_.data(), items, stream));
    scratch(id_bytes);
    NBODY_CUDA_CHECK(cub::DeviceSelect::Flagged(temp_.data(), id_bytes, b.id, alive_.data(), staged,
                                                total_.data(), items, stream));
    NBODY_CUDA_CHECK(
        cudaMemcpyAsync(b.id, staged, n * sizeof(std::uint64_t), cudaMemcpyDeviceToDevice, stream));
  }
  if (b.bin) {  // bytes: the same staging buffer
    auto* staged = reinterpret_cast<std::uint8_t*>(compact_.data());
    std::size_t bin_bytes = 0;
    NBODY_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, bin_bytes, b.bin, alive_.data(), staged,
                                                total_.data(), items, stream));
    scratch(bin_bytes);
    NBODY_CUDA_CHECK(cub::DeviceSelect::Flagged(temp_.data(), bin_bytes, b.bin, alive_.data(),
                                                staged, total_.data(), items, stream));
    NBODY_CUDA_CHECK(cudaMemcpyAsync(b.bin, staged, n, cudaMemcpyDeviceToDevice, stream));
  }
  unsigned survivors = 0;
  NBODY_CUDA_CHECK(
      cudaMemcpyAsync(&survivors, total_.data(), sizeof survivors, cudaMemcpyDeviceToHost, stream));
  NBODY_CUDA_CHECK(cudaStreamSynchronize(stream));
  return survivors;
}

}  // namespace nbody::cuda_collisions
