#pragma once
// Device and pinned host arrays that only grow, and the device allocation they share,
// whose error says how much was asked for and how much the device has.
#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <utility>

#include "core/cuda/cuda_check.cuh"

namespace nbody::gpu {

/// "12345 bytes (0.00 GiB)".
std::string bytes_text(std::size_t bytes);

/// cudaMalloc that says how much was asked for and how much the device has free: throws
/// nbody::Error naming `what` when the allocation fails.
void* device_allocate(std::size_t bytes, const char* what);
/// cudaFree of what device_allocate() gave (null: nothing).
void device_release(void* p);

/// A device array that only grows.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { device_release(data_); }
  void reserve(std::size_t count, const char* what) {
    if (count <= capacity_) return;
    device_release(data_);
    data_ = nullptr;
    capacity_ = 0;
    data_ = static_cast<T*>(device_allocate(count * sizeof(T), what));
    capacity_ = count;
  }
  /// reserve() that keeps the first `keep` elements (a device-to-device copy; synchronous).
  void grow_keeping(std::size_t count, std::size_t keep, const char* what) {
    if (count <= capacity_) return;
    T* grown = static_cast<T*>(device_allocate(count * sizeof(T), what));
    if (keep > 0 && data_) {
      // Synchronous on both sides: the copy runs on the legacy stream, which neither waits for
      // the writers of data_ on non-blocking streams nor makes their next kernels wait for it.
      cudaError_t e = cudaDeviceSynchronize();
      if (e == cudaSuccess)
        e = cudaMemcpy(grown, data_, keep * sizeof(T), cudaMemcpyDeviceToDevice);
      if (e == cudaSuccess) e = cudaDeviceSynchronize();
      if (e != cudaSuccess) {
        device_release(grown);
        throw_cuda_error(e, what);
      }
    }
    device_release(data_);
    data_ = grown;
    capacity_ = count;
  }
  [[nodiscard]] T* data() const { return data_; }
  [[nodiscard]] std::size_t capacity() const { return capacity_; }
  /// Trades arrays with `other` (a double buffer's halves after a sort that ended in either).
  void swap(DeviceBuffer& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(capacity_, other.capacity_);
  }
  /// Gives the memory back (after a one-off peak; the next reserve() allocates again).
  void release() {
    device_release(data_);
    data_ = nullptr;
    capacity_ = 0;
  }

 private:
  T* data_ = nullptr;
  std::size_t capacity_ = 0;
};

/// A pinned host array that only grows (faster transfers than pageable memory).
template <class T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() { cudaFreeHost(data_); }
  void reserve(std::size_t count) {
    if (count <= capacity_) return;
    cudaFreeHost(data_);
    data_ = nullptr;
    capacity_ = 0;
    NBODY_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&data_), count * sizeof(T)));
    capacity_ = count;
  }
  [[nodiscard]] T* data() const { return data_; }

 private:
  T* data_ = nullptr;
  std::size_t capacity_ = 0;
};

}  // namespace nbody::gpu
