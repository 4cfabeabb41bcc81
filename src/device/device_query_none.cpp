// gpu_devices() for builds without CUDA.
#include "nbody/build_info.hpp"

namespace nbody {

std::vector<GpuDevice> gpu_devices(std::string* reason) {
  if (reason) *reason = "this nbody was built without CUDA (configure with -DNBODY_CUDA=ON)";
  return {};
}

std::size_t gpu_memory_used() {
  return 0;
}

std::string gpu_allocations(std::size_t) {
  return {};
}

GpuBufferBytes gpu_buffer_bytes() {
  return {};
}

}  // namespace nbody
