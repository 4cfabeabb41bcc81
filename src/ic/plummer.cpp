// Plummer sphere by the Aarseth, Henon & Wielen (1974) recipe, as written out in Hut &
// Makino's "Moving Stars Around" (mkplummer): invert the cumulative mass for the
// radius, draw the speed from the isotropic distribution function by von Neumann
// rejection, and give positions and velocities independent isotropic directions.
// Then convert to Henon (standard N-body) units: M = 1, G = 1, E = -1/4.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "ic/models.hpp"

namespace nbody::ic {

namespace {

// X1 is drawn in (0, 0.999]: the outermost 0.1% of the mass is left out, because the
// Plummer density has an infinite tail and a few bodies at r ~ 1e3 would dominate
// the crossing times and the bounding box for nothing. This is why a sample's
// energy sits slightly above -1/4 (about -0.244 to -0.250).
constexpr double kMassCut = 0.999;

// Structural (a = 1) to Henon units: lengths x 3 pi / 16, velocities x sqrt(16 / (3 pi)).
constexpr double kLengthScale = 3.0 * std::numbers::pi / 16.0;
const double kVelocityScale = std::sqrt(16.0 / (3.0 * std::numbers::pi));

// A vector of length r in a uniformly random direction: by Archimedes' hat-box theorem
// z uniform in [-r, r] and an azimuth uniform in [0, 2 pi) cover the sphere evenly.
Vec3 isotropic(Random& rng, double r) {
  const double z = (1.0 - 2.0 * rng.uniform()) * r;
  // |z| <= r holds after rounding too; the max only guards against a surprise.
  const double rho = std::sqrt(std::max(0.0, r * r - z * z));
  const double phi = 2.0 * std::numbers::pi * rng.uniform();
  return {rho * std::cos(phi), rho * std::sin(phi), z};
}

// Radius for a = 1 from the inverted cumulative mass M(<r) = r^3 / (1 + r^2)^(3/2).
double sample_radius(Random& rng) {
  const double x1 = kMassCut * (1.0 - rng.uniform());  // (0, 0.999]: never 0
  return 1.0 / std::sqrt(std::pow(x1, -2.0 / 3.0) - 1.0);
}

// Speed at radius r (a = 1, G = M = 1). With q = v / v_escape, the isotropic
// distribution function gives g(q) = q^2 (1 - q^2)^(7/2); its maximum is ~0.092, so
// a uniform y in [0, 0.1) bounds it (about 5 tries per accepted speed).
double sample_speed(Random& rng, double r) {
  double q = 0;
  for (;;) {
    q = rng.uniform();
    const double y = 0.1 * rng.uniform();
    const double q2 = q * q;
    if (y <= q2 * std::pow(1.0 - q2, 3.5)) break;
  }
  // v_escape(r) = sqrt(2) (1 + r^2)^(-1/4).
  return q * std::numbers::sqrt2 * std::pow(1.0 + r * r, -0.25);
}

}  // namespace

void fill_plummer(Random& rng, ParticleSystem& ps, std::size_t begin, std::size_t count,
                  double total_mass, double G) {
  const std::size_t end = begin + count;
  const double m = total_mass / static_cast<double>(count);
  // Draw order per body (part of the seed -> bodies contract): radius, position
  // direction (2), speed (2 per rejection try), velocity direction (2).
  for (std::size_t i = begin; i < end; ++i) {
    const double r = sample_radius(rng);
    const Vec3 pos = isotropic(rng, r);
    const Vec3 vel = isotropic(rng, sample_speed(rng, r));
    ps.x[i] = pos.x * kLengthScale;
    ps.y[i] = pos.y * kLengthScale;
    ps.z[i] = pos.z * kLengthScale;
    ps.vx[i] = vel.x * kVelocityScale;
    ps.vy[i] = vel.y * kVelocityScale;
    ps.vz[i] = vel.z * kVelocityScale;
    ps.mass[i] = m;
  }
  // A finite sample's centre drifts ~1/sqrt(N) off the origin; put it back.
  to_center_of_mass_frame(ps, begin, end);
  // The velocities above are for G M = 1. Keeping the same radii, virial equilibrium
  // (2T = |W|, both ~ G M^2 / R) needs v ~ sqrt(G M): scale by that (exactly 1 for the
  // plain plummer model with G = 1, so those bits are untouched).
  const double v_scale = std::sqrt(G * total_mass);
  if (v_scale != 1.0) {
    for (std::size_t i = begin; i < end; ++i) {
      ps.vx[i] *= v_scale;
      ps.vy[i] *= v_scale;
      ps.vz[i] *= v_scale;
    }
  }
}

ParticleSystem plummer(const ModelOptions& o, Random& rng) {
  ParticleSystem ps;
  ps.resize(o.n);
  fill_plummer(rng, ps, 0, o.n, 1.0, o.G);
  return ps;
}

}  // namespace nbody::ic
