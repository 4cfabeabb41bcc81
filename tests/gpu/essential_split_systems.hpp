#pragma once
// The systems of the GPU essential-tree tests (test_tree_essential_cuda.cpp): a Plummer sphere
// or a 2D disk split into two halves A and B (at a cell boundary, by a random plane, or
// interleaved like a curve's domains), with the double direct sum at a sample of A's bodies.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "tree/cuda/tree_gpu.cuh"

namespace nbody::essential_split {

using Body = gpu::Vec4<double>;

constexpr double kEps = 0.01;
constexpr std::size_t kN = 200000;
constexpr std::size_t kSample = 1000;  // A's bodies checked against the direct sum

/// A Plummer sphere (3D) or a 2D exponential disk, total mass 1.
inline std::vector<Body> system_of(int dim, std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<Body> b(n);
  for (auto& x : b) {
    if (dim == 3) {
      const double r = 1.0 / std::sqrt(std::pow(std::max(u(rng), 1e-12), -2.0 / 3.0) - 1.0);
      const double c = 2 * u(rng) - 1, phi = 6.283185307179586 * u(rng), s = std::sqrt(1 - c * c);
      x = {r * s * std::cos(phi), r * s * std::sin(phi), r * c, 1.0 / double(n)};
    } else {
      const double r = -0.3 * std::log(std::max(u(rng), 1e-12)), phi = 6.283185307179586 * u(rng);
      x = {r * std::cos(phi), r * std::sin(phi), 0.0, 1.0 / double(n)};
    }
  }
  return b;
}

/// Two halves of one system. The trees of A and B are built in the root cube of the whole
/// (set_root_box), so that their cells are cells of the one tree of A and B, as in a
/// distributed run.
struct Split {
  int dim = 3;
  std::vector<Body> a, b, all;
  cuda_tree::Bounds root{};         // of the whole, from its float coordinates (as the build's)
  std::vector<std::size_t> sample;  // indices into a
  std::vector<Body> exact;          // direct sum (ax, ay, az, phi) at a[sample[k]]
};

inline Split split_of(const std::string& kind, int dim) {
  const std::vector<Body> s = system_of(dim, kN, dim == 3 ? 11 : 12);
  Split sp;
  sp.dim = dim;
  std::mt19937_64 rng(5);
  std::normal_distribution<double> g;
  double nx = g(rng), ny = g(rng), nz = dim == 3 ? g(rng) : 0.0;
  for (int k = 0; k < 3; ++k) sp.root.lo[k] = 1e300, sp.root.hi[k] = -1e300;
  for (const Body& x : s) {
    const double p[3] = {double(float(x.x)), double(float(x.y)),
                         dim == 2 ? 0.0 : double(float(x.z))};
    for (int k = 0; k < 3; ++k) {
      sp.root.lo[k] = std::min(sp.root.lo[k], p[k]);
      sp.root.hi[k] = std::max(sp.root.hi[k], p[k]);
    }
  }
  // The interleaved halves: a checkerboard of the root cube's cells of about 0.5 (Morton-like
  // domains at one level: only the larger cells hold bodies of both halves).
  double extent = 0;
  for (int k = 0; k < 3; ++k) extent = std::max(extent, sp.root.hi[k] - sp.root.lo[k]);
  const double cell = extent / std::exp2(std::ceil(std::log2(extent / 0.5)));
  auto grid = [&](double v, int k) {
    return long(std::floor((v - 0.5 * (sp.root.lo[k] + sp.root.hi[k]) + 0.5 * extent) / cell));
  };
  // The cell boundary (of the interleaved cells' level) nearest to x = 0.
  const double x_low = 0.5 * (sp.root.lo[0] + sp.root.hi[0]) - 0.5 * extent;
  const double x_cut = x_low + std::round((0.0 - x_low) / cell) * cell;
  for (const Body& x : s) {
    // x: at a boundary of the root cube's cells (the decomposition's cuts are always cell
    // boundaries); plane: a random plane, which cuts through cells of every size.
    bool in_a = x.x < x_cut;
    if (kind == "plane") in_a = nx * x.x + ny * x.y + nz * x.z < 0.1;
    if (kind == "interleaved") in_a = ((grid(x.x, 0) + grid(x.y, 1) + grid(x.z, 2)) & 1) == 0;
    (in_a ? sp.a : sp.b).push_back(x);
  }
  sp.all = sp.a;
  sp.all.insert(sp.all.end(), sp.b.begin(), sp.b.end());
  for (std::size_t k = 0; k < kSample; ++k) sp.sample.push_back(k * sp.a.size() / kSample);
  for (const std::size_t i : sp.sample) {
    Body e{0, 0, 0, 0};
    const Body& t = sp.a[i];
    for (const Body& x : sp.all) {
      const double dx = x.x - t.x, dy = x.y - t.y, dz = x.z - t.z;
      const double r2 = dx * dx + dy * dy + dz * dz;
      if (r2 == 0) continue;  // the body itself
      const double inv = 1.0 / std::sqrt(r2 + kEps * kEps), w = x.w * inv * inv * inv;
      e.x += w * dx, e.y += w * dy, e.z += w * dz, e.w -= x.w * inv;
    }
    sp.exact.push_back(e);
  }
  return sp;
}

inline const Split& split(const std::string& kind, int dim) {
  static std::map<std::string, Split> cache;
  const std::string key = kind + std::to_string(dim);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, split_of(kind, dim)).first;
  return it->second;
}

}  // namespace nbody::essential_split
