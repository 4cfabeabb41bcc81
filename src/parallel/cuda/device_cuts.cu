// The cuts of a GPU rank's key line (device_domain.cuh, step 3): balance() of domain.hpp, its
// histogram rounds summed on the device, so that only the histograms (4096 buckets in the
// first round, 512 a pending cut after it) cross the bus and the all-reduce, not the keys and
// costs of every body (12 bytes a body: ~370 ms a cut at 64M bodies on 2 H200s, with the
// host's loop over them).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "parallel/cuda/device_domain_detail.cuh"

namespace nbody::parallel::domain_detail {

namespace {

/// Slots (doubles) a block sums in shared memory at most; larger histograms go to global
/// memory directly.
constexpr unsigned kSharedSlots = 12288;  // 96 KB: the first round's 2 x 4096 fits

/// One round over n keys: a body in cell c of `cells` (sorted, disjoint, `width` keys each)
/// adds its cost and 1 to bucket c * buckets + ((key - cells[c]) >> shift). Its cost:
/// scale x its work, or scale when that is not a finite number of at least 1 (the first
/// evaluation's bodies); 1 with scale 0 (bodies counted).
__global__ void key_histogram(const std::uint64_t* __restrict__ keys,
                              const float* __restrict__ work, unsigned n, double scale,
                              const std::uint64_t* __restrict__ cells, unsigned ncells,
                              std::uint64_t width, int shift, unsigned buckets, bool shared,
                              double* out) {
  extern __shared__ double local[];
  const unsigned slots = 2 * buckets * ncells;
  double* h = shared ? local : out;
  if (shared) {
    for (unsigned j = threadIdx.x; j < slots; j += blockDim.x) local[j] = 0;
    __syncthreads();
  }
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const std::uint64_t k = keys[i];
    unsigned lo = 0, hi = ncells;  // the first cell past k
    while (lo < hi) {
      const unsigned mid = (lo + hi) / 2;
      if (cells[mid] <= k) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    if (lo == 0 || k - cells[lo - 1] >= width) continue;
    const unsigned b = (lo - 1) * buckets + unsigned((k - cells[lo - 1]) >> shift);
    double cost = 1.0;
    if (scale > 0) {
      const float w = work[i];
      cost = (isfinite(w) && w >= 1.0f ? double(w) : 1.0) * scale;
    }
    atomicAdd(&h[2 * b], cost);
    atomicAdd(&h[2 * b + 1], 1.0);
  }
  if (shared) {
    __syncthreads();
    for (unsigned j = threadIdx.x; j < slots; j += blockDim.x)
      if (local[j] != 0) atomicAdd(&out[j], local[j]);
  }
}

class DeviceKeys final : public KeyHistogram {
 public:
  DeviceKeys(const std::uint64_t* keys, const float* work, std::size_t n, double scale,
             CutScratch& scratch, cudaStream_t stream)
      : keys_(keys), work_(work), n_(n), scale_(work ? scale : 0.0), s_(scratch), stream_(stream) {}

  void add(const std::vector<std::uint64_t>& cells, std::uint64_t width, int shift,
           std::size_t buckets, double* h) const override {
    const std::size_t slots = 2 * buckets * cells.size();
    if (slots == 0 || n_ == 0) return;
    s_.cells.reserve(cells.size(), "domain cut cells");
    s_.histogram.reserve(slots, "domain cut histogram");
    s_.host.reserve(slots);
    NBODY_CUDA_CHECK(cudaMemcpyAsync(s_.cells.data(), cells.data(),
                                     cells.size() * sizeof(std::uint64_t), cudaMemcpyHostToDevice,
                                     stream_));
    NBODY_CUDA_CHECK(cudaMemsetAsync(s_.histogram.data(), 0, slots * sizeof(double), stream_));
    static const unsigned grid = [] {
      int device = 0, sms = 1;
      NBODY_CUDA_CHECK(cudaGetDevice(&device));
      NBODY_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
      NBODY_CUDA_CHECK(cudaFuncSetAttribute(key_histogram,
                                            cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            int(kSharedSlots * sizeof(double))));
      return unsigned(2 * std::max(sms, 1));
    }();
    const bool shared = slots <= kSharedSlots;
    const unsigned blocks_needed = unsigned(std::min<std::size_t>((n_ + 255) / 256, grid));
    key_histogram<<<blocks_needed, 256, shared ? slots * sizeof(double) : 0, stream_>>>(
        keys_, work_, unsigned(n_), scale_, s_.cells.data(), unsigned(cells.size()), width, shift,
        unsigned(buckets), shared, s_.histogram.data());
    NBODY_CUDA_CHECK_LAUNCH("key_histogram");
    NBODY_CUDA_CHECK(cudaMemcpyAsync(s_.host.data(), s_.histogram.data(), slots * sizeof(double),
                                     cudaMemcpyDeviceToHost, stream_));
    NBODY_CUDA_CHECK(cudaStreamSynchronize(stream_));
    for (std::size_t j = 0; j < slots; ++j) h[j] += s_.host.data()[j];
  }
  // The costs are made here from the work, always positive; a scale that is not stops all.
  [[nodiscard]] bool bad_cost() const override { return !(scale_ >= 0 && std::isfinite(scale_)); }

 private:
  const std::uint64_t* keys_;
  const float* work_;
  std::size_t n_;
  double scale_;
  CutScratch& s_;
  cudaStream_t stream_;
};

}  // namespace

DomainCuts balance_on_device(const std::uint64_t* keys, const float* work, std::size_t n,
                             double scale, int dim, ForceReducer& comm,
                             const BalanceOptions& options, CutScratch& scratch,
                             cudaStream_t stream) {
  return balance(DeviceKeys(keys, work, n, scale, scratch, stream), dim, comm, options);
}

}  // namespace nbody::parallel::domain_detail
