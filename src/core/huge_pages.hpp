#pragma once
// Large arrays touched for the first time are slow on the virtual machines measured: on the
// 2-core VM 0.45 GB/s with 4 KiB pages and 1.3 GB/s with 2 MiB (transparent huge) pages,
// against 27 GB/s once touched (docs/snapshots.md, "Large files"). madvise(MADV_HUGEPAGE)
// asks Linux for huge pages where its setting is "madvise"; elsewhere it changes nothing.
// It must come before the first touch: a page already faulted in stays small.
#include <cstddef>
#include <cstdint>
#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace nbody {

/// Asks for huge pages over the whole 2 MiB pages inside [data, data + bytes); arrays under
/// 32 MiB are left alone (malloc's heap, not worth a system call).
inline void advise_huge_pages(const void* data, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t kHuge = std::uintptr_t(2) << 20;
  if (data == nullptr || bytes < 16 * kHuge) return;
  const auto at = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t begin = (at + kHuge - 1) & ~(kHuge - 1), end = (at + bytes) & ~(kHuge - 1);
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data, (void)bytes;
#endif
}

/// v.reserve(n), with huge pages asked for its new memory (before anything touches it).
template <class Vector>
void reserve_huge(Vector& v, std::size_t n) {
  if (n <= v.capacity()) return;
  v.reserve(n);
  advise_huge_pages(v.data(), v.capacity() * sizeof(typename Vector::value_type));
}

}  // namespace nbody
