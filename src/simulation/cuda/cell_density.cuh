#pragma once
// The neighbourhood density of the dynamical time-step criterion on the device: the host's
// CellDensity (integrators/cell_density.hpp) step for step, with the per-body arithmetic
// of integrators/cell_density_rule.hpp: the finite coordinates' bounding cube (a cub
// reduction with the trees' gpu::MergeBoxes), Morton keys, a radix sort, the masses' prefix sums in
// key order, each run's common level, then each body's cell. Equal positions give the host's cells;
// the mass sums are added in another order (a scan), so omega^2 may differ in the last bits.
#include <cuda_runtime.h>

#include <cstdint>

#include "core/cuda/device_buffer.cuh"
#include "simulation/cuda/device_state.cuh"

namespace nbody::cuda_resident {

class DeviceCellDensity {
 public:
  /// omega2[i] (device, s.n values) for every body of s.
  void compute(const State& s, int dim, double G, double softening, double* omega2,
               cudaStream_t stream);

 private:
  gpu::DeviceBuffer<unsigned char> bounds_;  // the bodies' box (cell_density.cu's Box)
  gpu::DeviceBuffer<std::uint64_t> keys_, keys_sorted_;
  gpu::DeviceBuffer<unsigned> index_, index_sorted_;
  gpu::DeviceBuffer<double> mass_, mass_before_;
  gpu::DeviceBuffer<std::uint8_t> run_level_;
  gpu::DeviceBuffer<unsigned char> temp_;  // cub scratch
};

}  // namespace nbody::cuda_resident
