// NFW halo: J. F. Navarro, C. S. Frenk & S. D. M. White 1996, ApJ 462, 563, "The structure
// of cold dark matter halos", and 1997, ApJ 490, 493, "A universal density profile from
// hierarchical clustering". Units G = M = r_s = 1 (the velocities are then scaled for --G),
// the halo truncated at r_200 = c r_s (c = --concentration, 10 by default) and holding all
// of the mass M there; with x = r / r_s:
//   rho(r) ~ 1 / [x (1 + x)^2],  M(<r) = M mu(x) / mu(c),  mu(x) = ln(1 + x) - x / (1 + x),
//   Phi(r) = -(G M / (r_s mu(c))) [ln(1 + x) / x - 1 / (1 + c)]   (x <= c; -G M / r outside).
//
// Radius: mu(x) = u mu(c), u uniform in (0, 1], solved per body by Newton's method kept
// inside a bisection bracket (deterministic: the same steps for the same u).
//
// Velocities: isotropic, the Jeans equation's radial dispersion of the truncated halo,
//   sigma_r^2(r) = (1 / rho(r)) Int_r^{r_200} rho(r') G M(<r') / r'^2 dr',
// tabulated once per model on a log grid (Simpson's rule) and interpolated. Each component
// is Gaussian, redrawn while the speed is above 0.95 v_esc(r) (escape from the truncated
// halo): the Gaussian approximation of L. Hernquist 1993, ApJS 86, 389, "N-body
// realizations of compound galaxies". The cut alone would take ~6 % off the kinetic energy
// (where sigma_r reaches 0.32 v_esc, 3 % of the draws are over it), so the Gaussian's width
// is set, radius by radius, so that the cut distribution has the Jeans second moment
// sigma_r^2 (for a Maxwellian of width s cut at V = k s: <v_i^2> = s^2 Q(k) / P(k), with
// P, Q below; s is at most 8 % wider than sigma_r for c = 10). The sample then starts
// close to virial equilibrium (2T/|W| = 1.00) rather than 6 % cold.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numbers>
#include <vector>

#include "ic/models.hpp"
#include "ic/parallel.hpp"

namespace nbody::ic {

namespace {

constexpr double kEscapeCut = 0.95;  // speeds below 0.95 v_esc(r)

// mu(x) = ln(1 + x) - x / (1 + x). Below x = 0.01 by its series (the two terms cancel to
// ~x^2 / 2 there): sum_{k>=2} (-1)^k (k - 1) x^k / k, the terms to x^8 (error < 2e-14).
double mu(double x) {
  if (x < 0.01) {
    double sum = 0;
    for (int k = 8; k >= 2; --k) {
      sum = sum * x + (k % 2 == 0 ? 1.0 : -1.0) * (k - 1.0) / k;
    }
    return sum * x * x;
  }
  return std::log1p(x) - x / (1.0 + x);
}

// The x in (0, c] with mu(x) = target (0 < target <= mu(c)): Newton's steps (mu'(x) =
// x / (1 + x)^2), a bisection of the bracket wherever a step would leave it.
double invert_mu(double target, double c) {
  double lo = 0, hi = c;
  double x = std::min(std::sqrt(2.0 * target), 0.5 * c);  // mu ~ x^2 / 2 near 0
  for (int step = 0; step < 200; ++step) {
    const double f = mu(x) - target;
    if (f == 0) return x;
    (f < 0 ? lo : hi) = x;
    double next = x - f * (1.0 + x) * (1.0 + x) / x;
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    if (std::fabs(next - x) <= 1e-13 * x || hi - lo <= 1e-13 * hi) return next;
    x = next;
  }
  return x;
}

// Escape speed from r <= c (G = M = r_s = 1, mu_c = mu(c)).
double escape_speed(double r, double c, double mu_c) {
  const double log_term = r > 0 ? std::log1p(r) / r : 1.0;
  return std::sqrt(2.0 * std::max(0.0, log_term - 1.0 / (1.0 + c)) / mu_c);
}

// A Maxwellian of width s (3-D) cut at speed k s: P(k) is the fraction kept and Q(k) / P(k)
// the kept bodies' <v^2> / (3 s^2) (the integrals of v^2 e^(-v^2/2) and v^4 e^(-v^2/2)).
double kept(double k) {
  return std::erf(k / std::numbers::sqrt2) -
         std::sqrt(2.0 / std::numbers::pi) * k * std::exp(-0.5 * k * k);
}
double kept_second_moment(double k) {
  return std::erf(k / std::numbers::sqrt2) -
         std::sqrt(2.0 / std::numbers::pi) * k * std::exp(-0.5 * k * k) * (1.0 + k * k / 3.0);
}

// The variance s^2 of the Gaussian components such that, cut at speed V, they have
// <v_i^2> = sigma2. Solves Q(k) / (P(k) k^2) = sigma2 / V^2 for k = V / s by bisection (the
// left side falls from 1/5 at k -> 0 to 0). Beyond k = 40 nothing is cut: s^2 = sigma2.
double gaussian_variance(double sigma2, double v_cut) {
  const double target = sigma2 / (v_cut * v_cut);
  const auto ratio = [](double k) { return kept_second_moment(k) / (kept(k) * k * k); };
  double lo = 0.5, hi = 40.0;
  if (!(target > ratio(hi))) return sigma2;
  // A dispersion the cut cannot hold (not reached: sigma_r <= 0.34 v_esc for c = 1 to 1000).
  if (target >= ratio(lo)) return (v_cut / lo) * (v_cut / lo);
  for (int step = 0; step < 100 && hi - lo > 1e-13 * hi; ++step) {
    const double mid = 0.5 * (lo + hi);
    (ratio(mid) > target ? lo : hi) = mid;
  }
  const double k = 0.5 * (lo + hi);
  return (v_cut / k) * (v_cut / k);
}

// The component variance of the velocity draws as a function of radius: a table on the
// nodes r_j = r_lo e^(j h) (256 a decade) from r_lo = 1e-6 to c, linear in ln r between
// them. The Jeans integral, in ln r: I(r) = Int_r^c mu(r') / (r'^2 (1 + r')^2) d ln r',
// sigma_r^2 = r (1 + r)^2 I(r) / mu(c); Simpson's rule on each interval, summed from c in.
// Below r_lo the integrand is 1/2 (mu ~ x^2 / 2), so I(r) = I(r_lo) + ln(r_lo / r) / 2 there
// (and sigma_r ~ 1e-3 v_esc: nothing to correct for the cut).
class VelocityTable {
 public:
  explicit VelocityTable(double c) : c_(c), mu_c_(mu(c)), r_lo_(std::min(1e-6, 0.5 * c)) {
    const auto integrand = [](double ln_r) {
      const double r = std::exp(ln_r);
      return mu(r) / ((r * (1.0 + r)) * (r * (1.0 + r)));
    };
    const double span = std::log(c / r_lo_);
    const auto intervals =
        std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(span / kMaxStep)));
    step_ = span / static_cast<double>(intervals);
    const double ln_lo = std::log(r_lo_);
    std::vector<double> integral(intervals + 1, 0.0);  // I at the nodes; I(c) = 0
    for (std::size_t j = intervals; j-- > 0;) {
      const double a = ln_lo + static_cast<double>(j) * step_, b = a + step_;
      integral[j] = integral[j + 1] +
                    step_ / 6.0 * (integrand(a) + 4.0 * integrand(0.5 * (a + b)) + integrand(b));
    }
    integral_lo_ = integral[0];
    variance_.resize(intervals + 1);
    for (std::size_t j = 0; j <= intervals; ++j) {
      const double r = j == intervals ? c : r_lo_ * std::exp(static_cast<double>(j) * step_);
      const double sigma2 = r * (1.0 + r) * (1.0 + r) * integral[j] / mu_c_;
      const double v_cut = kEscapeCut * escape_speed(r, c_, mu_c_);
      variance_[j] = sigma2 > 0 ? gaussian_variance(sigma2, v_cut) : 0.0;
    }
  }

  double variance(double r) const {
    if (!(r >= r_lo_)) {
      const double integral = integral_lo_ + 0.5 * std::log(r_lo_ / r);
      return r * (1.0 + r) * (1.0 + r) * integral / mu_c_;
    }
    const double t = std::log(r / r_lo_) / step_;
    const double last = static_cast<double>(variance_.size() - 2);
    const double node = std::min(std::floor(t), last);
    const double frac = std::clamp(t - node, 0.0, 1.0);
    const auto j = static_cast<std::size_t>(node);
    return variance_[j] + frac * (variance_[j + 1] - variance_[j]);
  }

  double mu_c() const { return mu_c_; }

 private:
  static constexpr double kMaxStep = 2.302585092994046 / 256.0;  // ln(10) / 256
  double c_, mu_c_, r_lo_;
  double step_ = 0, integral_lo_ = 0;
  std::vector<double> variance_;
};

}  // namespace

void nfw(const ModelOptions& o, Bodies& b) {
  const double m = 1.0 / static_cast<double>(o.n);
  const double c = o.concentration;
  const VelocityTable table(c);
  const double mu_c = table.mu_c();
  // Draw order per body (part of the seed -> bodies contract): u, position direction (2),
  // then normal deviates, three per try (Random::normal() keeps the second of each pair).
  const auto [lo, hi] = b.clip(0, o.n);
  for_each_body(o.threads, lo, hi, [&](std::size_t i) {
    Random rng(o.seed, i);
    const double u = 1.0 - rng.uniform();  // (0, 1]
    const double r = std::min(invert_mu(u * mu_c, c), c);
    const Vec3 pos = isotropic(rng, r);
    const double s = std::sqrt(table.variance(r));
    const double v_cut = kEscapeCut * escape_speed(r, c, mu_c);
    Vec3 vel;
    do {
      vel = {s * rng.normal(), s * rng.normal(), s * rng.normal()};
    } while (vel.x * vel.x + vel.y * vel.y + vel.z * vel.z > v_cut * v_cut);
    set_body(b.ps, i - b.first, pos, vel, m);
  });
  to_center_of_mass_frame(b, 0, o.n, o.threads);
  // Drawn for G M = 1; virial equilibrium at the same radii needs v ~ sqrt(G M).
  scale_velocities(b, 0, o.n, std::sqrt(o.G), o.threads);
}

}  // namespace nbody::ic
