#include "integrators/cell_density.hpp"

#include <algorithm>
#include <cmath>

#include "core/radix_sort.hpp"
#include "integrators/cell_density_rule.hpp"
#include "nbody/physics/timestep.hpp"

namespace nbody {
namespace {

// ~kDensityCellBodies + 30 operations a body: threads pay off from here.
constexpr std::size_t kParallelThreshold = 50000;

}  // namespace

void CellDensity::compute(const ParticleSystem& ps, int dim, double G, double softening,
                          std::vector<double>& omega2) {
  const std::size_t n = ps.size();
  omega2.resize(n);
  if (n == 0) return;
  const double* c[3] = {ps.x.data(), ps.y.data(), ps.z.data()};
  // The bounding cube of the finite coordinates (a body elsewhere gets key 0 or the
  // largest: its density is a guess, and the run stops on it anyway).
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int a = 0; a < dim; ++a) {
    for (std::size_t i = 0; i < n; ++i) {
      if (!std::isfinite(c[a][i])) continue;
      lo[a] = std::min(lo[a], c[a][i]);
      hi[a] = std::max(hi[a], c[a][i]);
    }
  }
  double corner[3], side = 0;
  density::cube(lo, hi, dim, corner, &side);
  const double scale = std::ldexp(1.0, density::key_bits(dim)) / side;
  keyed_.resize(n);
#pragma omp parallel for schedule(static) if (n > kParallelThreshold)
  for (std::ptrdiff_t i = 0; i < std::ptrdiff_t(n); ++i)
    keyed_[i] = {density::key(corner, scale, dim, ps.x[i], ps.y[i], ps.z[i]), std::uint32_t(i)};
  radix_sort(keyed_, tmp_, dim * density::key_bits(dim));
  keys_.resize(n);
  mass_before_.resize(n + 1);
  double sum = 0;
  for (std::size_t p = 0; p < n; ++p) {
    keys_[p] = keyed_[p].first;
    mass_before_[p] = sum;
    sum += ps.mass[keyed_[p].second];
  }
  mass_before_[n] = sum;

  // A cell holds want bodies and sorted position p exactly when some run of want sorted
  // positions around p lies in it: the deepest such cell is the deepest common cell of the
  // two ends of one of the runs of want that hold p.
  const std::size_t want = std::min<std::size_t>(kDensityCellBodies, n);
  const std::size_t runs = n - want + 1;
  level_.resize(runs);
#pragma omp parallel for schedule(static) if (n > kParallelThreshold)
  for (std::ptrdiff_t s = 0; s < std::ptrdiff_t(runs); ++s)
    level_[s] = std::uint8_t(density::common_level(keys_[s], keys_[s + want - 1], dim));
  // The positions [from, to) in order (omega2_at's steps): neighbours in key order
  // mostly share their cell, whose bounds are then reused, not searched again (two binary
  // searches of the whole key line, with their mispredicted branches, were most of the
  // ~115 ns a body this took at 20,000 bodies).
  auto positions = [&](std::size_t from, std::size_t to) {
    int level = -1;
    std::uint64_t first_key = 0, last_key = 0;  // the cell's keys
    double cell = 0;                            // its omega^2
    for (std::size_t p = from; p < to; ++p) {
      const int l = density::cell_level(level_.data(), n, want, p);
      if (l != level || keys_[p] > last_key) {
        level = l;
        density::cell_keys(keys_[p], l, dim, &first_key, &last_key);
        cell = density::cell_omega2_at(keys_.data(), mass_before_.data(), n, p, l, first_key,
                                       last_key, side, G, softening);
      }
      omega2[keyed_[p].second] = cell;
    }
  };
  if (n > kParallelThreshold) {  // no OpenMP region below: its entry costs more than the loop
    const auto chunks = std::ptrdiff_t(64);
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t k = 0; k < chunks; ++k)
      positions(n * std::size_t(k) / std::size_t(chunks),
                n * std::size_t(k + 1) / std::size_t(chunks));
  } else {
    positions(0, n);
  }
}

}  // namespace nbody
