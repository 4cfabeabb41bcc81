#pragma once
// OpenMP team sizes and thresholds shared by the collision code.
#include <cstddef>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace nbody::collisions {

// Simple per-body loops (box, keys, gather, write-back) cost a few ns per body: a thread
// team pays off only for large N (and on a loaded machine its barriers can stall for
// milliseconds).
constexpr std::size_t kParallelLoopMin = 50000;

/// Threads to use: `threads` when > 0, else OpenMP's default (1 without OpenMP).
inline int team_size(int threads) {
#if defined(_OPENMP)
  return threads > 0 ? threads : omp_get_max_threads();
#else
  (void)threads;
  return 1;
#endif
}

}  // namespace nbody::collisions
