#pragma once
// The fast direct-sum kernel, written once as a template over a GCC vector type:
// i-bodies in the lanes, body j broadcast to all lanes, the physics from
// nbody::accumulate_pair_acceleration<V> (pair_force.hpp), unchanged, or its _potential
// twin when potentials are asked for.
//
// Included only by direct_simd_baseline.cpp and direct_simd_avx2.cpp, which compile it
// for different instruction sets. So that the two compilations never emit a shared
// symbol (the linker would keep one copy, possibly AVX2 code on the baseline path):
//  - everything defined here has internal linkage (unnamed namespace);
//  - each includer uses its own vector types (16-byte vectors for the baseline,
//    32-byte for AVX2), so the nbody::PairMath<V> specialisations and the
//    accumulate_pair_acceleration<V> instantiations differ between them too.
// The includer specialises nbody::PairMath<V> for its vector types (hardware rsqrt plus
// the refinements below) before it instantiates forces<V, K>.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <type_traits>
#include <utility>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

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

/// y where y > 0, else 0 -- in particular 0 where y is NaN.
///
/// This is how the vector safe_rsqrt gives 0 for r2 == 0: rsqrt(0) is +inf, and the
/// refinement's first product r2 * y0 = 0 * inf is NaN, which propagates to the result.
/// (r2 = +inf gives rsqrt 0, inf * 0 = NaN, so 0, as 1/sqrt(inf) = 0 does.) On x86 it
/// is one max instruction, which returns its second operand when either is NaN; a
/// compare and a mask on r2 would be two, and the refinement needs no special case.
template <class V>
inline V positive_or_zero(V y) {
#if defined(__SSE2__)
  using S = lane_t<V>;
#if defined(__AVX__)
  if constexpr (sizeof(V) == 32 && std::is_same_v<S, float>) return _mm256_max_ps(y, V{});
  if constexpr (sizeof(V) == 32 && std::is_same_v<S, double>) return _mm256_max_pd(y, V{});
#endif
  if constexpr (sizeof(V) == 16 && std::is_same_v<S, float>) return _mm_max_ps(y, V{});
  if constexpr (sizeof(V) == 16 && std::is_same_v<S, double>) return _mm_max_pd(y, V{});
#endif
  return y > V{} ? y : V{};  // same semantics, compare + mask
}

/// One Newton-Raphson step for 1/sqrt(x): y + y(1 - x y^2)/2. A relative error e in y
/// becomes about -1.5 e^2 (hardware rsqrt's <= 1.5*2^-12 becomes <= ~2e-7, about float's
/// rounding). Four multiply/FMA operations, none of them on the divider.
template <class V>
inline V rsqrt_newton_step(V x, V y) {
  using S = lane_t<V>;
  const V t = x * y;
  const V d = S(1) - t * y;  // 1 - x y^2, one FMA
  return y + (S(0.5) * y) * d;
}

/// Refines y ~ 1/sqrt(x), relative error e, in one step: 1/sqrt(x) = y (1 - d)^(-1/2)
/// with d = 1 - x y^2 ~ -2e, and the binomial series to d^3; the truncation is
/// (35/128) d^4. From a float rsqrt (|e| <= 1.5*2^-12, |d| <= 7.3e-4) that is <= 8e-14
/// (<= 2e-14 with this AMD CPU's rsqrt, |e| <= 2.6e-4): the accuracy of two Newton steps
/// (<= 6e-14) in six multiply/FMA operations instead of eight, and a shorter dependency
/// chain, which is what limits the double kernel.
template <class V>
inline V rsqrt_refine_series3(V x, V y) {
  using S = lane_t<V>;
  const V t = x * y;
  const V d = S(1) - t * y;
  const V p = (S(5.0 / 16.0) * d + S(3.0 / 8.0)) * d + S(0.5);
  return y + (y * d) * p;
}

/// One pair into the accumulators of one i-vector: with the potential or without it
/// (then exactly the plain acceleration, as before potentials existed).
template <bool WithPotential, class Math, class V>
inline void interact(V dx, V dy, V dz, V mj, V eps2, V& ax, V& ay, V& az, V& phi) {
  if constexpr (WithPotential) {
    accumulate_pair_acceleration_potential<V, Math>(dx, dy, dz, mj, eps2, ax, ay, az, phi);
  } else {
    accumulate_pair_acceleration<V, Math>(dx, dy, dz, mj, eps2, ax, ay, az);
  }
}

/// Forces (per unit G) of the targets [i_begin, i_end) (a.tx..) from all a.n sources, and
/// with WithPotential their potentials. K vectors of i-bodies share each broadcast of body
/// j (register blocking: K independent dependency chains per j, and the j loads amortised
/// over K*lanes bodies); the last KOther of them take 1/sqrt through OtherMath.
///
/// Which vectors: a step covers Stride * K vectors of targets and this takes vectors
/// First, First + Stride, ... of it (Stride 1: all of them, as without potentials; see
/// forces_with_potential for the others).
///
/// The self term: its acceleration is 0 (dx = 0), but with softening its potential is
/// -m_i/eps, which phi_i must not contain. Target i is source a.self_first + i, so for
/// each step only the `step` sources facing it can be a target itself: those are swept
/// apart, and the lane that meets itself keeps the phi it had before (exact: nothing
/// added and taken away again, which would lose digits when m_i/eps >> |phi_i|).
template <bool WithPotential, class V, int K, class OtherMath, int KOther, int Stride = 1,
          int First = 0>
void forces_range(const KernelArgs<lane_t<V>>& a, std::size_t i_begin, std::size_t i_end) {
  using S = lane_t<V>;
  constexpr std::size_t lanes = sizeof(V) / sizeof(S);
  constexpr std::size_t step = std::size_t(Stride) * K * lanes;
  static_assert(kBlock % step == 0, "an i-block must hold whole kernel steps");
  static_assert(kStep % step == 0, "kStep must hold whole kernel steps");
  // Where vector k starts in a step.
  constexpr auto offset = [](int k) { return std::size_t(First + k * Stride) * lanes; };

  const S* const xs = a.x;
  const S* const ys = a.y;
  const S* const zs = a.z;
  const S* const ms = a.m;
  const std::size_t n = a.n;
  const V eps2 = splat<V>(a.eps2);
  V lane[K];  // lane numbers within a step, for the self window
  for (int k = 0; k < K; ++k) {
    for (std::size_t l = 0; l < lanes; ++l) lane[k][l] = S(offset(k) + l);
  }

  for (std::size_t i = i_begin; i < i_end; i += step) {
    V xi[K], yi[K], zi[K], ax[K], ay[K], az[K], phi[K];
    for (int k = 0; k < K; ++k) {
      const std::size_t o = i + offset(k);
      xi[k] = load<V>(a.tx + o);
      yi[k] = load<V>(a.ty + o);
      zi[k] = load<V>(a.tz + o);
      ax[k] = ay[k] = az[k] = phi[k] = V{};
    }
    // Sources [j_begin, j_end). In the self window, source j is the target in lane
    // j - self of the step.
    auto sweep = [&](std::size_t j_begin, std::size_t j_end, auto self_window, std::size_t self) {
      constexpr bool window = decltype(self_window)::value;
      for (std::size_t j = j_begin; j < j_end; ++j) {
        const V xj = splat<V>(xs[j]);
        const V yj = splat<V>(ys[j]);
        const V zj = splat<V>(zs[j]);
        const V mj = splat<V>(ms[j]);
        [[maybe_unused]] V before[K];
        if constexpr (window) {
          for (int k = 0; k < K; ++k) before[k] = phi[k];
        }
        for (int k = 0; k < K - KOther; ++k) {
          interact<WithPotential, PairMath<V>>(xj - xi[k], yj - yi[k], zj - zi[k], mj, eps2, ax[k],
                                               ay[k], az[k], phi[k]);
        }
        // The last KOther vectors may take 1/sqrt another way, e.g. on an otherwise idle
        // divider.
        for (int k = K - KOther; k < K; ++k) {
          interact<WithPotential, OtherMath>(xj - xi[k], yj - yi[k], zj - zi[k], mj, eps2, ax[k],
                                             ay[k], az[k], phi[k]);
        }
        if constexpr (window) {
          const V me = splat<V>(S(j - self));
          for (int k = 0; k < K; ++k) phi[k] = lane[k] == me ? before[k] : phi[k];
        }
      }
    };
    if constexpr (WithPotential) {
      const std::size_t self = a.self_first + i;  // the source that is target i
      const std::size_t w0 = std::min(n, self), w1 = std::min(n, self + step);
      sweep(0, w0, std::false_type{}, self);
      sweep(w0, w1, std::true_type{}, self);
      sweep(w1, n, std::false_type{}, self);
    } else {
      sweep(0, n, std::false_type{}, 0);
    }
    for (int k = 0; k < K; ++k) {
      const std::size_t o = i + offset(k);
      store<V>(a.ax + o, ax[k]);
      store<V>(a.ay + o, ay[k]);
      store<V>(a.az + o, az[k]);
      if constexpr (WithPotential) store<V>(a.phi + o, phi[k]);
    }
  }
}

/// The potential path with KP i-vectors per broadcast instead of K (its K more
/// accumulators may make another blocking faster): K/KP passes over the targets, pass s
/// taking vectors s, s + K/KP, ... of each K-vector step. Every vector still takes 1/sqrt
/// as it does without potentials (its index in the step decides: the last KOther through
/// OtherMath), so the accelerations keep their bits; and interleaving the passes so puts
/// the vectors of both kinds of 1/sqrt in each pass, keeping both units busy.
template <class V, int K, class OtherMath, int KOther, int KP, int... Pass>
void forces_with_potential(const KernelArgs<lane_t<V>>& a, std::size_t i_begin, std::size_t i_end,
                           std::integer_sequence<int, Pass...>) {
  static_assert(K % KP == 0, "the passes must tile a step");
  constexpr int stride = K / KP;
  // How many of pass s's vectors s + k * stride are among the step's last KOther.
  constexpr auto other = [](int s) {
    int count = 0;
    for (int k = 0; k < KP; ++k) count += s + k * stride >= K - KOther ? 1 : 0;
    return count;
  };
  (forces_range<true, V, KP, OtherMath, other(Pass), stride, Pass>(a, i_begin, i_end), ...);
}

/// The kernel entry: forces_range with or without potentials, as a.phi asks; the
/// potential path blocked by KP i-vectors (forces_with_potential).
template <class V, int K, class OtherMath = PairMath<V>, int KOther = 0, int KP = K>
void forces(const KernelArgs<lane_t<V>>& a, std::size_t i_begin, std::size_t i_end) {
  if (a.phi != nullptr) {
    forces_with_potential<V, K, OtherMath, KOther, KP>(a, i_begin, i_end,
                                                       std::make_integer_sequence<int, K / KP>{});
  } else {
    forces_range<false, V, K, OtherMath, KOther>(a, i_begin, i_end);
  }
}

}  // namespace
}  // namespace nbody::simd
