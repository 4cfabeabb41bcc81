// gpu_devices() through the CUDA runtime. A machine without a driver or GPU is not an
// error here: callers decide (e.g. --device gpu fails with the reason).
#include <cuda_runtime.h>

#include "nbody/build_info.hpp"

namespace nbody {

std::vector<GpuDevice> gpu_devices(std::string* reason) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    if (reason) *reason = std::string("no usable CUDA device: ") + cudaGetErrorString(status);
    cudaGetLastError();  // clear the sticky error so later calls start clean
    return {};
  }
  std::vector<GpuDevice> devices;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    devices.push_back({i, prop.name, prop.major, prop.minor,
                       double(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0),
                       prop.multiProcessorCount});
  }
  if (devices.empty() && reason) *reason = "no CUDA device found";
  return devices;
}

std::size_t gpu_memory_used() {
  std::size_t free = 0, total = 0;
  if (cudaSetDevice(gpu_in_use()) != cudaSuccess || cudaMemGetInfo(&free, &total) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return total - free;
}

}  // namespace nbody
