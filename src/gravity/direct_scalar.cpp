#include "gravity/direct_scalar.hpp"

#include <type_traits>

#include "nbody/physics/pair_force.hpp"

namespace nbody {

template <class Real>
std::string DirectSumScalar<Real>::name() const {
  return std::is_same_v<Real, float> ? "direct-scalar-float" : "direct-scalar-double";
}

template <class Real>
void DirectSumScalar<Real>::compute_forces(ParticleSystem& ps, bool potential) {
  (void)potential;  // TODO(#18)
  const std::size_t n = ps.size();
  const Real eps2 = Real(softening_) * Real(softening_);
  for (auto* a : {&ps.ax, &ps.ay, &ps.az}) a->assign(n, 0.0);
  const ShareRange share = share_range(n, part_, parts_);
  for (std::size_t i = share.first; i < share.last; ++i) {
    const Real xi = Real(ps.x[i]), yi = Real(ps.y[i]), zi = Real(ps.z[i]);
    Real ax = 0, ay = 0, az = 0;
    for (std::size_t j = 0; j < n; ++j) {
      if (j == i) continue;  // the self term contributes nothing
      accumulate_pair_acceleration<Real>(Real(ps.x[j]) - xi, Real(ps.y[j]) - yi, Real(ps.z[j]) - zi,
                                         Real(ps.mass[j]), eps2, ax, ay, az);
    }
    ps.ax[i] = G_ * double(ax);
    ps.ay[i] = G_ * double(ay);
    ps.az[i] = G_ * double(az);
  }
  ps.set_accelerations_valid();
}

template class DirectSumScalar<float>;
template class DirectSumScalar<double>;

}  // namespace nbody
