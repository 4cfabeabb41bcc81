// Two equal-mass Plummer spheres on a parabolic encounter: the standard merger /
// flyby test. Total mass 1; each cluster has mass 1/2, the same radii as the single
// plummer model (Henon length units) and velocities x sqrt(1/2), which keeps each
// cluster in virial equilibrium on its own.
#include <cmath>

#include "ic/models.hpp"
#include "ic/parallel.hpp"

namespace nbody::ic {

void two_clusters(const ModelOptions& o, Bodies& b) {
  constexpr double cluster_mass = 0.5;
  const std::size_t n1 = o.n / 2;
  const std::size_t n2 = o.n - n1;
  // Body i from stream i in both clusters (so the clusters differ): each cluster is its
  // own centre-of-mass frame.
  fill_plummer(o, b, 0, n1, cluster_mass);
  fill_plummer(o, b, n1, n2, cluster_mass);

  // Cluster 2 relative to cluster 1: offset `separation` along x and `impact` along y,
  // moving along -x at the parabolic (zero orbital energy) speed for their distance.
  const double dx = o.separation;
  const double dy = o.impact;
  const double d = std::sqrt(dx * dx + dy * dy);  // not hypot: sqrt is exact everywhere
  const double v = std::sqrt(2.0 * o.G * (2.0 * cluster_mass) / d);
  ParticleSystem& ps = b.ps;
  const auto [lo, hi] = b.clip(n1, o.n);
  for_each_body(o.threads, lo, hi, [&](std::size_t i) {
    const std::size_t k = i - b.first;
    ps.x[k] += dx;
    ps.y[k] += dy;
    ps.vx[k] -= v;
  });
  // Then the frame where the pair's centre of mass is at rest at the origin. With an
  // odd n the masses per body differ between the clusters but each cluster still
  // weighs exactly 1/2 (up to rounding), so this is the midpoint.
  to_center_of_mass_frame(b, 0, o.n, o.threads);
}

}  // namespace nbody::ic
