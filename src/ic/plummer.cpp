// Plummer sphere by the Aarseth, Henon & Wielen (1974) recipe, as written out in Hut &
// Makino's "Moving Stars Around" (mkplummer): invert the cumulative mass for the
// radius, draw the speed from the isotropic distribution function by von Neumann
// rejection, and give positions and velocities independent isotropic directions.
// Then convert to Henon (standard N-body) units: M = 1, G = 1, E = -1/4.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "ic/models.hpp"
#include "ic/parallel.hpp"

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

// Radius for a = 1 from the inverted cumulative mass M(<r) = r^3 / (1 + r^2)^(3/2):
// r = (X^(-2/3) - 1)^(-1/2), written c / sqrt(1 - c^2) with c = X^(1/3) (one cbrt
// instead of a pow; c <= 0.999^(1/3) < 1).
double sample_radius(Random& rng) {
  const double x1 = kMassCut * (1.0 - rng.uniform());  // (0, 0.999]: never 0
  const double c = std::cbrt(x1);
  return c / std::sqrt(1.0 - c * c);
}

// Speed at radius r (a = 1, G = M = 1). With q = v / v_escape, the isotropic
// distribution function gives g(q) = q^2 (1 - q^2)^(7/2); its maximum is ~0.092, so
// a uniform y in [0, 0.1) bounds it (43 % of the tries are accepted: B(3/2, 9/2) / 2 =
// 0.043 of the box's 0.1). The powers are written with sqrt: correctly rounded
// operations only (no pow), and faster.
double sample_speed(Random& rng, double r) {
  double q = 0;
  for (;;) {
    q = rng.uniform();
    const double y = 0.1 * rng.uniform();
    const double q2 = q * q;
    const double t = 1.0 - q2;
    if (y <= q2 * (t * t * t * std::sqrt(t))) break;
  }
  // v_escape(r) = sqrt(2) (1 + r^2)^(-1/4).
  return q * std::numbers::sqrt2 / std::sqrt(std::sqrt(1.0 + r * r));
}

}  // namespace

void fill_plummer(const ModelOptions& o, Bodies& b, std::size_t begin, std::size_t count,
                  double total_mass) {
  const std::size_t end = begin + count;
  const double m = total_mass / static_cast<double>(count);
  ParticleSystem& ps = b.ps;
  const auto [lo, hi] = b.clip(begin, end);
  // Draw order per body, from the body's own stream (part of the seed -> bodies
  // contract): radius, position direction (2), speed (2 per rejection try), velocity
  // direction (2).
  for_each_body(o.threads, lo, hi, [&](std::size_t i) {
    Random rng(o.seed, i);
    const double r = sample_radius(rng);
    const Vec3 pos = isotropic(rng, r);
    const Vec3 vel = isotropic(rng, sample_speed(rng, r));
    const std::size_t k = i - b.first;
    ps.x[k] = pos.x * kLengthScale;
    ps.y[k] = pos.y * kLengthScale;
    ps.z[k] = pos.z * kLengthScale;
    ps.vx[k] = vel.x * kVelocityScale;
    ps.vy[k] = vel.y * kVelocityScale;
    ps.vz[k] = vel.z * kVelocityScale;
    ps.mass[k] = m;
  });
  // A finite sample's centre drifts ~1/sqrt(N) off the origin; put it back.
  to_center_of_mass_frame(b, begin, end, o.threads);
  // The velocities above are for G M = 1. Keeping the same radii, virial equilibrium
  // (2T = |W|, both ~ G M^2 / R) needs v ~ sqrt(G M): scale by that (exactly 1 for the
  // plain plummer model with G = 1, so those bits are untouched).
  scale_velocities(b, begin, end, std::sqrt(o.G * total_mass), o.threads);
}

void plummer(const ModelOptions& o, Bodies& b) {
  fill_plummer(o, b, 0, o.n, 1.0);
}

}  // namespace nbody::ic
