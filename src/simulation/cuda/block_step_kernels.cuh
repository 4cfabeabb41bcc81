#pragma once
// The kernels of hierarchical (block) time steps on the device (issue #19), driven by
// device_block_steps.cuh: each body's bin from physics/timestep.hpp (the functions the
// host stepper calls), the kicks and drifts of physics/integration.hpp (exact float64
// operations), and the per-substep bookkeeping: the bodies active at the next substep's
// end (cub::DeviceSelect over the body indices) and the bin histogram, which come back to
// the host together in one small copy (SubstepCounts).
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "core/cuda/vec4.cuh"
#include "nbody/physics/timestep.hpp"
#include "simulation/cuda/device_state.cuh"

namespace nbody::cuda_resident {

/// What comes back to the host once per substep (one copy).
struct SubstepCounts {
  unsigned long long next_tick;  // the end of the next substep (next_tick() of bins)
  unsigned long long extent;     // the last drift's largest finite |x|, |y|, |z| (double bits)
  unsigned long long floored;    // body steps floored at k_limit since the step began
  unsigned n_active;             // bodies active at next_tick (listed by launch_select_active)
  unsigned bins[kMaxTimestepBin + 1];  // bodies per bin
};

/// The end of the substep after tick `tick`: the earliest step end, after it, of a
/// populated bin (kTicksPerStep at most once tick < kTicksPerStep, as bin 0 ends there).
/// Host and device: both compute it from the same histogram.
__host__ __device__ inline std::uint64_t next_tick(const unsigned* bins, std::uint64_t tick) {
  std::uint64_t next = 2 * kTicksPerStep;  // no body at all
  for (int k = 0; k <= kMaxTimestepBin; ++k) {
    if (bins[k] == 0) continue;
    const std::uint64_t t = bin_ticks(k);
    const std::uint64_t end = (tick / t + 1) * t;
    if (end < next) next = end;
  }
  return next;
}

/// The constants of one step: the largest step dt, the accuracy parameter, the (physical)
/// softening of the step rule, the deepest bin allowed (bin_limit()).
struct BlockStepParams {
  double dt = 0;
  double eta = 0;
  double softening = 0;
  int k_limit = 0;
  const double* omega2 = nullptr;  // the dynamical criterion: each body's cell omega^2
};

/// The step body i wants: the dynamical criterion with p.omega2, else the acceleration one.
__device__ __forceinline__ double wanted_by(const BlockStepParams& p, unsigned i, double ax,
                                            double ay, double az, double phi) {
  return p.omega2 ? wanted_step_dynamical(p.eta, p.omega2[i], ax, ay, az, phi)
                  : wanted_step(p.eta, p.softening, ax, ay, az, phi);
}

/// The step's start for every body: bin = timestep_bin(wanted_by(a, phi)) (phi read only
/// when phi != nullptr: the unsoftened rule and the dynamical criterion), the floored ones counted
/// into counts->floored, then the opening half kick v += a dt / 2^(bin + 1).
void launch_assign_bins(const State& s, const double* phi, std::uint8_t* bin,
                        const BlockStepParams& p, SubstepCounts* counts, cudaStream_t stream);

/// x += v h for every body; counts->extent set to the largest finite |x|, |y|, |z| after it.
void launch_drift(const State& s, double h, SubstepCounts* counts, cudaStream_t stream);

/// v += sign a stage_offset(bin, tick, next, dt) for every body: merges under block steps
/// see the velocities at the collision stage's time (physics/timestep.hpp, the contacts).
void launch_move_velocities(const State& s, const std::uint8_t* bin, double dt, std::uint64_t tick,
                            std::uint64_t next, double sign, cudaStream_t stream);

/// counts->bins = the histogram of the n bins, then counts->next_tick = next_tick(bins, tick).
void launch_histogram(const std::uint8_t* bin, unsigned n, std::uint64_t tick,
                      SubstepCounts* counts, cudaStream_t stream);

/// Scratch bytes launch_select_active needs for n bodies.
std::size_t select_active_bytes(unsigned n);
/// active = the indices i < n (ascending) of the bodies whose bin ends a step at
/// counts->next_tick, their number in counts->n_active.
void launch_select_active(const std::uint8_t* bin, unsigned n, SubstepCounts* counts,
                          unsigned* active, void* temp, std::size_t temp_bytes,
                          cudaStream_t stream);

/// After the force evaluation of the active bodies at tick `tick`, for each listed body i:
/// a = G * out[i] * acceleration_scale (the rounding of launch_finish_step), phi = G *
/// out[i].w * potential_scale when phi != nullptr (stored), the closing half kick with its
/// old bin; then, with `rebin` (tick < kTicksPerStep), its new bin (wanted_step,
/// timestep_bin, next_bin; floored ones counted; a body marked in contact at least
/// `deepest`, the substep's deepest bin: contact_bin) and the opening half kick with it.
template <class Real>
void launch_finish_substep(const State& s, const gpu::Vec4<Real>* out, const unsigned* active,
                           unsigned n_active, double G, double acceleration_scale,
                           double potential_scale, double* phi, std::uint8_t* bin,
                           const BlockStepParams& p, std::uint64_t tick, bool rebin, int deepest,
                           SubstepCounts* counts, cudaStream_t stream);

}  // namespace nbody::cuda_resident
