#include "viewer/spawner.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace nbody::viewer {

SpawnSettings default_spawn_settings(const ParticleSystem& ps, double visible_width) {
  SpawnSettings s;
  s.disc_radius = static_cast<float>(0.05 * visible_width);
  if (ps.empty()) return s;
  double mass = 0, radius = 0;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    mass += ps.mass[i];
    radius += ps.radius[i];
  }
  const auto n = static_cast<double>(ps.size());
  s.mass = static_cast<float>(mass / n);
  s.radius = static_cast<float>(radius / n);
  return s;
}

void add_body(ParticleSystem& ps, const double at[3], const SpawnSettings& s) {
  Body b;
  b.position = {at[0], at[1], at[2]};
  b.velocity = {s.velocity[0], s.velocity[1], s.velocity[2]};
  b.mass = s.mass;
  b.radius = s.radius;
  ps.add(b);  // z = vz = 0 in a planar system; accelerations marked stale
}

void add_disc(ParticleSystem& ps, const double at[3], const double right[3], const double up[3],
              const SpawnSettings& s) {
  const int n = std::max(s.count, 0);
  const double golden_angle = std::numbers::pi * (3 - std::sqrt(5.0));
  for (int k = 0; k < n; ++k) {
    // Equal areas per body: radius ~ sqrt(k).
    const double r = s.disc_radius * std::sqrt((k + 0.5) / n);
    const double angle = k * golden_angle;
    const double u = r * std::cos(angle), v = r * std::sin(angle);
    double p[3];
    for (int a = 0; a < 3; ++a) p[a] = at[a] + u * right[a] + v * up[a];
    SpawnSettings one = s;
    // Spin: v = omega x r in the disc plane (the in-plane perpendicular of (u, v) is (-v, u)).
    for (int a = 0; a < 3; ++a) {
      one.velocity[a] += static_cast<float>(s.spin * (-v * right[a] + u * up[a]));
    }
    add_body(ps, p, one);
  }
}

}  // namespace nbody::viewer
