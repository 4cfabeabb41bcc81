#pragma once
// Error checking for CUDA calls: every runtime call and every launch goes through
// NBODY_CUDA_CHECK, which throws nbody::Error with the call and cudaGetErrorString.
#include <cuda_runtime.h>

#include <string>

#include "nbody/error.hpp"

namespace nbody::gpu {

[[noreturn]] inline void throw_cuda_error(cudaError_t status, const char* what) {
  cudaGetLastError();  // clear a non-sticky error so later calls start clean
  throw Error(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(status) + " (" +
              cudaGetErrorName(status) + ")");
}

inline void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw_cuda_error(status, what);
}

}  // namespace nbody::gpu

#define NBODY_CUDA_CHECK(call) ::nbody::gpu::check_cuda((call), #call)
/// After a launch: launch-configuration errors now, not at the next synchronising call.
#define NBODY_CUDA_CHECK_LAUNCH(kernel_name) \
  ::nbody::gpu::check_cuda(cudaGetLastError(), "launch of kernel " kernel_name)
