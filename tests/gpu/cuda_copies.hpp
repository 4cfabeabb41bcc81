#pragma once
// The device copies of the thread "ranks" (thread_ranks.hpp) for the GPU tests of several
// processes, written once. Both directions are ordered on the stepper's stream and waited
// for: the stream is non-blocking, so a plain cudaMemcpy (default stream) would not be
// ordered with the kernels that read the gathered shares next (unpack_shares could read
// the previous exchange's bytes), and the host buffers are temporaries.
#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "nbody/error.hpp"
#include "thread_ranks.hpp"

namespace nbody::test {

inline void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string(what) + ": " + cudaGetErrorString(e));
}

inline testing::DeviceCopies cuda_copies() {
  return {[](void* to, const void* from, std::size_t bytes, void* stream) {
            const auto s = static_cast<cudaStream_t>(stream);
            cuda_check(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToHost, s),
                       "cudaMemcpyAsync to the host");
            cuda_check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
          },
          [](void* to, const void* from, std::size_t bytes, void* stream) {
            const auto s = static_cast<cudaStream_t>(stream);
            cuda_check(cudaMemcpyAsync(to, from, bytes, cudaMemcpyHostToDevice, s),
                       "cudaMemcpyAsync to the device");
            cuda_check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
          }};
}

}  // namespace nbody::test
