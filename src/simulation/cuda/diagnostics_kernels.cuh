#pragma once
// The diagnostics of the device stepper: the O(N) sums of physics/moments.hpp (and of
// m_i phi_i, the solver's potential energy) and the float64 pair potential, reduced on the device
// in a fixed order (no floating-point atomics: the same bits run after run); only scalars come
// back.
#include <cuda_runtime.h>

#include "core/cuda/device_buffer.cuh"
#include "nbody/diagnostics.hpp"
#include "nbody/distributed.hpp"
#include "simulation/cuda/device_state.cuh"

namespace nbody::cuda_resident {

/// The device memory the diagnostics reduce into, kept between calls.
struct DiagnosticsBuffers {
  gpu::DeviceBuffer<double> partial, result;
  gpu::PinnedBuffer<double> result_host;
};

/// Energies, momenta and centre of mass of the state (G and softening of the run), the
/// potential energy by `method`: Exact (the float64 pair sum, O(N^2)), Solver (1/2 sum
/// m_i phi_i from `phi`, the solver's potentials, N values, G included) or Off (none);
/// synchronises the stream. With `sum_over` (a decomposed run: collective) the sums of
/// every process's bodies (Solver or Off; Exact is refused: the pair sum needs every body).
[[nodiscard]] Diagnostics device_diagnostics(const State& s, double G, double softening,
                                             EnergyMethod method, const double* phi,
                                             DiagnosticsBuffers& buffers, cudaStream_t stream,
                                             ForceReducer* sum_over = nullptr);

}  // namespace nbody::cuda_resident
