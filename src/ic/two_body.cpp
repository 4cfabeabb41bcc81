// The deterministic few-body models: a Kepler binary and the figure-eight choreography.
// Both are exact solutions with known energies, which makes them the integrators'
// reference problems (period, energy drift, orbit closure).
#include <cmath>

#include "ic/models.hpp"

namespace nbody::ic {

ParticleSystem kepler(const ModelOptions& o) {
  // Equal masses summing to 1, so the period is 2 pi sqrt(a^3 / G) and the energy
  // -G m1 m2 / (2a) = -G / (8a).
  constexpr double m1 = 0.5, m2 = 0.5, total = m1 + m2;
  // At pericentre the separation is smallest and the relative velocity perpendicular
  // to it, with speed from the vis-viva equation v^2 = G M (2/r - 1/a).
  const double r = o.a * (1.0 - o.e);
  const double v = std::sqrt(o.G * total * (1.0 + o.e) / (o.a * (1.0 - o.e)));
  ParticleSystem ps;
  ps.resize(2);
  // Relative vector along +x, relative velocity along +y (counter-clockwise seen from
  // +z), split by mass so the centre of mass is at rest at the origin.
  ps.mass[0] = m1;
  ps.mass[1] = m2;
  ps.x[0] = -(m2 / total) * r;
  ps.x[1] = (m1 / total) * r;
  ps.vy[0] = -(m2 / total) * v;
  ps.vy[1] = (m1 / total) * v;
  return ps;
}

ParticleSystem figure_eight(const ModelOptions& o) {
  // Chenciner & Montgomery (2000), initial values from Simo's computation, for G = 1
  // and unit masses: E = -1.2871419918..., zero angular momentum, period ~6.3259.
  constexpr double x1 = 0.97000436, y1 = -0.24308753;
  constexpr double vx3 = -0.93240737, vy3 = -0.86473146;
  // For another G the same orbit is traversed with velocities x sqrt(G) (time / sqrt(G)).
  const double s = std::sqrt(o.G);
  ParticleSystem ps;
  ps.resize(3);
  for (double& m : ps.mass) m = 1.0;
  ps.x[0] = x1;
  ps.y[0] = y1;
  ps.x[1] = -x1;
  ps.y[1] = -y1;
  // Body 3 sits at the origin; bodies 1 and 2 move with -v3/2 each (zero momentum).
  ps.vx[2] = vx3 * s;
  ps.vy[2] = vy3 * s;
  ps.vx[0] = ps.vx[1] = -0.5 * vx3 * s;
  ps.vy[0] = ps.vy[1] = -0.5 * vy3 * s;
  return ps;
}

}  // namespace nbody::ic
