#pragma once
// The diagnostics of the device stepper: the O(N) sums of physics/moments.hpp and the
// float64 pair potential, reduced on the device in a fixed order (no floating-point
// atomics: the same bits run after run); only scalars come back.
#include <cuda_runtime.h>

#include "gravity/cuda/direct_kernels.cuh"
#include "nbody/diagnostics.hpp"
#include "simulation/cuda/device_state.cuh"

namespace nbody::cuda_resident {

/// The device memory the diagnostics reduce into, kept between calls.
struct DiagnosticsBuffers {
  cuda_direct::DeviceBuffer<double> partial, result;
  cuda_direct::PinnedBuffer<double> result_host;
};

/// Energies, momenta and centre of mass of the state (G and softening of the run);
/// synchronises the stream.
[[nodiscard]] Diagnostics device_diagnostics(const State& s, double G, double softening, DiagnosticsBuffers& buffers,
                                             cudaStream_t stream);

}  // namespace nbody::cuda_resident
