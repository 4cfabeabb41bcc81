#pragma once
// What device_domain.cu (bounds, keys), device_cuts.cu (cuts) and device_migration.cu (the
// moves) share:
// the bodies' arrays as raw pointers for the kernels, a migration record's size, the launch
// shape and the room left in buffers. Only those two files include it.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "parallel/cuda/device_domain.cuh"

namespace nbody::parallel::domain_detail {

inline constexpr int kRecord = kMigratedDoubles + 2;  // doubles, id, work: 104 bytes a body

/// Raw pointers of DeviceBodies for the kernels.
struct Fields {
  double* d[kMigratedDoubles];
  std::uint64_t* id;
  float* work;
};

inline Fields fields(const DeviceBodies& b) {
  Fields f{};
  for (int k = 0; k < kMigratedDoubles; ++k)
    f.d[k] = b.doubles[std::size_t(k)] ? b.doubles[std::size_t(k)]->data() : nullptr;
  f.id = b.id->data();
  f.work = b.work ? b.work->data() : nullptr;
  return f;
}

/// Room for n items and a little more: counts change by a few each step, and a reserve()
/// that grows reallocates (a device synchronisation and a large cudaMalloc every step).
/// 1/64 more: once the cuts settle a rank's count moves by thousands a step, and a re-cut
/// by the imbalance it mends (a few %); every byte here is a byte a body on the GPU.
inline std::size_t roomy(std::size_t n) {
  return n + n / 64 + 1024;
}

/// balance() (domain.hpp) of n keys on the device, their costs scale x work (device_cuts.cu;
/// work null or scale 0: one per body), with histograms summed on the device. Collective.
DomainCuts balance_on_device(const std::uint64_t* keys, const float* work, std::size_t n,
                             double scale, int dim, ForceReducer& comm,
                             const BalanceOptions& options, CutScratch& scratch,
                             cudaStream_t stream);

inline unsigned blocks(std::size_t n) {
  return unsigned(std::max<std::size_t>((n + 255) / 256, 1));
}

}  // namespace nbody::parallel::domain_detail
