#pragma once
// What this binary was built with and what the machine offers (for --version,
// benchmark labels and error messages).
#include <cstddef>
#include <string>
#include <vector>

namespace nbody {

struct GpuDevice {
  int index = 0;
  std::string name;
  int compute_major = 0, compute_minor = 0;
  double memory_gib = 0;
  int multiprocessors = 0;
};

struct BuildInfo {
  std::string version;
  std::string compiler;
  bool cuda = false;      // built with CUDA
  bool openmp = false;    // built with OpenMP
  int max_threads = 1;    // OpenMP threads available
  std::string cpu_model;  // from /proc/cpuinfo when readable
};

[[nodiscard]] BuildInfo build_info();

/// CUDA devices visible to this process; empty (with *reason set) when the build has no
/// CUDA, or no driver or device is present.
[[nodiscard]] std::vector<GpuDevice> gpu_devices(std::string* reason = nullptr);

/// The GPU this process computes on (default 0; each MPI rank picks its own, see
/// init_distributed in distributed.hpp). Every CUDA path selects it with cudaSetDevice.
void use_gpu(int index);
[[nodiscard]] int gpu_in_use();
/// Bytes of memory in use on the GPU this process computes on (the device's total minus
/// its free memory: every process's allocations and the CUDA context's); 0 without CUDA.
[[nodiscard]] std::size_t gpu_memory_used();
/// What this process's nbody device buffers hold now: the total, then the `lines` largest
/// by what they hold (all threads' together); "" without CUDA.
[[nodiscard]] std::string gpu_allocations(std::size_t lines = 12);
/// The bytes of this process's nbody device buffers (all threads' together): held now, and
/// the most held at once since the process started; zeros without CUDA.
struct GpuBufferBytes {
  std::size_t now = 0, peak = 0;
};
[[nodiscard]] GpuBufferBytes gpu_buffer_bytes();

}  // namespace nbody
