#pragma once
// std::vector with cache-line (64-byte) alignment, for the arrays the SIMD kernels read
// with vector loads (the direct sum's packed bodies, the tree's interaction lists).
#include <cstddef>
#include <new>
#include <vector>

namespace nbody {

inline constexpr std::size_t kCacheLineAlignment = 64;

template <class T>
struct AlignedAllocator {
  using value_type = T;
  AlignedAllocator() = default;
  template <class U>
  AlignedAllocator(const AlignedAllocator<U>&) noexcept {}  // rebinding; implicit on purpose
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{kCacheLineAlignment}));
  }
  void deallocate(T* p, std::size_t) noexcept {
    ::operator delete (p, std::align_val_t{kCacheLineAlignment});
  }
  friend bool operator==(const AlignedAllocator&, const AlignedAllocator&) { return true; }
};

template <class T>
using AlignedVector = std::vector<T, AlignedAllocator<T>>;

}  // namespace nbody
