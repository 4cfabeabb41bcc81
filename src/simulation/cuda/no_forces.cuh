#pragma once
// The forces of no gravity on the device (--gravity none, or G = 0): out() all zeros, the
// potentials too, at the cost of one memset instead of a force sum multiplied by 0.
#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/device_buffer.cuh"
#include "gravity/cuda/device_forces.cuh"

namespace nbody::cuda_resident {

template <class Real>
class NoForces final : public cuda_gravity::DeviceForces<Real> {
 public:
  [[nodiscard]] std::size_t padded(std::size_t n) const override { return n; }
  void reserve(std::size_t n) override {
    bodies_.reserve(n, "bodies");
    out_.reserve(n, "forces");
  }
  [[nodiscard]] gpu::Vec4<Real>* bodies() const override { return bodies_.data(); }
  [[nodiscard]] gpu::Vec4<Real>* out() const override { return out_.data(); }
  void launch(std::size_t n, Real /*eps*/, cudaStream_t stream, bool /*potential*/) override {
    NBODY_CUDA_CHECK(cudaMemsetAsync(out_.data(), 0, n * sizeof(gpu::Vec4<Real>), stream));
  }
  [[nodiscard]] std::string name() const override { return "none"; }
  // Every process's share is zeros: nothing to split, nothing to sum.
  bool set_share(int, int) override { return true; }
  void exchange(ForceReducer&, std::size_t, cudaStream_t) override {}

 private:
  gpu::DeviceBuffer<gpu::Vec4<Real>> bodies_, out_;
};

}  // namespace nbody::cuda_resident
