// Uniform models: uniform-cube (the original `gen N file` generator), uniform-sphere
// and cold-sphere. They are left where they were drawn (no centre-of-mass shift), so
// every body stays inside the cube or ball the user asked for.
#include <cstddef>

#include "ic/models.hpp"
#include "ic/parallel.hpp"

namespace nbody::ic {

namespace {

// Velocities uniform in [-v, v] per component. Drawn even when v is 0, so the
// positions a seed gives do not depend on --velocity (and uniform-sphere and
// cold-sphere share them).
// v == 0 writes +0 (not 0 * negative = -0, which files would print as "-0").
void set_velocity(ParticleSystem& ps, std::size_t i, Random& rng, double v) {
  const double ux = 2.0 * rng.uniform() - 1.0;
  const double uy = 2.0 * rng.uniform() - 1.0;
  const double uz = 2.0 * rng.uniform() - 1.0;
  ps.vx[i] = v == 0 ? 0.0 : v * ux;
  ps.vy[i] = v == 0 ? 0.0 : v * uy;
  ps.vz[i] = v == 0 ? 0.0 : v * uz;
}

// A point uniform in the ball of radius `radius` by rejection from the cube around it:
// plain arithmetic only (no cbrt/sin/cos), so the bits do not depend on the maths
// library; about 1.9 tries per point.
void ball_point(Random& rng, double radius, double& x, double& y, double& z) {
  double u, v, w;
  do {
    u = 2.0 * rng.uniform() - 1.0;
    v = 2.0 * rng.uniform() - 1.0;
    w = 2.0 * rng.uniform() - 1.0;
  } while (u * u + v * v + w * w > 1.0);
  x = radius * u;
  y = radius * v;
  z = radius * w;
}

// Body i from its own stream: the position, then the velocity. Equal masses that add up
// to the requested total.
void uniform_ball(const ModelOptions& o, Bodies& b, double velocity) {
  ParticleSystem& ps = b.ps;
  const double m = o.mass / static_cast<double>(o.n);
  const auto [lo, hi] = b.clip(0, o.n);
  for_each_body(o.threads, lo, hi, [&](std::size_t i) {
    Random rng(o.seed, i);
    const std::size_t k = i - b.first;
    ball_point(rng, o.size, ps.x[k], ps.y[k], ps.z[k]);
    set_velocity(ps, k, rng, velocity);
    ps.mass[k] = m;
  });
}

}  // namespace

void uniform_cube(const ModelOptions& o, Bodies& b) {
  ParticleSystem& ps = b.ps;
  const double m = o.mass / static_cast<double>(o.n);
  const auto [lo, hi] = b.clip(0, o.n);
  for_each_body(o.threads, lo, hi, [&](std::size_t i) {
    Random rng(o.seed, i);
    const std::size_t k = i - b.first;
    ps.x[k] = o.size * (2.0 * rng.uniform() - 1.0);
    ps.y[k] = o.size * (2.0 * rng.uniform() - 1.0);
    ps.z[k] = o.size * (2.0 * rng.uniform() - 1.0);
    set_velocity(ps, k, rng, o.velocity);
    ps.mass[k] = m;
  });
}

void uniform_sphere(const ModelOptions& o, Bodies& b) {
  uniform_ball(o, b, o.velocity);
}

void cold_sphere(const ModelOptions& o, Bodies& b) {
  // Zero velocities whatever --velocity says: "cold" is the point of the model. The
  // free-fall time of the continuous sphere is (pi/2) sqrt(R^3 / (2 G M)).
  uniform_ball(o, b, 0.0);
}

}  // namespace nbody::ic
