#pragma once
// The CUDA direct sum behind GravitySolver. Plain C++: no CUDA types, so host code and
// CPU-only builds include it freely. Defined in cuda/direct_cuda.cu when the build has
// CUDA, else in direct_cuda_none.cpp (where every function throws nbody::Error).
#include <cstddef>
#include <memory>

#include "nbody/gravity.hpp"

namespace nbody {

/// The GPU direct-sum solver for options.kernel (Naive | Tiled | Fast), options.precision
/// (Float or Double; Auto means Double), options.block_size (0 = the kernel's default).
/// Throws nbody::Error for a bad kernel or block size, a build without CUDA, or no usable
/// device (naming the reason).
[[nodiscard]] std::unique_ptr<GravitySolver> make_direct_cuda(const GravityOptions& options);

namespace cuda_direct {

/// Most bodies the CUDA direct sum takes (indices are 32-bit on the device).
inline constexpr std::size_t kMaxBodies = std::size_t(1) << 31;

/// The checks compute_accelerations() makes before it allocates: n <= kMaxBodies, and the
/// device memory n bodies need (in `precision`) against what the device has free.
/// Throws nbody::Error saying what was needed and what is available.
void check_capacity(std::size_t n, Precision precision);

/// Allocates `bytes` of device memory through the solver's allocator and frees it again:
/// throws nbody::Error (bytes needed, bytes free) where the solver would. For tests.
void try_device_allocation(std::size_t bytes);

}  // namespace cuda_direct
}  // namespace nbody
