#pragma once
// LSD radix sort of (key, index) pairs by key: the CPU tree's Morton keys and the collision
// grid's cell keys.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace nbody {

/// Sorts `a` by key over the low `key_bits` bits, 11-bit digits, skipping passes in which
/// every key has the same digit. Stable: equal keys keep index order, so the result is
/// deterministic. ~4x faster than std::sort at N = 1e5 (63-bit Morton keys); short keys
/// (the grid's ~18 bits) take two passes.
inline void radix_sort(std::vector<std::pair<std::uint64_t, std::uint32_t>>& a,
                       std::vector<std::pair<std::uint64_t, std::uint32_t>>& tmp, int key_bits) {
  constexpr int kDigit = 11;
  constexpr std::size_t kBuckets = std::size_t(1) << kDigit;
  if (a.size() < 2) return;
  tmp.resize(a.size());
  std::vector<std::size_t> count(kBuckets);
  for (int shift = 0; shift < key_bits; shift += kDigit) {
    std::fill(count.begin(), count.end(), 0);
    for (const auto& e : a) ++count[(e.first >> shift) & (kBuckets - 1)];
    if (count[(a.front().first >> shift) & (kBuckets - 1)] == a.size()) continue;
    std::size_t sum = 0;
    for (auto& c : count) sum += std::exchange(c, sum);
    for (const auto& e : a) tmp[count[(e.first >> shift) & (kBuckets - 1)]++] = e;
    a.swap(tmp);
  }
}

}  // namespace nbody
