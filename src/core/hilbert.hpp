#pragma once
// Peano-Hilbert keys, host and device, for the domain decomposition's ownership
// (parallel/domain.hpp): the same integer grid as the Morton keys (core/morton.hpp; 21 bits
// an axis in 3D, 31 in 2D), ordered along the Hilbert curve instead of the Z curve.
//
// Skilling's transform (J. Skilling 2004, "Programming the Hilbert curve", AIP Conf. Proc.
// 707, 381): the coordinates are rotated and reflected in place, top bit first, into the
// "transposed" Hilbert index, whose bits interleaved (axis 0 the most significant of each
// digit) are the key. Every step at bit q changes only the bits below q, so a key's top L
// digits depend only on the top L bits of each coordinate: the bodies of one level-L octree
// (quadtree) cell share their top L digits, and the cell is one aligned range of keys of
// the width a Morton cell has. Cuts at multiples of a cell's width stay cell boundaries.
#include <cstdint>

#include "core/morton.hpp"
#include "nbody/host_device.hpp"

namespace nbody {

/// Inverse of spread3: every third bit (bit 3k -> bit k), 21 bits.
NBODY_HD std::uint64_t compact3(std::uint64_t v) {
  v &= 0x1249249249249249ULL;
  v = (v | v >> 2) & 0x10c30c30c30c30c3ULL;
  v = (v | v >> 4) & 0x100f00f00f00f00fULL;
  v = (v | v >> 8) & 0x1f0000ff0000ffULL;
  v = (v | v >> 16) & 0x1f00000000ffffULL;
  v = (v | v >> 32) & 0x1fffffULL;
  return v;
}

/// Inverse of spread2: every other bit (bit 2k -> bit k), 31 bits.
NBODY_HD std::uint64_t compact2(std::uint64_t v) {
  v &= 0x5555555555555555ULL;
  v = (v | v >> 1) & 0x3333333333333333ULL;
  v = (v | v >> 2) & 0x0f0f0f0f0f0f0f0fULL;
  v = (v | v >> 4) & 0x00ff00ff00ff00ffULL;
  v = (v | v >> 8) & 0x0000ffff0000ffffULL;
  v = (v | v >> 16) & 0x7fffffffULL;
  return v;
}

/// The Hilbert key of grid coordinates x[0..Dim) (each < 2^Bits; Dim 2 or 3, Dim * Bits
/// <= 64): a bijection of the grid onto [0, 2^(Dim * Bits)) along which consecutive keys
/// are face neighbours. Dim and Bits fixed at compile time: the loops unroll and a loop over
/// bodies vectorises (branch-free: the bits are random, a branch on them mispredicts half
/// the time; Skilling's loop with branches took 150 ns a key, this one 70, and 12
/// vectorised with AVX2: parallel/domain_keys.cpp).
template <int Dim, int Bits>
NBODY_HD std::uint64_t hilbert_key(std::uint32_t x0, std::uint32_t x1, std::uint32_t x2 = 0) {
  std::uint32_t x[3] = {x0, x1, x2};
  // Inverse undo: by each axis' bit b, invert (bit set) or exchange with axis 0 (bit clear)
  // the bits below b.
  for (int b = Bits - 1; b > 0; --b) {
    const std::uint32_t below = (std::uint32_t(1) << b) - 1;
    for (int i = 0; i < Dim; ++i) {
      const std::uint32_t set = 0u - ((x[i] >> b) & 1u);
      const std::uint32_t t = (x[0] ^ x[i]) & below & ~set;  // exchange (i = 0: nothing)
      x[0] ^= t ^ (below & set);                             // or invert
      x[i] ^= t;
    }
  }
  // Gray encode: then every bit j flipped by the parity of the last axis' bits above j
  // (Skilling's loop t ^= q - 1 for each set bit q > 1, as a suffix xor).
  for (int i = 1; i < Dim; ++i) x[i] ^= x[i - 1];
  std::uint32_t t = x[Dim - 1] >> 1;
  t ^= t >> 1, t ^= t >> 2, t ^= t >> 4, t ^= t >> 8, t ^= t >> 16;
  // The transposed index interleaved, axis 0 the most significant bit of each digit.
  if constexpr (Dim == 2) {
    return spread2(x[1] ^ t) | spread2(x[0] ^ t) << 1;
  } else {
    return spread3(x[2] ^ t) | spread3(x[1] ^ t) << 1 | spread3(x[0] ^ t) << 2;
  }
}

/// The Hilbert key of the grid point whose Morton key (core/morton.hpp's interleaving, x
/// bit 0 of each digit) is `morton`, on the tree's grid (21 bits an axis in 3D, 31 in 2D):
/// so the two keys come from one quantisation.
NBODY_HD std::uint64_t hilbert_from_morton3(std::uint64_t morton) {
  return hilbert_key<3, 21>(std::uint32_t(compact3(morton)), std::uint32_t(compact3(morton >> 1)),
                            std::uint32_t(compact3(morton >> 2)));
}
NBODY_HD std::uint64_t hilbert_from_morton2(std::uint64_t morton) {
  return hilbert_key<2, 31>(std::uint32_t(compact2(morton)), std::uint32_t(compact2(morton >> 1)));
}
NBODY_HD std::uint64_t hilbert_from_morton(std::uint64_t morton, int dim) {
  return dim == 2 ? hilbert_from_morton2(morton) : hilbert_from_morton3(morton);
}

}  // namespace nbody
