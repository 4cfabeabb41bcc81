#include "integrators/ias15.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "nbody/error.hpp"
#include "nbody/input_error.hpp"

namespace nbody {

namespace {

/// The Gauss-Radau spacings on [0, 1] of the 15th-order scheme (Everhart 1985; the values
/// of Rein & Spiegel 2015).
constexpr std::array<double, 8> kH = {0.0,
                                      0.0562625605369221464656521910318,
                                      0.180240691736892364987579942780,
                                      0.352624717113169637373907769648,
                                      0.547153626330555383001448554766,
                                      0.734210177215410531523210605558,
                                      0.885320946839095768090359771030,
                                      0.977520613561287501891174488626};

/// Below this relative change of b6 the predictor-corrector has converged (machine precision).
constexpr double kConverged = 1e-16;
constexpr int kMaxIterations = 12;
/// A proposed step below this fraction of the step just taken rejects it; a step grows by at
/// most its inverse.
constexpr double kSafety = 0.25;

/// The force polynomial a(h) = a0 + sum_j g_j h (h - h_1) ... (h - h_j) in power form
/// a0 + sum_p b_p h^(p+1): kC[j][p] is the coefficient of h^(p+1) in h (h - h_1) ... (h - h_j),
/// so b_p = sum_{j >= p} kC[j][p] g_j (kC[j][j] = 1).
struct Coefficients {
  std::array<std::array<double, 7>, 7> c{};
  Coefficients() {
    for (int j = 0; j < 7; ++j) {
      // poly[p] multiplies h^(p+1); start from h (poly = {1}), multiply by (h - h_m).
      std::array<double, 8> poly{};
      poly[0] = 1;
      for (int m = 1; m <= j; ++m) {
        std::array<double, 8> next{};
        for (int p = 0; p < 7; ++p) {
          next[p + 1] += poly[p];
          next[p] -= kH[std::size_t(m)] * poly[p];
        }
        poly = next;
      }
      for (int p = 0; p <= j; ++p) c[std::size_t(j)][std::size_t(p)] = poly[std::size_t(p)];
    }
  }
};

const Coefficients& coefficients() {
  static const Coefficients k;
  return k;
}

/// p += x with Kahan's compensation cs.
void add_compensated(double& p, double& cs, double x) {
  const double y = x - cs;
  const double t = p + y;
  cs = (t - p) - y;
  p = t;
}

std::array<std::vector<double>*, 3> positions(ParticleSystem& ps) {
  return {&ps.x, &ps.y, &ps.z};
}
std::array<std::vector<double>*, 3> velocities(ParticleSystem& ps) {
  return {&ps.vx, &ps.vy, &ps.vz};
}
std::array<std::vector<double>*, 3> accelerations(ParticleSystem& ps) {
  return {&ps.ax, &ps.ay, &ps.az};
}

}  // namespace

Ias15::Ias15(Ias15Options options) : options_(options) {
  if (!(std::isfinite(options.epsilon) && options.epsilon >= 0)) {
    throw input_error("--ias15-epsilon", "must be >= 0 and finite (0: fixed steps of --dt)",
                      options.epsilon);
  }
}

void Ias15::reset() {
  for (int k = 0; k < 7; ++k) {
    std::fill(b_[k].begin(), b_[k].end(), 0.0);
    std::fill(e_[k].begin(), e_[k].end(), 0.0);
  }
  std::fill(csx_.begin(), csx_.end(), 0.0);
  std::fill(csv_.begin(), csv_.end(), 0.0);
}

void Ias15::resize(std::size_t n3) {
  if (x0_.size() == n3) return;
  for (auto* v : {&x0_, &v0_, &a0_, &csx_, &csv_}) v->assign(n3, 0.0);
  for (int k = 0; k < 7; ++k) {
    b_[k].assign(n3, 0.0);
    g_[k].assign(n3, 0.0);
    e_[k].assign(n3, 0.0);
  }
}

IntegratorState Ias15::state() const {
  IntegratorState s;
  s.next_dt = dt_next_;
  const std::size_t n3 = x0_.size();
  s.values.reserve(16 * n3);
  for (const auto* v : {&b_, &e_}) {
    for (int k = 0; k < 7; ++k) s.values.insert(s.values.end(), (*v)[k].begin(), (*v)[k].end());
  }
  s.values.insert(s.values.end(), csx_.begin(), csx_.end());
  s.values.insert(s.values.end(), csv_.begin(), csv_.end());
  return s;
}

void Ias15::set_state(const IntegratorState& s) {
  if (s.values.size() % 48 != 0) {
    throw Error(fmt::format("IAS15 state: {} values, not 16 x 3N", s.values.size()));
  }
  resize(s.values.size() / 16);
  const std::size_t n3 = x0_.size();
  auto from = s.values.begin();
  auto take = [&](std::vector<double>& v) {
    std::copy(from, from + std::ptrdiff_t(n3), v.begin());
    from += std::ptrdiff_t(n3);
  };
  for (auto* v : {&b_, &e_}) {
    for (int k = 0; k < 7; ++k) take((*v)[k]);
  }
  take(csx_);
  take(csv_);
  dt_next_ = s.next_dt;
}

void Ias15::predict_next(double ratio) {
  const std::size_t n3 = x0_.size();
  if (ratio > 20) {  // too far to extrapolate the polynomial: start it afresh
    for (int k = 0; k < 7; ++k) {
      std::fill(b_[k].begin(), b_[k].end(), 0.0);
      std::fill(e_[k].begin(), e_[k].end(), 0.0);
    }
    return;
  }
  const double q1 = ratio, q2 = q1 * q1, q3 = q1 * q2, q4 = q2 * q2, q5 = q2 * q3, q6 = q3 * q3,
               q7 = q3 * q4;
  for (std::size_t k = 0; k < n3; ++k) {
    double be[7];
    for (int j = 0; j < 7; ++j) be[j] = b_[j][k] - e_[j][k];
    const double b0 = b_[0][k], b1 = b_[1][k], b2 = b_[2][k], b3 = b_[3][k], b4 = b_[4][k],
                 b5 = b_[5][k], b6 = b_[6][k];
    // b(h) rescaled to the next step: e_j = q^(j+1) sum_p binom(p+1, j+1) b_p.
    e_[0][k] = q1 * (b6 * 7 + b5 * 6 + b4 * 5 + b3 * 4 + b2 * 3 + b1 * 2 + b0);
    e_[1][k] = q2 * (b6 * 21 + b5 * 15 + b4 * 10 + b3 * 6 + b2 * 3 + b1);
    e_[2][k] = q3 * (b6 * 35 + b5 * 20 + b4 * 10 + b3 * 4 + b2);
    e_[3][k] = q4 * (b6 * 35 + b5 * 15 + b4 * 5 + b3);
    e_[4][k] = q5 * (b6 * 21 + b5 * 6 + b4);
    e_[5][k] = q6 * (b6 * 7 + b5);
    e_[6][k] = q7 * b6;
    for (int j = 0; j < 7; ++j) b_[j][k] = e_[j][k] + be[j];
  }
}

double Ias15::attempt(ParticleSystem& ps, const ForceEvaluation& forces, double dt) {
  const auto& c = coefficients().c;
  const std::size_t n = ps.size(), n3 = 3 * n;
  auto pos = positions(ps), acc = accelerations(ps);
  // g from b (back substitution of b_p = sum_{j >= p} c[j][p] g_j).
  for (std::size_t k = 0; k < n3; ++k) {
    for (int p = 6; p >= 0; --p) {
      double g = b_[p][k];
      for (int j = p + 1; j < 7; ++j) g -= c[std::size_t(j)][std::size_t(p)] * g_[j][k];
      g_[p][k] = g;
    }
  }
  double error = 2, error_last = 3;
  double max_a = 0;
  for (int it = 0;; ++it) {
    if (error < kConverged || it >= kMaxIterations || (it > 2 && error_last <= error)) break;
    error_last = error;
    error = 0;
    ++stats_.iterations;
    for (int s = 1; s < 8; ++s) {
      const double h = kH[std::size_t(s)];
      // The positions at h from the polynomial: x0 + v0 dt h + dt^2 h^2 (a0/2 + sum b_p
      // h^(p+1) / ((p+2)(p+3))).
      for (std::size_t i = 0; i < n; ++i) {
        for (int d = 0; d < 3; ++d) {
          const std::size_t k = 3 * i + std::size_t(d);
          const double poly =
              ((((((((b_[6][k] * 7 * h / 9 + b_[5][k]) * 6 * h / 8 + b_[4][k]) * 5 * h / 7 +
                    b_[3][k]) *
                       4 * h / 6 +
                   b_[2][k]) *
                      3 * h / 5 +
                  b_[1][k]) *
                     2 * h / 4 +
                 b_[0][k]) *
                    h / 3 +
                a0_[k]) *
                   dt * h / 2 +
               v0_[k]) *
                  dt * h -
              csx_[k];
          (*pos[std::size_t(d)])[i] = x0_[k] + poly;
        }
      }
      forces(ps);
      ++stats_.evaluations;
      max_a = 0;
      for (std::size_t i = 0; i < n; ++i) {
        for (int d = 0; d < 3; ++d) {
          const std::size_t k = 3 * i + std::size_t(d);
          const double a = (*acc[std::size_t(d)])[i];
          max_a = std::max(max_a, std::abs(a));
          // g_{s-1} by divided differences over the spacings, then b follows its change.
          double val = (a - a0_[k]) / kH[std::size_t(s)];
          for (int m = 0; m < s - 1; ++m) {
            val = (val - g_[m][k]) / (kH[std::size_t(s)] - kH[std::size_t(m + 1)]);
          }
          const double dg = val - g_[s - 1][k];
          g_[s - 1][k] = val;
          for (int p = 0; p < s; ++p) b_[p][k] += c[std::size_t(s - 1)][std::size_t(p)] * dg;
          if (s == 7) error = std::max(error, std::abs(dg));
        }
      }
      if (s == 7) error = max_a > 0 ? error / max_a : 0.0;
    }
  }
  return proposed_step(ps, dt);
}

double Ias15::proposed_step(const ParticleSystem& ps, double dt) const {
  if (options_.epsilon == 0) return dt;  // fixed steps
  const std::size_t n3 = x0_.size();
  double dt_new = dt / kSafety;  // no estimate (no forces at all): grow
  if (options_.rule == Ias15StepRule::Global) {
    // The relative size of the last term of the force polynomial (the paper's eq. 11):
    // its error term scales as dt^7. As in REBOUND, a body that moves by less than 1e-8 of
    // its distance from the origin in the step is left out: its accelerations' changes are
    // rounding noise (of its coordinates), which would shrink the steps without end (a
    // binary far from the origin, or drifting away from it).
    const std::array<const std::vector<double>*, 3> acc = {&ps.ax, &ps.ay, &ps.az};
    double max_a = 0, max_b6 = 0;
    for (std::size_t i = 0; i < n3 / 3; ++i) {
      double x2 = 0, v2 = 0;
      for (std::size_t k = 3 * i; k < 3 * i + 3; ++k) {
        x2 += x0_[k] * x0_[k];
        v2 += v0_[k] * v0_[k];
      }
      if (std::abs(v2 * dt * dt / x2) < 1e-16) continue;
      for (std::size_t d = 0; d < 3; ++d) {
        max_a = std::max(max_a, std::abs((*acc[d])[i]));
        max_b6 = std::max(max_b6, std::abs(b_[6][3 * i + d]));
      }
    }
    const double relative = max_a > 0 ? max_b6 / max_a : 0.0;
    if (!std::isfinite(relative)) return dt * kSafety * kSafety;  // NaN or inf: much smaller
    if (relative > 0) dt_new = dt * std::pow(options_.epsilon / relative, 1.0 / 7.0);
  } else {
    // Pham, Rein & Spiegel (2024): each body's time scale from the acceleration a, jerk j
    // and snap s at the end of the step, tau^2 = 2 |a|^2 / (|j|^2 + |a| |s|) (in units of
    // dt^2 here: the b-sums are j dt and s dt^2), the smallest over the bodies, and
    // dt = tau (7! epsilon)^(1/7) (their eq. 11).
    double min_tau2 = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < n3 / 3; ++i) {
      double a0 = 0, y2 = 0, y3 = 0, y4 = 0;
      for (std::size_t k = 3 * i; k < 3 * i + 3; ++k) {
        a0 += a0_[k] * a0_[k];
        const double a =
            a0_[k] + b_[0][k] + b_[1][k] + b_[2][k] + b_[3][k] + b_[4][k] + b_[5][k] + b_[6][k];
        const double j = b_[0][k] + 2 * b_[1][k] + 3 * b_[2][k] + 4 * b_[3][k] + 5 * b_[4][k] +
                         6 * b_[5][k] + 7 * b_[6][k];
        const double s = 2 * b_[1][k] + 6 * b_[2][k] + 12 * b_[3][k] + 20 * b_[4][k] +
                         30 * b_[5][k] + 42 * b_[6][k];
        y2 += a * a;
        y3 += j * j;
        y4 += s * s;
      }
      if (!std::isnormal(a0)) continue;  // no force on this body: no time scale
      const double tau2 = 2 * y2 / (y3 + std::sqrt(y4 * y2));
      if (std::isnormal(tau2)) min_tau2 = std::min(min_tau2, tau2);
    }
    if (std::isfinite(min_tau2))
      dt_new = std::sqrt(min_tau2) * dt * std::pow(5040 * options_.epsilon, 1.0 / 7.0);
  }
  if (options_.min_dt > 0) dt_new = std::max(dt_new, options_.min_dt);
  return std::min(dt_new, dt / kSafety);
}

double Ias15::step(ParticleSystem& ps, const ForceEvaluation& forces, double dt_guess,
                   double t_limit) {
  check_time_step(dt_guess);
  const std::size_t n = ps.size(), n3 = 3 * n;
  resize(n3);
  auto pos = positions(ps), vel = velocities(ps), acc = accelerations(ps);
  if (!ps.accelerations_valid()) {
    forces(ps);
    ++stats_.evaluations;
  }
  for (std::size_t i = 0; i < n; ++i) {
    for (int d = 0; d < 3; ++d) {
      const std::size_t k = 3 * i + std::size_t(d);
      x0_[k] = (*pos[std::size_t(d)])[i];
      v0_[k] = (*vel[std::size_t(d)])[i];
      a0_[k] = (*acc[std::size_t(d)])[i];
    }
  }
  double dt = dt_next_ > 0 ? dt_next_ : dt_guess;
  for (;;) {
    const bool lands = ps.time + dt >= t_limit;
    const double dt_try = lands ? t_limit - ps.time : dt;
    // A step that no longer advances the time would be taken again and again (or shrink
    // without end): the run stops instead, the bodies at the step's start.
    if (!lands) {
      check_step_during_run(ps.time, dt_try, "--integrator ias15",
                            "its steps follow the bodies' shortest time scale: soften close "
                            "encounters (--softening) or start from a smaller time");
    }
    const double dt_new = attempt(ps, forces, dt_try);
    if (dt_new < kSafety * dt_try && !(options_.min_dt > 0 && dt_try <= options_.min_dt)) {
      // Too large: back to the start, the polynomial scaled to the smaller step.
      for (std::size_t i = 0; i < n; ++i) {
        for (int d = 0; d < 3; ++d) (*pos[std::size_t(d)])[i] = x0_[3 * i + std::size_t(d)];
      }
      predict_next(dt_new / dt_try);
      ++stats_.rejected;
      dt = dt_new;
      continue;
    }
    // Accepted: the end of the step from the polynomial at h = 1, with compensated sums.
    for (std::size_t i = 0; i < n; ++i) {
      for (int d = 0; d < 3; ++d) {
        const std::size_t k = 3 * i + std::size_t(d);
        // Term by term, smallest first, each with the compensation (as REBOUND does): the
        // rounding of the sum of the terms is not lost either.
        const double dt2 = dt_try * dt_try;
        double x = x0_[k], v = v0_[k];
        constexpr double kX[7] = {6, 12, 20, 30, 42, 56, 72};  // (p + 2)(p + 3)
        constexpr double kV[7] = {2, 3, 4, 5, 6, 7, 8};        // p + 2
        for (int p = 6; p >= 0; --p) add_compensated(x, csx_[k], b_[p][k] / kX[p] * dt2);
        add_compensated(x, csx_[k], a0_[k] / 2 * dt2);
        add_compensated(x, csx_[k], v0_[k] * dt_try);
        for (int p = 6; p >= 0; --p) add_compensated(v, csv_[k], b_[p][k] / kV[p] * dt_try);
        add_compensated(v, csv_[k], a0_[k] * dt_try);
        (*pos[std::size_t(d)])[i] = x;
        (*vel[std::size_t(d)])[i] = v;
      }
    }
    ps.time = lands ? t_limit : ps.time + dt_try;
    ps.invalidate_accelerations();  // the last evaluation was inside the step
    ++stats_.steps;
    stats_.dt_last = dt_try;
    stats_.dt_min = stats_.steps == 1 ? dt_try : std::min(stats_.dt_min, dt_try);
    stats_.dt_max = std::max(stats_.dt_max, dt_try);
    // A step shortened to land does not shrink the next proposal.
    dt_next_ = lands ? std::max(dt_new, dt) : dt_new;
    predict_next(dt_next_ / dt_try);
    return dt_try;
  }
}

void Ias15::advance(ParticleSystem& ps, const ForceEvaluation& forces, double t_end,
                    double dt_guess) {
  while (ps.time < t_end) step(ps, forces, dt_guess, t_end);
  forces(ps);
  ++stats_.evaluations;
}

}  // namespace nbody
