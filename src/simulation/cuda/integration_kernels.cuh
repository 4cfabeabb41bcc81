#pragma once
// The integration kernels of the device stepper: the per-body updates of
// physics/integration.hpp (the functions the CPU loops call) over the resident state,
// and the conversions between the state and the force kernels' layout.
#include <cuda_runtime.h>

#include "core/cuda/vec4.cuh"
#include "nbody/integrator.hpp"
#include "nbody/physics/integration.hpp"
#include "simulation/cuda/device_state.cuh"

namespace nbody::cuda_resident {

/// The part of the step before the force evaluation (open_step) for every body, plus the
/// largest finite |x|, |y|, |z| into *extent (as the bits of a non-negative double) for
/// the next step's position scaling.
void launch_open_step(IntegratorScheme scheme, const State& s, const StepFactors& f,
                      unsigned long long* extent, cudaStream_t stream);

/// x += v h for every body (the leapfrog's second half drift around the collision stage,
/// the block steps' drifts), with the largest finite |x|, |y|, |z| after it into *extent.
void launch_drift_extent(const State& s, double h, unsigned long long* extent, cudaStream_t stream);

/// Positions and masses into the force kernels' (x, y, z, m) layout, scaled by powers of
/// two (exact); padding bodies sit on the last body with mass 0.
template <class Real>
void launch_pack_bodies(const State& s, double position_scale, double mass_scale, unsigned n_padded,
                        gpu::Vec4<Real>* bodies, cudaStream_t stream);

/// a = G * out * acceleration_scale (the per-call solvers' unpacking, same order), then,
/// with `close`, the part of the step after the force evaluation (close_step).
template <class Real>
void launch_finish_step(IntegratorScheme scheme, bool close, const State& s,
                        const gpu::Vec4<Real>* out, double G, double acceleration_scale,
                        const StepFactors& f, cudaStream_t stream);

/// The potentials of a force evaluation asked for them: phi = G * out.w *
/// potential_scale for the n bodies (out.w: per unit G, in scaled units).
template <class Real>
void launch_store_potentials(unsigned n, const gpu::Vec4<Real>* out, double G,
                             double potential_scale, double* phi, cudaStream_t stream);

/// The tree's relative opening criterion (DeviceForces::old_accelerations): each body's
/// stored |a| times to_scaled (1 / (|G| acceleration_scale): |a| / G in the force kernels'
/// scaled units) into out.
template <class Real>
void launch_acceleration_magnitudes(const State& s, double to_scaled, Real* out,
                                    cudaStream_t stream);

/// x y z as float, interleaved, into xyz (3 n floats).
void launch_positions_to_float(const State& s, float* xyz, cudaStream_t stream);

}  // namespace nbody::cuda_resident
