// The device allocation behind DeviceBuffer (device_buffer.cuh).
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdio>
#include <string>

#include "core/cuda/device_buffer.cuh"
#include "nbody/error.hpp"

namespace nbody::gpu {

std::string bytes_text(std::size_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%zu bytes (%.2f GiB)", bytes,
                double(bytes) / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

void* device_allocate(std::size_t bytes, const char* what) {
  void* p = nullptr;
  const cudaError_t status = cudaMalloc(&p, bytes);
  if (status == cudaSuccess) return p;
  cudaGetLastError();
  std::size_t free = 0, total = 0;
  cudaMemGetInfo(&free, &total);
  cudaGetLastError();
  throw Error(std::string("GPU: cannot allocate ") + what + ": needs " + bytes_text(bytes) +
              " of GPU memory, the device has " + bytes_text(free) + " free of " +
              bytes_text(total) + " (" + cudaGetErrorString(status) + ")");
}

}  // namespace nbody::gpu
