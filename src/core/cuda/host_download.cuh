#pragma once
// Large device-to-host copies into pageable memory (a GPU rank's state for a snapshot or a
// checkpoint) at the bus's rate: chunks go into pinned staging buffers on the stream while
// threads copy the ones before out of them. cudaMemcpy into pageable memory stages through
// the driver's pinned buffers and copies them out on one thread: a snapshot of 2^30 bodies
// on 2 H200 ranks took 5.0-6.9 s for its state, 47 GB a rank (docs/snapshots.md). Plain C++
// (the GPU tests include it).
#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "core/cuda/device_buffer.cuh"

namespace nbody::gpu {

/// One copy: `bytes` from device memory to host memory.
struct HostCopy {
  void* host;
  const void* device;
  std::size_t bytes;
};

class HostDownload {
 public:
  /// chunk: the staging buffers' size (tests take small ones to cross many chunks).
  explicit HostDownload(std::size_t chunk = std::size_t(32) << 20);
  ~HostDownload();
  HostDownload(const HostDownload&) = delete;
  HostDownload& operator=(const HostDownload&) = delete;
  /// Every copy done when it returns, after the stream's earlier work. Copies of less than
  /// two chunks in all go straight (cudaMemcpyAsync, then the stream's synchronisation), and
  /// so do all where the pinned staging buffers cannot be had.
  void run(const std::vector<HostCopy>& copies, cudaStream_t stream);

 private:
  static constexpr int kSlots = 3;  // two on the bus while the host empties the third
  std::size_t chunk_;
  PinnedBuffer<unsigned char> staging_;
  cudaEvent_t copied_[kSlots] = {};
};

}  // namespace nbody::gpu
