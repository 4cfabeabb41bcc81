#pragma once
// The OpenMP team size a `threads` option asks for.
#if defined(_OPENMP)
#include <omp.h>
#endif

namespace nbody {

/// `threads` when > 0, else OpenMP's default (1 without OpenMP).
inline int team_size(int threads) {
#if defined(_OPENMP)
  return threads > 0 ? threads : omp_get_max_threads();
#else
  (void)threads;
  return 1;
#endif
}

}  // namespace nbody
