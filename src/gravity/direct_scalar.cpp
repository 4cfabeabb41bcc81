#include "gravity/direct_scalar.hpp"

#include <type_traits>

#include "nbody/physics/pair_force.hpp"

namespace nbody {

template <class Real>
std::string DirectSumScalar<Real>::name() const {
  return std::is_same_v<Real, float> ? "direct-scalar-float" : "direct-scalar-double";
}

namespace {

/// Body i's acceleration and (WithPotential) potential per unit G, summed over every
/// j != i in index order; the acceleration bits do not depend on WithPotential
/// (pair_force.hpp).
template <bool WithPotential, class Real>
void sum_over_bodies(const ParticleSystem& ps, std::size_t i, Real eps2, Real& ax, Real& ay,
                     Real& az, Real& phi) {
  const Real xi = Real(ps.x[i]), yi = Real(ps.y[i]), zi = Real(ps.z[i]);
  for (std::size_t j = 0; j < ps.size(); ++j) {
    if (j == i) continue;  // the self term: no force, and no potential even with softening
    const Real dx = Real(ps.x[j]) - xi, dy = Real(ps.y[j]) - yi, dz = Real(ps.z[j]) - zi;
    if constexpr (WithPotential) {
      accumulate_pair_acceleration_potential<Real>(dx, dy, dz, Real(ps.mass[j]), eps2, ax, ay, az,
                                                   phi);
    } else {
      accumulate_pair_acceleration<Real>(dx, dy, dz, Real(ps.mass[j]), eps2, ax, ay, az);
    }
  }
}

/// The share's bodies; the others keep the zeros they were given.
template <bool WithPotential, class Real>
void sum_share(ParticleSystem& ps, ShareRange share, double G, Real eps2) {
  for (std::size_t i = share.first; i < share.last; ++i) {
    Real ax = 0, ay = 0, az = 0, phi = 0;
    sum_over_bodies<WithPotential>(ps, i, eps2, ax, ay, az, phi);
    ps.ax[i] = G * double(ax);
    ps.ay[i] = G * double(ay);
    ps.az[i] = G * double(az);
    if constexpr (WithPotential) ps.potential[i] = G * double(phi);
  }
}

}  // namespace

template <class Real>
void DirectSumScalar<Real>::compute_forces(ParticleSystem& ps, bool potential) {
  const std::size_t n = ps.size();
  const Real eps2 = Real(softening_) * Real(softening_);
  for (auto* a : {&ps.ax, &ps.ay, &ps.az}) a->assign(n, 0.0);
  const ShareRange share = share_range(n, part_, parts_);
  if (potential) {
    ps.potential.assign(n, 0.0);
    sum_share<true>(ps, share, G_, eps2);
    ps.set_potentials_valid();
  } else {
    sum_share<false>(ps, share, G_, eps2);
    ps.invalidate_potentials();
  }
  ps.set_accelerations_valid();
}

template class DirectSumScalar<float>;
template class DirectSumScalar<double>;

}  // namespace nbody
