// The GPU collision engine's construction and scratch memory (see collision_engine.cuh for
// the design; detection in collision_detect.cu, resolution in collision_resolve.cu).
#include <cuda_runtime.h>
#include <cub/device/device_reduce.cuh>

#include <algorithm>

#include "collisions/cuda/collision_engine.cuh"
#include "collisions/cuda/collision_engine_shared.cuh"
#include "core/cuda/cuda_check.cuh"

namespace nbody::cuda_collisions {

CollisionEngine::CollisionEngine(const CollisionOptions& options) : options_(options) {
  validate(options_);
  bounds_.reserve(sizeof(Extent) / sizeof(double) + 1, "collision bounds");
  grid_.reserve(std::max(sizeof(Grid), sizeof(TreeFrame)) / sizeof(double) + 1, "collision grid");
  stats_.reserve(kStats, "collision statistics");
  NBODY_CUDA_CHECK(
      cudaMallocHost(reinterpret_cast<void**>(&host_), kStats * sizeof(unsigned long long)));
  NBODY_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&host_sums_), kSums * sizeof(double)));
}

CollisionEngine::~CollisionEngine() {
  cudaFreeHost(host_);
  cudaFreeHost(host_sums_);
}

void CollisionEngine::sum_terms(std::size_t n, Sum k, cudaStream_t stream) {
  std::size_t bytes = 0;
  const auto items = static_cast<long long>(n);
  NBODY_CUDA_CHECK(
      cub::DeviceReduce::Sum(nullptr, bytes, terms_.data(), sums_.data() + k, items, stream));
  scratch(bytes);
  NBODY_CUDA_CHECK(
      cub::DeviceReduce::Sum(temp_.data(), bytes, terms_.data(), sums_.data() + k, items, stream));
}

void CollisionEngine::scratch(std::size_t bytes) {
  if (bytes > temp_bytes_) {
    temp_.reserve(bytes, "collision scratch");
    temp_bytes_ = bytes;
  }
}

}  // namespace nbody::cuda_collisions
