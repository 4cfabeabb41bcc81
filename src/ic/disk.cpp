// A thin exponential disk around a central point mass: a central body of mass 1 at the
// origin plus n - 1 bodies of total mass disk_mass, surface density ~ exp(-R / Rd),
// on circular orbits counter-clockwise seen from +z.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "ic/models.hpp"
#include "ic/parallel.hpp"

namespace nbody::ic {

double lambert_w_minus1(double x) {
  constexpr double inv_e = 1.0 / std::numbers::e;
  if (std::isnan(x) || x > 0) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0) return -std::numeric_limits<double>::infinity();  // the limit x -> 0-
  if (x <= -inv_e) return -1.0;  // the branch point (and what rounds below it)

  // Starting guess: near the branch point the series in p = -sqrt(2 (e x + 1))
  // (Corless et al. 1996, eq. 4.22); elsewhere the asymptotic
  // W ~ L1 - L2 + L2 / L1 with L1 = ln(-x), L2 = ln(-L1). Both are within a few
  // percent where they are used, so Halley's cubic convergence needs 2-4 steps.
  double w = 0;
  if (x < -0.25) {
    // max: e x + 1 can round below 0 right at the branch point.
    const double p = -std::sqrt(std::max(0.0, 2.0 * (std::numbers::e * x + 1.0)));
    w = -1.0 + p - p * p / 3.0 + 11.0 / 72.0 * p * p * p;
  } else {
    const double l1 = std::log(-x);
    const double l2 = std::log(-l1);
    w = l1 - l2 + l2 / l1;
  }
  // Halley's iteration on f(w) = w e^w - x. A fixed cap keeps it finite (and the
  // result deterministic) even where rounding makes the last step oscillate.
  for (int iter = 0; iter < 32; ++iter) {
    const double ew = std::exp(w);
    const double f = w * ew - x;
    const double wp1 = w + 1.0;
    if (f == 0 || wp1 == 0) break;
    const double dw = f / (ew * wp1 - (w + 2.0) * f / (2.0 * wp1));
    w -= dw;
    if (std::fabs(dw) <= 1e-15 * std::fabs(w)) break;
  }
  return w > -1.0 ? -1.0 : w;  // stay on the lower branch
}

void exponential_disk(const ModelOptions& o, Bodies& b) {
  constexpr double central_mass = 1.0;
  const double rd = o.scale_length;
  const double md = o.disk_mass;
  const std::size_t n_disk = o.n - 1;
  ParticleSystem& ps = b.ps;
  // Body 0: the central mass, at rest at the origin.
  if (b.first == 0 && !ps.mass.empty()) ps.mass[0] = central_mass;
  const double m = md / static_cast<double>(n_disk);
  const auto [lo, hi] = b.clip(1, o.n);

  // Disk body i (1..n-1) from its own stream: the radius (with its rare redraw), then
  // the azimuth.
  for_each_body(o.threads, lo, hi, [&](std::size_t i) {
    Random rng(o.seed, i);
    const std::size_t k = i - b.first;
    // Radius: with s = R / Rd the enclosed fraction is X = 1 - (1 + s) e^{-s}, i.e.
    // -(1 + s) e^{-(1 + s)} = (X - 1) / e, so -(1 + s) = W_{-1}((X - 1) / e).
    // X in (0, 1) avoids R = 0 (infinite speed) and R = inf; a draw so close to 0 that
    // (X - 1) / e rounds onto the branch point (R = 0; probability ~1e-16) is drawn again.
    double x_frac = 0, s = 0;
    do {
      x_frac = rng.uniform_open();
      s = -(1.0 + lambert_w_minus1((x_frac - 1.0) / std::numbers::e));
    } while (!(s > 0));
    const double r = rd * s;
    const double phi = 2.0 * std::numbers::pi * rng.uniform();
    const double c = std::cos(phi), sn = std::sin(phi);
    // Circular speed from the mass inside R as if it were spherical: the central mass
    // dominates (disk_mass 0.1 by default), and the thin-disk rotation curve (Freeman
    // 1970, Bessel functions) differs from this by a fraction of the disk's share, so
    // the disk starts close to, not exactly in, equilibrium. X is M_disk(<R) / Md by
    // construction, and avoids the cancellation in 1 - (1 + s) e^{-s} at small s.
    const double v = std::sqrt(o.G * (central_mass + md * x_frac) / r);
    ps.x[k] = r * c;
    ps.y[k] = r * sn;
    ps.vx[k] = -v * sn;  // (-sin, cos): counter-clockwise seen from +z
    ps.vy[k] = v * c;
    ps.mass[k] = m;
    // z and vz stay exactly 0: a razor-thin disk.
  });
  // The disk's own centre of mass is ~Rd / sqrt(n) off the origin; moving to the
  // system's frame shifts the central body slightly but keeps the total momentum 0.
  to_center_of_mass_frame(b, 0, o.n, o.threads);
}

}  // namespace nbody::ic
