#pragma once
// The pair terms of the GPU force kernels (direct sum and tree walk) with the potential
// chosen at compile time: Pot false calls the plain functions of physics/pair_force.hpp and
// multipole.hpp (the code the kernels ran before potentials existed), Pot true their
// *_potential versions, whose accelerations have the same bits. Only .cu files include this.
#include <cuda_runtime.h>

#include "nbody/physics/multipole.hpp"
#include "nbody/physics/pair_force.hpp"

namespace nbody::cuda_gravity {

/// One-sided loops (every direct kernel, the band-internal tasks of the each-pair-once
/// kernel, the tree's opened leaves) meet body i itself. Its pull is 0 (d = 0), but with
/// softening its potential would be -m_i / eps, which phi_i (a sum over j != i) must not
/// hold: `self` marks that pair, whose mass is then taken as 0 (Pot only). Not a
/// correction after the sum: float cannot take m_i / eps back out of a sum it dwarfs (a
/// central star with small softening), and with mass 0 the acceleration keeps its bits
/// (s * d with d = 0 is +0 either way).
template <bool Pot, class Real, class Math>
__device__ __forceinline__ void pair_term(Real dx, Real dy, Real dz, Real mj, Real eps2, Real& ax,
                                          Real& ay, Real& az, Real& phi, bool self) {
  if constexpr (Pot) {
    accumulate_pair_acceleration_potential<Real, Math>(dx, dy, dz, self ? Real(0) : mj, eps2, ax,
                                                       ay, az, phi);
  } else {
    (void)self;
    accumulate_pair_acceleration<Real, Math>(dx, dy, dz, mj, eps2, ax, ay, az);
  }
}

template <bool Pot, class Real, class Math>
__device__ __forceinline__ void mutual_pair_term(Real dx, Real dy, Real dz, Real mi, Real mj,
                                                 Real eps2, Real& axi, Real& ayi, Real& azi,
                                                 Real& phii, Real& axj, Real& ayj, Real& azj,
                                                 Real& phij) {
  if constexpr (Pot) {
    accumulate_mutual_pair_acceleration_potential<Real, Math>(dx, dy, dz, mi, mj, eps2, axi, ayi,
                                                              azi, phii, axj, ayj, azj, phij);
  } else {
    accumulate_mutual_pair_acceleration<Real, Math>(dx, dy, dz, mi, mj, eps2, axi, ayi, azi, axj,
                                                    ayj, azj);
  }
}

/// An accepted cell's monopole and quadrupole together (multipole.hpp: one 1/sqrt).
template <bool Pot, class Real, class Math>
__device__ __forceinline__ void cell_term(Real dx, Real dy, Real dz, Real m,
                                          const Quadrupole<Real>& q, Real eps2, Real& ax, Real& ay,
                                          Real& az, Real& phi) {
  if constexpr (Pot) {
    accumulate_cell_acceleration_potential<Real, Math>(dx, dy, dz, m, q, eps2, ax, ay, az, phi);
  } else {
    accumulate_cell_acceleration<Real, Math>(dx, dy, dz, m, q, eps2, ax, ay, az);
  }
}

}  // namespace nbody::cuda_gravity
