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

/// The Hilbert key of grid coordinates c[0..dim) (each < 2^bits; dim 2 or 3, dim * bits
/// <= 64): a bijection of the grid onto [0, 2^(dim * bits)) along which consecutive keys
/// are face neighbours.
NBODY_HD std::uint64_t hilbert_key(const std::uint32_t* c, int dim, int bits) {
  std::uint32_t x[3] = {c[0], c[1], dim == 3 ? c[2] : 0u};
  const std::uint32_t top = std::uint32_t(1) << (bits - 1);
  // Inverse undo: rotate and reflect the lower bits by each axis' bit q.
  for (std::uint32_t q = top; q > 1; q >>= 1) {
    const std::uint32_t below = q - 1;
    for (int i = 0; i < dim; ++i) {
      if (x[i] & q) {
        x[0] ^= below;  // invert
      } else {
        const std::uint32_t t = (x[0] ^ x[i]) & below;  // exchange
        x[0] ^= t;
        x[i] ^= t;
      }
    }
  }
  // Gray encode.
  for (int i = 1; i < dim; ++i) x[i] ^= x[i - 1];
  std::uint32_t t = 0;
  for (std::uint32_t q = top; q > 1; q >>= 1)
    if (x[dim - 1] & q) t ^= q - 1;
  for (int i = 0; i < dim; ++i) x[i] ^= t;
  // The transposed index interleaved, axis 0 the most significant bit of each digit.
  std::uint64_t key = 0;
  for (int b = bits - 1; b >= 0; --b)
    for (int i = 0; i < dim; ++i) key = key << 1 | ((x[i] >> b) & 1u);
  return key;
}

/// The Hilbert key of the grid point whose Morton key (core/morton.hpp's interleaving, x
/// bit 0 of each digit) is `morton`: so the two keys come from one quantisation.
NBODY_HD std::uint64_t hilbert_from_morton(std::uint64_t morton, int dim) {
  if (dim == 2) {
    const std::uint32_t c[2] = {std::uint32_t(compact2(morton)),
                                std::uint32_t(compact2(morton >> 1))};
    return hilbert_key(c, 2, 31);
  }
  const std::uint32_t c[3] = {std::uint32_t(compact3(morton)), std::uint32_t(compact3(morton >> 1)),
                              std::uint32_t(compact3(morton >> 2))};
  return hilbert_key(c, 3, 21);
}

}  // namespace nbody
