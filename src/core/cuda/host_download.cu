#include "core/cuda/host_download.cuh"

#include <algorithm>

#include "core/cuda/cuda_check.cuh"
#include "core/parallel_copy.hpp"
#include "nbody/error.hpp"

namespace nbody::gpu {

HostDownload::HostDownload(std::size_t chunk) : chunk_(std::max<std::size_t>(chunk, 1)) {}

HostDownload::~HostDownload() {
  for (cudaEvent_t e : copied_)
    if (e) cudaEventDestroy(e);
}

void HostDownload::run(const std::vector<HostCopy>& copies, cudaStream_t stream) {
  struct Chunk {
    unsigned char* host;
    const unsigned char* device;
    std::size_t bytes;
  };
  std::vector<Chunk> chunks;
  std::size_t total = 0;
  for (const HostCopy& c : copies) {
    total += c.bytes;
    for (std::size_t at = 0; at < c.bytes; at += chunk_)
      chunks.push_back({static_cast<unsigned char*>(c.host) + at,
                        static_cast<const unsigned char*>(c.device) + at,
                        std::min(chunk_, c.bytes - at)});
  }
  auto straight = [&] {
    for (const HostCopy& c : copies)
      if (c.bytes > 0)
        NBODY_CUDA_CHECK(
            cudaMemcpyAsync(c.host, c.device, c.bytes, cudaMemcpyDeviceToHost, stream));
    NBODY_CUDA_CHECK(cudaStreamSynchronize(stream));
  };
  if (total < 2 * chunk_) return straight();
  try {
    staging_.reserve(kSlots * chunk_);
  } catch (const Error&) {  // no pinned memory to spare: the driver's own staging
    return straight();
  }
  for (cudaEvent_t& e : copied_)
    if (!e) NBODY_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  auto queue = [&](std::size_t k) {
    const int slot = int(k % kSlots);
    NBODY_CUDA_CHECK(cudaMemcpyAsync(staging_.data() + std::size_t(slot) * chunk_, chunks[k].device,
                                     chunks[k].bytes, cudaMemcpyDeviceToHost, stream));
    NBODY_CUDA_CHECK(cudaEventRecord(copied_[slot], stream));
  };
  for (std::size_t k = 0; k < std::min<std::size_t>(kSlots, chunks.size()); ++k) queue(k);
  for (std::size_t k = 0; k < chunks.size(); ++k) {
    const int slot = int(k % kSlots);
    NBODY_CUDA_CHECK(cudaEventSynchronize(copied_[slot]));
    parallel_copy(chunks[k].host, staging_.data() + std::size_t(slot) * chunk_, chunks[k].bytes);
    if (k + kSlots < chunks.size()) queue(k + kSlots);
  }
}

}  // namespace nbody::gpu
