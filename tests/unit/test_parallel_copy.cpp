// parallel_copy (core/parallel_copy.hpp): every byte of copies of any size, on one thread
// and on several, with pieces split at 1 MiB boundaries and a last piece shorter.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "core/parallel_copy.hpp"

namespace nbody {
namespace {

TEST(ParallelCopy, EveryByteOnAnyNumberOfThreads) {
  constexpr std::size_t kMiB = std::size_t(1) << 20;
  for (const std::size_t bytes : {std::size_t(0), std::size_t(1), kMiB - 1, kMiB, 5 * kMiB + 77}) {
    std::vector<unsigned char> from(bytes);
    for (std::size_t i = 0; i < bytes; ++i) from[i] = (unsigned char)(i * 97 + i / kMiB);
    for (const int threads : {0, 1, 2, 3}) {
      std::vector<unsigned char> to(bytes + 1, 0xEE);  // one byte past: untouched
      parallel_copy(to.data(), from.data(), bytes, threads);
      EXPECT_TRUE(std::equal(from.begin(), from.end(), to.begin())) << bytes << " " << threads;
      EXPECT_EQ(to[bytes], 0xEE) << bytes << " " << threads;
    }
  }
}

}  // namespace
}  // namespace nbody
