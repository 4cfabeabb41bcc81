// The device allocation behind DeviceBuffer (device_buffer.cuh).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/cuda/device_buffer.cuh"
#include "nbody/build_info.hpp"
#include "nbody/error.hpp"

namespace nbody::gpu {

namespace {

/// Every live device_allocate(): its bytes and what it holds (gpu_allocations()).
struct Ledger {
  std::mutex mutex;
  std::unordered_map<void*, std::pair<std::size_t, std::string>> live;
  std::size_t total = 0, peak = 0;  // bytes live now, and the most at once
};
Ledger& ledger() {
  // Never destroyed: a DeviceBuffer that outlives main's statics still finds it.
  static Ledger* l = new Ledger;
  return *l;
}

}  // namespace

std::string bytes_text(std::size_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%zu bytes (%.2f GiB)", bytes,
                double(bytes) / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

void* device_allocate(std::size_t bytes, const char* what) {
  void* p = nullptr;
  const cudaError_t status = cudaMalloc(&p, bytes);
  if (status == cudaSuccess) {
    Ledger& l = ledger();
    const std::lock_guard<std::mutex> lock(l.mutex);
    l.live[p] = {bytes, what};
    l.total += bytes;
    l.peak = std::max(l.peak, l.total);
    return p;
  }
  cudaGetLastError();
  std::size_t free = 0, total = 0;
  cudaMemGetInfo(&free, &total);
  cudaGetLastError();
  throw Error(std::string("GPU: cannot allocate ") + what + ": needs " + bytes_text(bytes) +
              " of GPU memory, the device has " + bytes_text(free) + " free of " +
              bytes_text(total) + " (" + cudaGetErrorString(status) + ")");
}

void device_release(void* p) {
  if (p == nullptr) return;
  {
    Ledger& l = ledger();
    const std::lock_guard<std::mutex> lock(l.mutex);
    if (const auto it = l.live.find(p); it != l.live.end()) {
      l.total -= it->second.first;
      l.live.erase(it);
    }
  }
  cudaFree(p);
}

}  // namespace nbody::gpu

namespace nbody {

std::string gpu_allocations(std::size_t lines) {
  std::map<std::string, std::size_t> by_what;
  std::size_t total = 0;
  {
    gpu::Ledger& l = gpu::ledger();
    const std::lock_guard<std::mutex> lock(l.mutex);
    for (const auto& [p, entry] : l.live)
      by_what[entry.second] += entry.first, total += entry.first;
  }
  std::vector<std::pair<std::size_t, std::string>> sorted;
  for (const auto& [what, bytes] : by_what) sorted.emplace_back(bytes, what);
  std::sort(sorted.rbegin(), sorted.rend());
  char buf[160];
  std::snprintf(buf, sizeof buf, "%.3f GB in nbody's device buffers", 1e-9 * double(total));
  std::string text = buf;
  for (std::size_t k = 0; k < sorted.size() && k < lines; ++k) {
    std::snprintf(buf, sizeof buf, "\n  %8.3f GB  %s", 1e-9 * double(sorted[k].first),
                  sorted[k].second.c_str());
    text += buf;
  }
  return text;
}

GpuBufferBytes gpu_buffer_bytes() {
  gpu::Ledger& l = gpu::ledger();
  const std::lock_guard<std::mutex> lock(l.mutex);
  return {l.total, l.peak};
}

}  // namespace nbody
