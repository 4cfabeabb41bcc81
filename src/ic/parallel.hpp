#pragma once
// The loops of the initial-condition generators, on the OpenMP threads, with results that
// do not depend on the number of threads: every body is drawn from its own random stream
// (random.hpp), each loop iteration writes only its own body, and the sums are taken in
// fixed blocks of bodies in index order (never an OpenMP reduction, whose order of
// additions depends on the team).
#include <algorithm>
#include <array>
#include <cstddef>
#include <vector>

#include "core/omp_team.hpp"

namespace nbody::ic {

/// Below this many bodies a loop runs on the calling thread (starting a team costs more).
inline constexpr std::size_t kParallelMin = 4096;
/// Bodies per block of ordered_sum(): a fixed number, so the sums' bits are fixed too.
inline constexpr std::size_t kSumBlock = 4096;

/// body(i) for every i in [begin, end), spread over team_size(threads) threads (static
/// schedule: the rejection loops make bodies uneven, but only by a few draws each).
/// body(i) must write nothing but body i's data. What it throws is thrown on the calling
/// thread (the first of the team's; core/omp_team.hpp), never out of the team.
template <class Body>
void for_each_body(int threads, std::size_t begin, std::size_t end, const Body& body) {
  const std::ptrdiff_t first = static_cast<std::ptrdiff_t>(begin);
  const std::ptrdiff_t last = static_cast<std::ptrdiff_t>(end);
  [[maybe_unused]] const int team = team_size(threads);
  RegionErrors errors;
#pragma omp parallel for num_threads(team) schedule(static) if (end - begin >= kParallelMin)
  for (std::ptrdiff_t i = first; i < last; ++i)
    errors.run([&] { body(static_cast<std::size_t>(i)); });
  errors.rethrow();
}

/// The sums over i in [begin, end) of the K terms add(i, terms) adds to (terms starts at
/// zero for each block): each block of kSumBlock bodies summed in index order, possibly on
/// different threads, then the block sums added in block order. The same bits for every
/// thread count (but not those of one plain running sum). What add() throws is thrown on
/// the calling thread.
template <std::size_t K, class Add>
std::array<double, K> ordered_sum(int threads, std::size_t begin, std::size_t end, const Add& add) {
  const std::size_t n = end > begin ? end - begin : 0;
  const std::size_t blocks = (n + kSumBlock - 1) / kSumBlock;
  std::vector<std::array<double, K>> partial(blocks);
  [[maybe_unused]] const int team = team_size(threads);
  RegionErrors errors;
#pragma omp parallel for num_threads(team) schedule(static) if (blocks > 1)
  for (std::ptrdiff_t b = 0; b < static_cast<std::ptrdiff_t>(blocks); ++b) {
    errors.run([&] {
      const std::size_t first = begin + static_cast<std::size_t>(b) * kSumBlock;
      const std::size_t stop = std::min(end, first + kSumBlock);
      std::array<double, K> sum{};
      for (std::size_t i = first; i < stop; ++i) add(i, sum);
      partial[static_cast<std::size_t>(b)] = sum;
    });
  }
  errors.rethrow();
  std::array<double, K> total{};
  for (const auto& sum : partial) {
    for (std::size_t k = 0; k < K; ++k) total[k] += sum[k];
  }
  return total;
}

}  // namespace nbody::ic
