#pragma once
// The fast direct-sum kernel, written once as a template over a GCC vector type:
// i-bodies in the lanes, body j broadcast to all lanes, the physics from
// nbody::accumulate_pair_acceleration<V> (pair_force.hpp), unchanged.
//
// Included only by direct_simd_baseline.cpp and direct_simd_avx2.cpp, which compile it
// for different instruction sets. So that the two compilations never emit a shared
// symbol (the linker would keep one copy, possibly AVX2 code on the baseline path):
//  - everything defined here has internal linkage (unnamed namespace);
//  - each includer uses its own vector types (16-byte vectors for the baseline,
//    32-byte for AVX2), so the nbody::PairMath<V> specialisations and the
//    accumulate_pair_acceleration<V> instantiations differ between them too.
// The includer specialises nbody::PairMath<V> for its vector types (hardware rsqrt plus
// the refinements below) before it instantiates accelerations_range<V, K>.
#include <cstddef>
#include <cstring>
#include <type_traits>
#include <utility>

#include "gravity/direct_simd_kernels.hpp"
#include "nbody/physics/pair_force.hpp"

namespace nbody::simd {
namespace {

/// Element type of a GCC vector type.
template <class V>
using lane_t = std::remove_cvref_t<decltype(std::declval<V>()[0])>;

/// All lanes set to s.
template <class V>
inline V splat(lane_t<V> s) {
  return s - V{};  // s - 0 == s exactly (also for -0), so this folds to a broadcast
}

template <class V>
inline V load(const lane_t<V>* p) {
  V v;
  std::memcpy(&v, p, sizeof v);  // one vector load; no aliasing questions
  return v;
}

template <class V>
inline void store(lane_t<V>* p, V v) {
  std::memcpy(p, &v, sizeof v);
}

/// y where r2 > 0, else 0: the self term (and coincident bodies without softening) then
/// contributes nothing. Also clears the inf/NaN that rsqrt(0) and its refinement give.
template <class V>
inline V zero_where_not_positive(V r2, V y) {
  return r2 > V{} ? y : V{};
}

/// One Newton-Raphson step for 1/sqrt(x): y(3 - x y^2)/2. A relative error e in y
/// becomes about -1.5 e^2 (hardware rsqrt's 1.5*2^-12 becomes ~2e-7, float's ulp).
/// Four multiply/FMA operations, none of them on the divider.
template <class V>
inline V rsqrt_newton_step(V x, V y) {
  using S = lane_t<V>;
  const V t = x * y;
  const V d = S(1) - t * y;  // 1 - x y^2, one FMA
  return y + (S(0.5) * y) * d;
}

/// Refines y ~ 1/sqrt(x) with relative error up to ~4e-4 (a float rsqrt) to double
/// accuracy in one step: y (1 - d)^(-1/2), d = 1 - x y^2, with the binomial series to
/// d^4 (truncation ~0.25 d^5 < 1e-16). Seven multiply/FMA operations, against eight for
/// two Newton steps that reach only ~6e-14.
template <class V>
inline V rsqrt_refine_series4(V x, V y) {
  using S = lane_t<V>;
  const V t = x * y;
  const V d = S(1) - t * y;
  const V p = ((S(35.0 / 128.0) * d + S(5.0 / 16.0)) * d + S(3.0 / 8.0)) * d + S(0.5);
  return y + (y * d) * p;
}

/// Accelerations (per unit G) of the i-bodies [i_begin, i_end) from all a.n bodies.
/// K vectors of i-bodies share each broadcast of body j (register blocking: K
/// independent dependency chains per j, and the j loads amortised over K*lanes bodies).
template <class V, int K>
void accelerations_range(const KernelArgs<lane_t<V>>& a, std::size_t i_begin,
                         std::size_t i_end) {
  using S = lane_t<V>;
  constexpr std::size_t lanes = sizeof(V) / sizeof(S);
  constexpr std::size_t step = K * lanes;
  static_assert(kBlock % step == 0, "an i-block must hold whole kernel steps");

  const S* const xs = a.x;
  const S* const ys = a.y;
  const S* const zs = a.z;
  const S* const ms = a.m;
  const std::size_t n = a.n;
  const V eps2 = splat<V>(a.eps2);

  for (std::size_t i = i_begin; i < i_end; i += step) {
    V xi[K], yi[K], zi[K], ax[K], ay[K], az[K];
    for (int k = 0; k < K; ++k) {
      const std::size_t o = i + std::size_t(k) * lanes;
      xi[k] = load<V>(xs + o);
      yi[k] = load<V>(ys + o);
      zi[k] = load<V>(zs + o);
      ax[k] = ay[k] = az[k] = V{};
    }
    for (std::size_t j = 0; j < n; ++j) {
      const V xj = splat<V>(xs[j]);
      const V yj = splat<V>(ys[j]);
      const V zj = splat<V>(zs[j]);
      const V mj = splat<V>(ms[j]);
      for (int k = 0; k < K; ++k) {
        accumulate_pair_acceleration<V>(xj - xi[k], yj - yi[k], zj - zi[k], mj, eps2, ax[k],
                                        ay[k], az[k]);
      }
    }
    for (int k = 0; k < K; ++k) {
      const std::size_t o = i + std::size_t(k) * lanes;
      store<V>(a.ax + o, ax[k]);
      store<V>(a.ay + o, ay[k]);
      store<V>(a.az + o, az[k]);
    }
  }
}

}  // namespace
}  // namespace nbody::simd
