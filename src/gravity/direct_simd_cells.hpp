#pragma once
// The tree's quadrupole kernel (cell_accelerations): targets in the lanes, accepted cells
// broadcast, each cell's monopole and quadrupole from one 1/sqrt, added to the targets'
// accelerations (and potentials) that the body kernel (direct_simd_kernel.hpp) stored.
//
// Physics written once: the monopole is accumulate_pair_acceleration (pair_force.hpp), the
// quadrupole accumulate_quadrupole_acceleration (multipole.hpp), both instantiated with
// Lanes<V> below; after inlining the compiler computes their identical r^2 and 1/sqrt once
// (one vrsqrtps per cell and i-vector in the loop). multipole.hpp's
// accumulate_cell_acceleration, the two in one with fewer operations, measured slower here
// (AVX2 float, one i-vector: 0.95 against 0.84 ns per interaction): its accumulation waits
// for the quadrupole's longer chain, where the monopole's part here is added early.
// Included, after direct_simd_kernel.hpp, only by direct_simd_baseline.cpp and
// direct_simd_avx2.cpp; internal linkage, as there.
#include <cstddef>
#include <type_traits>

#include "gravity/direct_simd_kernel.hpp"
#include "nbody/physics/multipole.hpp"
#include "nbody/physics/pair_force.hpp"

namespace nbody::simd {
namespace {

/// A GCC vector type with what multipole.hpp's scalar-looking code needs besides the
/// vector's own arithmetic: construction from a number (Real(2.5), Real x = 0), which
/// a GCC vector type refuses. Every operation is the vector's, so the code generated is
/// the plain vector code.
template <class V>
struct Lanes {
  V v;
  Lanes() = default;
  Lanes(V x) : v(x) {}  // NOLINT(google-explicit-constructor): vector arithmetic reads so
  template <class N, class = std::enable_if_t<std::is_arithmetic_v<N>>>
  Lanes(N s) : v(splat<V>(lane_t<V>(s))) {}  // NOLINT(google-explicit-constructor)

  friend Lanes operator+(Lanes a, Lanes b) { return a.v + b.v; }
  friend Lanes operator-(Lanes a, Lanes b) { return a.v - b.v; }
  friend Lanes operator*(Lanes a, Lanes b) { return a.v * b.v; }
  friend Lanes operator-(Lanes a) { return -a.v; }
  Lanes& operator+=(Lanes b) {
    v += b.v;
    return *this;
  }
  Lanes& operator-=(Lanes b) {
    v -= b.v;
    return *this;
  }
};

/// Math (PairMath<V> or another 1/sqrt of the includer's) for Lanes<V>.
template <class V, class Math>
struct LanesMath {
  static Lanes<V> safe_rsqrt(Lanes<V> r2) { return Math::safe_rsqrt(r2.v); }
};

/// One accepted cell into the accumulators of one i-vector: its monopole (the pair force)
/// and its quadrupole, with or without the potential.
template <bool WithPotential, class Math, class L>
inline void interact_cell(L dx, L dy, L dz, L m, const Quadrupole<L>& q, L eps2, L& ax, L& ay,
                          L& az, L& phi) {
  if constexpr (WithPotential) {
    accumulate_pair_acceleration_potential<L, Math>(dx, dy, dz, m, eps2, ax, ay, az, phi);
    accumulate_quadrupole_acceleration_potential<L, Math>(dx, dy, dz, q, eps2, ax, ay, az, phi);
  } else {
    accumulate_pair_acceleration<L, Math>(dx, dy, dz, m, eps2, ax, ay, az);
    accumulate_quadrupole_acceleration<L, Math>(dx, dy, dz, q, eps2, ax, ay, az);
  }
}

/// cell_accelerations for targets [i_begin, i_end) (i_end rounded up to the step): K
/// vectors of targets share each broadcast cell; the last KOther of them take 1/sqrt
/// through OtherMath. The results are added to what a.ax.. (a.phi) hold.
template <bool WithPotential, class V, int K, class OtherMath, int KOther>
void cells_range(const CellArgs<lane_t<V>>& a, std::size_t i_begin, std::size_t i_end) {
  using S = lane_t<V>;
  using L = Lanes<V>;
  using Math = LanesMath<V, PairMath<V>>;
  using Other = LanesMath<V, OtherMath>;
  constexpr std::size_t lanes = sizeof(V) / sizeof(S);
  constexpr std::size_t step = std::size_t(K) * lanes;
  static_assert(kStep % step == 0, "kStep must hold whole kernel steps");
  const L eps2 = splat<V>(a.eps2);
  const CellSource<S>* const cells = a.cells;
  const std::size_t n = a.n;
  for (std::size_t i = i_begin; i < i_end; i += step) {
    L xi[K], yi[K], zi[K], ax[K], ay[K], az[K], phi[K];
    for (int k = 0; k < K; ++k) {
      const std::size_t o = i + std::size_t(k) * lanes;
      xi[k] = load<V>(a.tx + o);
      yi[k] = load<V>(a.ty + o);
      zi[k] = load<V>(a.tz + o);
      ax[k] = load<V>(a.ax + o);
      ay[k] = load<V>(a.ay + o);
      az[k] = load<V>(a.az + o);
      phi[k] = WithPotential ? load<V>(a.phi + o) : V{};
    }
    for (std::size_t j = 0; j < n; ++j) {
      const CellSource<S>& c = cells[j];
      const L xj = splat<V>(c.x), yj = splat<V>(c.y), zj = splat<V>(c.z), mj = splat<V>(c.m);
      const Quadrupole<L> q{splat<V>(c.xx), splat<V>(c.yy), splat<V>(c.zz), splat<V>(c.xy),
                            splat<V>(c.xz), splat<V>(c.yz), splat<V>(c.tr)};
      for (int k = 0; k < K - KOther; ++k) {
        interact_cell<WithPotential, Math>(xj - xi[k], yj - yi[k], zj - zi[k], mj, q, eps2, ax[k],
                                           ay[k], az[k], phi[k]);
      }
      for (int k = K - KOther; k < K; ++k) {
        interact_cell<WithPotential, Other>(xj - xi[k], yj - yi[k], zj - zi[k], mj, q, eps2, ax[k],
                                            ay[k], az[k], phi[k]);
      }
    }
    for (int k = 0; k < K; ++k) {
      const std::size_t o = i + std::size_t(k) * lanes;
      store<V>(a.ax + o, ax[k].v);
      store<V>(a.ay + o, ay[k].v);
      store<V>(a.az + o, az[k].v);
      if constexpr (WithPotential) store<V>(a.phi + o, phi[k].v);
    }
  }
}

/// The cell kernel's entry: cells_range with or without potentials, as a.phi asks.
template <class V, int K, class OtherMath = PairMath<V>, int KOther = 0>
void cells(const CellArgs<lane_t<V>>& a, std::size_t i_begin, std::size_t i_end) {
  if (a.phi != nullptr) {
    cells_range<true, V, K, OtherMath, KOther>(a, i_begin, i_end);
  } else {
    cells_range<false, V, K, OtherMath, KOther>(a, i_begin, i_end);
  }
}

}  // namespace
}  // namespace nbody::simd
