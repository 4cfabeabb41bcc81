#pragma once
// The per-body arithmetic of the neighbourhood density (cell_density.hpp), host and device:
// the CPU loop and the CUDA kernels (simulation/cuda/cell_density.cu) call these, so that
// the same positions give the same cells.
#include <cstddef>
#include <cstdint>

#include "core/morton.hpp"
#include "nbody/host_device.hpp"
#include "nbody/physics/timestep.hpp"

namespace nbody::density {

/// Morton key bits per axis: as the trees (21 in 3D, 31 in 2D).
NBODY_HD int key_bits(int dim) {
  return dim == 2 ? 31 : 21;
}

/// The cube of the finite coordinates' bounds lo[a] <= hi[a] (an axis with lo > hi had
/// none): its corner and side (1 when every body sits at one point, or none is finite).
NBODY_HD void cube(const double* lo, const double* hi, int dim, double* corner, double* side) {
  *side = 0;
  for (int a = 0; a < 3; ++a) corner[a] = 0;
  for (int a = 0; a < dim; ++a) {
    if (!(lo[a] <= hi[a])) continue;
    corner[a] = lo[a];
    *side = *side > hi[a] - lo[a] ? *side : hi[a] - lo[a];
  }
  if (!(*side > 0) || !(*side < INFINITY)) *side = 1;
}

/// The key of a point in the cube of corner lo and 2^bits cells a side (scale: cells per
/// unit length); coordinates outside (or not finite) are clamped to the cube.
NBODY_HD std::uint64_t key(const double* lo, double scale, int dim, double x, double y, double z) {
  const double cells = double(std::uint64_t(1) << key_bits(dim));  // ldexp(1, bits), folded
  const double c[3] = {x, y, z};
  std::uint64_t k = 0;
  for (int a = 0; a < dim; ++a) {
    const double q = (c[a] - lo[a]) * scale;
    const std::uint64_t v = q >= 0 ? std::uint64_t(q < cells - 1 ? q : cells - 1) : 0;
    k |= spread(v, dim) << (dim - 1 - a);
  }
  return k;
}

/// The deepest level (0: the root) of a cell holding both keys.
NBODY_HD int common_level(std::uint64_t a, std::uint64_t b, int dim) {
  const int bits = key_bits(dim);
  const std::uint64_t diff = a ^ b;
  if (diff == 0) return bits;
#if defined(__CUDA_ARCH__)
  const int zeros = __clzll(static_cast<long long>(diff));
#else
  const int zeros = __builtin_clzll(diff);
#endif
  return (zeros - (64 - dim * bits)) / dim;
}

/// The first index in [from, to) of sorted `keys` whose key is > `key` (upper) or >= (not).
NBODY_HD std::size_t bound(const std::uint64_t* keys, std::size_t from, std::size_t to,
                           std::uint64_t key, bool upper) {
  while (from < to) {
    const std::size_t mid = from + (to - from) / 2;
    if (upper ? keys[mid] <= key : keys[mid] < key) {
      from = mid + 1;
    } else {
      to = mid;
    }
  }
  return from;
}

/// The level of sorted position p's cell: the deepest of the runs [s, s + want) holding p
/// (run_level[s]: common_level of the run's ends).
NBODY_HD int cell_level(const std::uint8_t* run_level, std::size_t n, std::size_t want,
                        std::size_t p) {
  const std::size_t runs = n - want + 1;
  const std::size_t first = p + 1 >= want ? p + 1 - want : 0;
  const std::size_t last = p < runs - 1 ? p : runs - 1;
  int level = 0;
  for (std::size_t s = first; s <= last; ++s)
    level = run_level[s] > level ? int(run_level[s]) : level;
  return level;
}

/// The keys of the cell at `level` that holds `key`: [lo, hi].
NBODY_HD void cell_keys(std::uint64_t key, int level, int dim, std::uint64_t* lo,
                        std::uint64_t* hi) {
  const int shift = dim * (key_bits(dim) - level);
  *lo = key >> shift << shift;
  *hi = *lo | ((std::uint64_t(1) << shift) - 1);
}

/// omega^2 of the cell at `level` with keys [lo, hi] that holds sorted position p of n: its
/// mass (its run of keys found on both sides of p) over its volume.
NBODY_HD double cell_omega2_at(const std::uint64_t* keys, const double* mass_before, std::size_t n,
                               std::size_t p, int level, std::uint64_t lo, std::uint64_t hi,
                               double side, double G, double softening) {
  const std::size_t b = bound(keys, 0, p, lo, false);
  const std::size_t e = bound(keys, p, n, hi, true);
  return cell_omega2(G, mass_before[e] - mass_before[b], ldexp(side, -level), softening);
}

/// omega^2 of sorted position p of n (keys sorted; mass_before[q] the mass of the bodies
/// before position q; run_level[s] common_level of the ends of the run [s, s + want)): the
/// deepest of those runs holding p gives the cell; its mass over its volume.
NBODY_HD double omega2_at(const std::uint64_t* keys, const double* mass_before,
                          const std::uint8_t* run_level, std::size_t n, std::size_t want,
                          std::size_t p, int dim, double side, double G, double softening) {
  const int level = cell_level(run_level, n, want, p);
  std::uint64_t lo = 0, hi = 0;
  cell_keys(keys[p], level, dim, &lo, &hi);
  return cell_omega2_at(keys, mass_before, n, p, level, lo, hi, side, G, softening);
}

}  // namespace nbody::density
