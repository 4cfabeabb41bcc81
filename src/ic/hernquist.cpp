// Hernquist sphere: L. Hernquist 1990, ApJ 356, 359, "An analytical model for spherical
// galaxies and bulges". Units G = M = a = 1 (the velocities are then scaled for --G):
//   rho(r) = M a / (2 pi r (r + a)^3),  M(<r) = M r^2 / (r + a)^2,  Phi(r) = -G M / (r + a).
// The density rises as 1/r to the centre, so the orbital times span decades: the model
// that hierarchical (per-body) time steps are for.
//
// Radius: u = M(<r) / M inverted analytically, sqrt(u) = r / (r + a) => r = a sqrt(u) /
// (1 - sqrt(u)), with u uniform in (0, M(<r_max) / M]: the sphere truncated at r_max
// (--rmax, 100 a by default; M(<100 a) = 0.9803 M, so the outer 2 % of the mass is left
// out), no rejection. Every body has mass M / N: the truncated sphere holds all of M.
//
// Speed: the isotropic distribution function, eq. 17 of the paper, with q^2 = -a E / (G M):
//   f(E) = M / (8 sqrt(2) pi^3 a^3 v_g^3) (1 - q^2)^(-5/2)
//          [3 asin q + q (1 - q^2)^(1/2) (1 - 2 q^2) (8 q^4 - 8 q^2 - 3)],  v_g^2 = G M / a,
// in the untruncated potential above: the velocities are those of the infinite model (the
// bodies beyond r_max are missing, their pull on the others is not). The speed at r has
// density ~ v^2 f(Phi(r) + v^2 / 2) on [0, v_esc(r)], v_esc = sqrt(2 G M / (r + a)); it is
// drawn by von Neumann rejection, v uniform in [0, v_esc) accepted when a uniform y in
// [0, bound) falls below v^2 f, with bound >= the maximum over v (see SpeedBound).
#include <cmath>
#include <cstddef>
#include <vector>

#include "ic/models.hpp"
#include "ic/parallel.hpp"

namespace nbody::ic {

namespace {

// f(E) of eq. 17 for G = M = a = 1 without its constant factor (which cancels in the
// rejection), as a function of eps = -E in [0, 1) and w = 1 - eps (passed on its own: at
// small r, r / (1 + r) + v^2 / 2 keeps the digits that 1 - eps would lose).
double distribution(double eps, double w) {
  const double q = std::sqrt(eps);
  const double bracket = 3.0 * std::asin(q) +
                         q * std::sqrt(w) * (1.0 - 2.0 * eps) * (8.0 * eps * eps - 8.0 * eps - 3.0);
  return bracket / (w * w * std::sqrt(w));
}

// The unnormalised density of the speed v at radius r: v^2 f(E), E = v^2 / 2 - 1 / (1 + r).
double speed_weight(double v, double r) {
  const double half_v2 = 0.5 * v * v;
  const double eps = std::max(0.0, 1.0 / (1.0 + r) - half_v2);
  return v * v * distribution(eps, r / (1.0 + r) + half_v2);
}

double escape_speed(double r) {
  return std::sqrt(2.0 / (1.0 + r));
}

// The maximum over v in [0, v_esc(r)] of speed_weight(v, r), by golden-section search:
// the weight rises from 0, has a single peak and falls back to 0 at v_esc (checked on a
// fine grid from r = 1e-6 to 1e3). 80 steps shrink the bracket below rounding.
double max_speed_weight(double r) {
  const double inv_phi = (std::sqrt(5.0) - 1.0) / 2.0;
  double lo = 0, hi = escape_speed(r);
  double a = hi - inv_phi * (hi - lo), b = lo + inv_phi * (hi - lo);
  double fa = speed_weight(a, r), fb = speed_weight(b, r);
  for (int step = 0; step < 80; ++step) {
    if (fa < fb) {
      lo = a;
      a = b;
      fa = fb;
      b = lo + inv_phi * (hi - lo);
      fb = speed_weight(b, r);
    } else {
      hi = b;
      b = a;
      fb = fa;
      a = hi - inv_phi * (hi - lo);
      fa = speed_weight(a, r);
    }
  }
  return std::max(fa, fb);
}

// An upper bound of the speed weight at any radius, from a table of its maximum at radii
// r_k = r_lo e^(k h) (64 a decade, up to r_max). The maximum falls with r (a larger r has
// less binding energy to offer, and f grows with the binding energy), so the node at or
// inside r bounds every radius up to the next node; the nodes' maxima differ by at most
// 6 % (near the centre, where the maximum goes as r^(-3/2)), which is what the table costs
// in rejected tries. Below r_lo (u < 1e-12: almost never) the maximum is searched for
// that body alone. Built once per model, on one thread: the same numbers every time.
class SpeedBound {
 public:
  explicit SpeedBound(double r_max) {
    const std::size_t nodes =
        2 + static_cast<std::size_t>(std::max(0.0, std::ceil(std::log(r_max / kRLo) / kStep)));
    max_.resize(nodes);
    for (std::size_t k = 0; k < nodes; ++k) {
      max_[k] = max_speed_weight(kRLo * std::exp(static_cast<double>(k) * kStep));
    }
  }

  double operator()(double r) const {
    // The search finds the peak to rounding; 1e-6 more covers that and the rounding of
    // log(r) below (a node a hair beyond r).
    constexpr double kMargin = 1.0 + 1e-6;
    if (!(r >= kRLo)) return kMargin * max_speed_weight(r);
    const double k = std::floor(std::log(r / kRLo) / kStep);
    const auto node = static_cast<std::size_t>(std::min(k, static_cast<double>(max_.size() - 1)));
    return kMargin * max_[node];
  }

 private:
  static constexpr double kRLo = 1e-6;
  static constexpr double kStep = 2.302585092994046 / 64.0;  // ln(10) / 64
  std::vector<double> max_;
};

double sample_speed(Random& rng, double r, const SpeedBound& bound) {
  const double v_esc = escape_speed(r);
  const double top = bound(r);
  for (;;) {
    const double v = v_esc * rng.uniform();
    const double y = top * rng.uniform();
    if (y <= speed_weight(v, r)) return v;
  }
}

}  // namespace

void hernquist(const ModelOptions& o, Bodies& b) {
  const double m = 1.0 / static_cast<double>(o.n);
  const double r_max = o.rmax;
  const double mass_cut = (r_max / (1.0 + r_max)) * (r_max / (1.0 + r_max));  // M(<r_max) / M
  const SpeedBound bound(r_max);
  // Draw order per body (part of the seed -> bodies contract): u, position direction
  // (2), speed (2 per rejection try), velocity direction (2).
  const auto [lo, hi] = b.clip(0, o.n);
  for_each_body(o.threads, lo, hi, [&](std::size_t i) {
    Random rng(o.seed, i);
    const double s = std::sqrt(mass_cut * (1.0 - rng.uniform()));  // u in (0, M(<r_max)]
    const double r = s / (1.0 - s);
    const Vec3 pos = isotropic(rng, r);
    const Vec3 vel = isotropic(rng, sample_speed(rng, r, bound));
    set_body(b.ps, i - b.first, pos, vel, m);
  });
  to_center_of_mass_frame(b, 0, o.n, o.threads);
  // Drawn for G M = 1; virial equilibrium at the same radii needs v ~ sqrt(G M).
  scale_velocities(b, 0, o.n, std::sqrt(o.G), o.threads);
}

}  // namespace nbody::ic
