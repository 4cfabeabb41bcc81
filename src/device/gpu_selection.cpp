// Which GPU this process uses: 0, unless an MPI rank picked another (init_distributed).
// Plain C++ so that builds without CUDA have it too.
#include <atomic>

#include "nbody/build_info.hpp"

namespace nbody {

namespace {
std::atomic<int> g_gpu{0};
}

void use_gpu(int index) {
  g_gpu = index;
}
int gpu_in_use() {
  return g_gpu;
}

}  // namespace nbody
