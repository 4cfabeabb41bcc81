// gpu::HostDownload (core/cuda/host_download.cuh): copies through pinned chunks land every
// byte where they belong, for sizes around the chunk's (none, one byte, a chunk less one, a
// chunk, several and a half) and several copies crossing chunks together; and the run waits
// for the stream's earlier work. Skipped, saying so, without a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "backend_test.hpp"
#include "core/cuda/device_buffer.cuh"
#include "core/cuda/host_download.cuh"

namespace nbody {
namespace {

TEST(HostDownload, EveryByteLandsWhereItBelongs) {
  NBODY_SKIP_WITHOUT_GPU();
  constexpr std::size_t kChunk = 4096;
  gpu::HostDownload download(kChunk);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  const std::vector<std::vector<std::size_t>> cases = {
      {0}, {1}, {kChunk - 1}, {kChunk}, {7 * kChunk / 2}, {3, kChunk + 5, 0, 9 * kChunk + 1, 17}};
  for (const auto& sizes : cases) {
    std::vector<std::vector<unsigned char>> want, got;
    std::vector<gpu::DeviceBuffer<unsigned char>> device(sizes.size());
    std::vector<gpu::HostCopy> copies;
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      std::vector<unsigned char> bytes(sizes[k]);
      for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = (unsigned char)(i * 131 + k * 7);
      device[k].reserve(std::max<std::size_t>(sizes[k], 1), "test bytes");
      // Written on the stream: the download must wait for it.
      if (!bytes.empty()) {
        ASSERT_EQ(cudaMemcpyAsync(device[k].data(), bytes.data(), bytes.size(),
                                  cudaMemcpyHostToDevice, stream),
                  cudaSuccess);
      }
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);  // `bytes` is pageable and local
      want.push_back(bytes);
      got.emplace_back(sizes[k], 0xAB);
    }
    for (std::size_t k = 0; k < sizes.size(); ++k)
      copies.push_back({got[k].data(), device[k].data(), sizes[k]});
    download.run(copies, stream);
    for (std::size_t k = 0; k < sizes.size(); ++k)
      EXPECT_EQ(got[k], want[k]) << "copy " << k << " of " << sizes.size();
  }
  // A memset queued just before on the stream: the run waits for it.
  gpu::DeviceBuffer<unsigned char> late;
  late.reserve(5 * kChunk, "test bytes");
  ASSERT_EQ(cudaMemsetAsync(late.data(), 0x5C, 5 * kChunk, stream), cudaSuccess);
  std::vector<unsigned char> out(5 * kChunk, 0);
  download.run({{out.data(), late.data(), out.size()}}, stream);
  EXPECT_EQ(out, std::vector<unsigned char>(5 * kChunk, 0x5C));
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace nbody
