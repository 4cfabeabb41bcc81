#pragma once
// OpenMP team sizes and thresholds shared by the collision code.
#include <cstddef>

#include "core/omp_team.hpp"

namespace nbody::collisions {

// Simple per-body loops (box, keys, gather, write-back) cost a few ns per body: a thread
// team pays off only for large N (and on a loaded machine its barriers can stall for
// milliseconds).
constexpr std::size_t kParallelLoopMin = 50000;

using nbody::team_size;  // core/omp_team.hpp

}  // namespace nbody::collisions
