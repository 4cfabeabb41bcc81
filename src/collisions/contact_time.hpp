#pragma once
// How far a step of a self-sizing integrator (IAS15) may go before two bodies with radii
// could pass through each other unseen. IAS15 sizes its steps by the forces alone: with no
// forces (G = 0, or bodies far apart) its step grows 4x at a time, and the collision search
// after the step, which looks for overlaps, never sees two bodies that crossed inside it.
#include <cmath>
#include <cstddef>
#include <limits>

#include "nbody/particles.hpp"

namespace nbody::collisions {

/// The longest step after which no pair of approaching bodies can have gone further than an
/// overlap of `overshoot` times the smaller radius: over all pairs apart and approaching,
/// (d - (ri + rj) + overshoot min(ri, rj)) / |v_i - v_j| (straight lines: the distance
/// falls by at most |v_i - v_j| t). A step of that length ends with a head-on pair
/// overlapping by that fraction, which the search then finds, so the steps do not shrink
/// without end near a contact (a pair that only grazes takes ~sqrt(2 / overshoot) such
/// steps past its closest approach). Infinite when no pair approaches. O(N^2): for the few
/// bodies IAS15 is for.
inline double time_to_nearest_contact(const ParticleSystem& ps, double overshoot) {
  double best = std::numeric_limits<double>::infinity();
  if (!ps.has_radii()) return best;
  const std::size_t n = ps.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (!(ps.radius[i] > 0)) continue;
    for (std::size_t j = i + 1; j < n; ++j) {
      if (!(ps.radius[j] > 0)) continue;
      const double dx = ps.x[j] - ps.x[i], dy = ps.y[j] - ps.y[i], dz = ps.z[j] - ps.z[i];
      const double ux = ps.vx[j] - ps.vx[i], uy = ps.vy[j] - ps.vy[i], uz = ps.vz[j] - ps.vz[i];
      if (dx * ux + dy * uy + dz * uz >= 0) continue;  // apart, or not approaching
      const double reach = ps.radius[i] + ps.radius[j];
      const double d = std::sqrt(dx * dx + dy * dy + dz * dz);
      if (d <= reach) continue;  // in contact already: the search's business
      const double speed = std::sqrt(ux * ux + uy * uy + uz * uz);
      const double gap = d - reach + overshoot * std::fmin(ps.radius[i], ps.radius[j]);
      best = std::fmin(best, gap / speed);
    }
  }
  return best;
}

}  // namespace nbody::collisions
