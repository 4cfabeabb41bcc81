#pragma once
// The loops of the initial-condition generators, on the OpenMP threads, with results that
// do not depend on the number of threads or of ranks: every body is drawn from its own
// random stream (random.hpp), each loop iteration writes only its own body, and the sums
// are exact (exact_sum.hpp), so the order of their additions does not matter.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/omp_team.hpp"
#include "ic/exact_sum.hpp"
#include "nbody/distributed.hpp"
#include "nbody/error.hpp"

namespace nbody::ic {

/// Below this many bodies a loop runs on the calling thread (starting a team costs more).
inline constexpr std::size_t kParallelMin = 4096;
/// Bodies per block of exact_sums() (the work a thread takes at a time).
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

/// The sums over i in [begin, end) of the K terms terms(i, t) sets (t is a std::array<double,
/// K>), exact and rounded once (exact_sum.hpp): the same bits for any thread count, and for
/// any split of the bodies between the ranks of `group`, which completes the sums
/// (collective; null: this process's bodies alone). What terms() throws is thrown on the
/// calling thread (before the collective).
template <std::size_t K, class Terms>
std::array<double, K> exact_sums(int threads, std::size_t begin, std::size_t end,
                                 ForceReducer* group, const Terms& terms) {
  const std::size_t n = end > begin ? end - begin : 0;
  const std::size_t blocks = (n + kSumBlock - 1) / kSumBlock;
  std::array<ExactSum, K> total{};
  [[maybe_unused]] const int team = team_size(threads);
  RegionErrors errors;
#pragma omp parallel num_threads(team) if (blocks > 1)
  {
    std::array<ExactSum, K> mine{};
#pragma omp for schedule(static)
    for (std::ptrdiff_t b = 0; b < static_cast<std::ptrdiff_t>(blocks); ++b) {
      errors.run([&] {
        const std::size_t first = begin + static_cast<std::size_t>(b) * kSumBlock;
        const std::size_t stop = std::min(end, first + kSumBlock);
        std::array<double, K> t{};
        for (std::size_t i = first; i < stop; ++i) {
          terms(i, t);
          for (std::size_t k = 0; k < K; ++k) mine[k].add(t[k]);
        }
      });
    }
#pragma omp critical(nbody_ic_exact_sums)
    for (std::size_t k = 0; k < K; ++k) total[k].add(mine[k]);
  }
  errors.rethrow();
  if (group != nullptr) {  // every rank's sums, added exactly
    ForceReducer::Bytes out(K * ExactSum::kWords * sizeof(std::int64_t));
    for (std::size_t k = 0; k < K; ++k) {
      const std::vector<std::int64_t> w = total[k].words();
      std::memcpy(out.data() + k * w.size() * sizeof(std::int64_t), w.data(),
                  w.size() * sizeof(std::int64_t));
    }
    total = {};
    for (const auto& bytes : group->all_gather(out)) {
      if (bytes.size() != out.size()) throw Error("initial conditions: a rank sent malformed sums");
      std::vector<std::int64_t> w(K * ExactSum::kWords);
      std::memcpy(w.data(), bytes.data(), bytes.size());
      for (std::size_t k = 0; k < K; ++k)
        total[k].add(ExactSum::from_words(w.data() + k * ExactSum::kWords));
    }
  }
  std::array<double, K> sums{};
  for (std::size_t k = 0; k < K; ++k) sums[k] = total[k].value();
  return sums;
}

}  // namespace nbody::ic
