#pragma once
// Where the ranks' bodies are, coarsely: the cells of a 32^3 grid over the bulk of every
// rank's bodies that hold a body of each rank, all-gathered as bitmaps (4 KB a rank). A rank's
// piece of the curve can reach from a system's centre into its halo, so its bounding box covers
// most of the volume while its bodies do not: the decomposed collision stage
// (domain_collisions.cpp) sends a rank the bodies within a depth of its occupied cells, not of its
// box.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "nbody/distributed.hpp"
#include "nbody/error.hpp"
#include "nbody/particles.hpp"
#include "parallel/domain.hpp"

namespace nbody::parallel {

class OccupiedCells {
 public:
  static constexpr int kCells = 32;  // per axis
  static constexpr int kScan = 2;    // near() looks this many cells' widths around a point

  /// Collective: each rank's occupied cells. The grid spans the ranks' 1st to 99th
  /// percentiles of x, y and z, and its outermost cells reach to infinity: a system's outliers
  /// (a Plummer sphere's reach 100 scale lengths) would otherwise make every cell of its core
  /// as wide as the core, and every rank's bodies would share them.
  OccupiedCells(const ParticleSystem& ps, ForceReducer& comm) {
    double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    std::vector<double> v;
    for (int k = 0; k < 3 && !ps.empty(); ++k) {
      const std::vector<double>& c = k == 0 ? ps.x : k == 1 ? ps.y : ps.z;
      v.assign(c.begin(), c.end());
      const auto at = [&](double q) {
        const auto i = v.begin() + std::ptrdiff_t(q * double(v.size() - 1));
        std::nth_element(v.begin(), i, v.end());
        return *i;
      };
      lo[k] = at(0.01);
      hi[k] = at(0.99);
    }
    (void)union_of_boxes(comm, !ps.empty(), lo, hi);  // every rank's percentiles' box
    const double extent = std::max({hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]});
    h_ = extent / kCells;
    std::copy(lo, lo + 3, lo_);
    // Masks of ranks in 64 bits; beyond, or for bodies all at one point, every test falls
    // back to the boxes (scannable false on every rank alike).
    usable_ = comm.parts() <= 64 && h_ > 0 && std::isfinite(h_);
    if (!usable_) return;
    std::vector<std::uint64_t> mine(kWords, 0);
    for (std::size_t i = 0; i < ps.size(); ++i) {
      const std::size_t c = cell(ps.x[i], ps.y[i], ps.z[i]);
      mine[c / 64] |= std::uint64_t{1} << (c % 64);
    }
    ForceReducer::Bytes out(kWords * sizeof(std::uint64_t));
    std::memcpy(out.data(), mine.data(), out.size());
    masks_.assign(std::size_t(kCells) * kCells * kCells, 0);
    const std::vector<ForceReducer::Bytes> all = comm.all_gather(out);
    for (std::size_t r = 0; r < all.size(); ++r) {
      if (all[r].size() != out.size()) throw Error("collisions on owned bodies: a malformed grid");
      std::memcpy(mine.data(), all[r].data(), out.size());
      for (std::size_t c = 0; c < masks_.size(); ++c)
        if ((mine[c / 64] >> (c % 64)) & 1u) masks_[c] |= std::uint64_t{1} << r;
    }
  }

  /// Whether near() answers for distances up to r (the same on every rank).
  [[nodiscard]] bool scannable(double r) const { return usable_ && r <= kScan * h_; }

  /// The ranks (bit r) with a body in a cell whose box lies within r of (x, y, z); needs
  /// scannable(r). Every rank with a body within r of the point is among them.
  [[nodiscard]] std::uint64_t near(double x, double y, double z, double r) const {
    const double p[3] = {x, y, z};
    int from[3], to[3];
    for (int k = 0; k < 3; ++k) {
      from[k] = index(p[k] - r, k);
      to[k] = index(p[k] + r, k);
    }
    std::uint64_t ranks = 0;
    for (int i = from[0]; i <= to[0]; ++i)
      for (int j = from[1]; j <= to[1]; ++j)
        for (int l = from[2]; l <= to[2]; ++l) {
          const std::uint64_t m = masks_[(std::size_t(i) * kCells + std::size_t(j)) * kCells + l];
          if (m == 0 || (m & ~ranks) == 0) continue;
          const int c[3] = {i, j, l};
          double d2 = 0;
          for (int k = 0; k < 3; ++k) {  // the outermost cells reach to infinity
            const double a = c[k] == 0 ? -HUGE_VAL : lo_[k] + c[k] * h_;
            const double b = c[k] == kCells - 1 ? HUGE_VAL : lo_[k] + (c[k] + 1) * h_;
            const double d = std::max({a - p[k], 0.0, p[k] - b});
            d2 += d * d;
          }
          if (d2 <= r * r) ranks |= m;
        }
    return ranks;
  }

 private:
  static constexpr std::size_t kWords = std::size_t(kCells) * kCells * kCells / 64;
  int index(double v, int axis) const {
    // Clamped: the outermost cells hold what lies beyond the percentiles.
    const double t = std::floor((v - lo_[axis]) / h_);
    return int(std::clamp(t, 0.0, double(kCells - 1)));
  }
  std::size_t cell(double x, double y, double z) const {
    return (std::size_t(index(x, 0)) * kCells + std::size_t(index(y, 1))) * kCells +
           std::size_t(index(z, 2));
  }
  double lo_[3] = {0, 0, 0};
  double h_ = 0;
  bool usable_ = false;
  std::vector<std::uint64_t> masks_;  // per cell, the ranks with a body in it
};

}  // namespace nbody::parallel
