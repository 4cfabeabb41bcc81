// The GPU ranks' cuts (parallel/cuda/device_cuts.cu): balance() with its histogram rounds
// summed on the device gives the host's cuts. The costs are whole numbers of microseconds, so
// every sum is exact in either order and the cuts must agree bit for bit: 3 thread ranks, each
// with its own share of a clustered key line (a dense core and a sparse halo), by count and by
// work, with and without a memory cap; 2D keys too. Skipped, saying so, without a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "backend_test.hpp"
#include "core/cuda/device_buffer.cuh"
#include "gpu/cuda_copies.hpp"
#include "parallel/cuda/device_domain_detail.cuh"
#include "parallel/domain.hpp"
#include "thread_ranks.hpp"

namespace nbody {
namespace {

struct Share {
  std::vector<std::uint64_t> keys;
  std::vector<float> work;
};

// Rank p's keys: 3/4 of them in a small core of the key line, the rest anywhere, and a few
// bodies sharing one key; work 1-200 interactions, more in the core.
Share share(int p, std::size_t n, int dim) {
  std::mt19937_64 rng(1000 + std::uint64_t(p));
  const std::uint64_t end = std::uint64_t(1) << parallel::key_bits(dim);
  std::uniform_int_distribution<std::uint64_t> anywhere(0, end - 1),
      core(end / 3, end / 3 + end / 64);
  Share s;
  for (std::size_t i = 0; i < n; ++i) {
    const bool dense = i % 4 != 0;
    s.keys.push_back(i % 97 == 0 ? end / 2 : dense ? core(rng) : anywhere(rng));
    s.work.push_back(float(1 + rng() % (dense ? 200 : 20)));
  }
  return s;
}

parallel::DomainCuts on_device(const Share& s, double scale, int dim, ForceReducer& comm,
                               const parallel::BalanceOptions& o) {
  gpu::DeviceBuffer<std::uint64_t> keys;
  gpu::DeviceBuffer<float> work;
  keys.reserve(s.keys.size(), "test keys");
  work.reserve(s.work.size(), "test work");
  test::cuda_check(
      cudaMemcpy(keys.data(), s.keys.data(), s.keys.size() * 8, cudaMemcpyHostToDevice),
      "keys to the device");
  test::cuda_check(
      cudaMemcpy(work.data(), s.work.data(), s.work.size() * 4, cudaMemcpyHostToDevice),
      "work to the device");
  parallel::CutScratch scratch;
  return parallel::domain_detail::balance_on_device(keys.data(), scale > 0 ? work.data() : nullptr,
                                                    s.keys.size(), scale, dim, comm, o, scratch,
                                                    nullptr);
}

parallel::DomainCuts on_host(const Share& s, double scale, int dim, ForceReducer& comm,
                             const parallel::BalanceOptions& o) {
  std::vector<double> cost;
  if (scale > 0)
    for (float w : s.work) cost.push_back(double(w) * scale);
  return parallel::balance(s.keys, cost, dim, comm, o);
}

TEST(GpuDomainCuts, DeviceHistogramsGiveTheHostsCuts) {
  NBODY_SKIP_WITHOUT_GPU();
  constexpr int kParts = 3;
  for (int dim : {3, 2}) {
    for (double scale : {0.0, 2.0}) {
      for (std::size_t cap : {std::size_t(0), std::size_t(70000)}) {
        parallel::BalanceOptions o;
        o.tolerance = 0.01;
        o.max_bodies_per_rank = cap;
        const auto cuts = testing::run_parts<std::vector<std::vector<std::uint64_t>>>(
            kParts,
            [&](std::shared_ptr<ForceReducer> comm) {
              const Share s = share(comm->part(), 60000 + 5000 * std::size_t(comm->part()), dim);
              const auto device = on_device(s, scale, dim, *comm, o);
              const auto host = on_host(s, scale, dim, *comm, o);
              return std::vector<std::vector<std::uint64_t>>{device.first, host.first};
            },
            test::cuda_copies());
        const std::string what = "dim " + std::to_string(dim) + ", scale " + std::to_string(scale) +
                                 ", cap " + std::to_string(cap);
        for (int p = 0; p < kParts; ++p) {
          EXPECT_EQ(cuts[std::size_t(p)][0], cuts[std::size_t(p)][1]) << what << ", rank " << p;
          EXPECT_EQ(cuts[std::size_t(p)][0], cuts[0][0]) << what << ": the ranks' cuts differ";
        }
        ASSERT_EQ(cuts[0][0].size(), std::size_t(kParts + 1)) << what;
        EXPECT_LT(cuts[0][0][1], cuts[0][0][2]) << what << ": an empty piece";
      }
    }
  }
}

}  // namespace
}  // namespace nbody
