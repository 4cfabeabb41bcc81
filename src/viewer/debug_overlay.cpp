#include "viewer/debug_overlay.hpp"

#include <cmath>
#include <limits>

#include "nbody/collisions.hpp"

namespace nbody::viewer {

namespace {

/// Appends the box edges of cell c: 4 in a quadtree (a square in the z = cz plane), 12 in
/// an octree.
void box_edges(const tree::Tree& t, std::size_t c, const double origin[3],
               std::vector<float>& xyz) {
  const double h = t.half[c];
  const double cx = t.cx[c] - origin[0], cy = t.cy[c] - origin[1], cz = t.cz[c] - origin[2];
  auto corner = [&](int i, double out[3]) {
    out[0] = cx + ((i & 1) ? h : -h);
    out[1] = cy + ((i & 2) ? h : -h);
    out[2] = t.dim == 2 ? cz : cz + ((i & 4) ? h : -h);
  };
  auto edge = [&](int a, int b) {
    double p[3], q[3];
    corner(a, p);
    corner(b, q);
    for (double v : p) xyz.push_back(static_cast<float>(v));
    for (double v : q) xyz.push_back(static_cast<float>(v));
  };
  // Corners differ in one bit along an edge.
  const int corners = t.dim == 2 ? 4 : 8;
  for (int a = 0; a < corners; ++a) {
    for (int bit = 1; bit < corners; bit <<= 1) {
      if (!(a & bit)) edge(a, a | bit);
    }
  }
}

bool contains(const tree::Tree& t, std::size_t c, const double p[3]) {
  const double h = t.half[c];
  return std::abs(p[0] - t.cx[c]) <= h && std::abs(p[1] - t.cy[c]) <= h &&
         (t.dim == 2 || std::abs(p[2] - t.cz[c]) <= h);
}

}  // namespace

void DebugOverlay::build_tree(const ParticleSystem& ps, int threads) {
  tree::build_tree(ps, ps.dim, 8, threads, tree_, scratch_);
}

void DebugOverlay::tree_lines(int max_depth, std::size_t max_cells, const double origin[3],
                              std::vector<float>& xyz) const {
  // Children always follow their parent in the flat layout, so a prefix of the cells is a
  // top part of the tree.
  const std::size_t n = std::min(tree_.cells(), max_cells);
  for (std::size_t c = 0; c < n; ++c) {
    if (tree_.level[c] <= max_depth) box_edges(tree_, c, origin, xyz);
  }
}

std::optional<std::size_t> DebugOverlay::cell_at(const double p[3]) const {
  if (tree_.cells() == 0 || !contains(tree_, 0, p)) return std::nullopt;
  std::size_t c = 0;
  for (bool descended = true; descended && !tree_.is_leaf(c);) {
    descended = false;
    const auto first = static_cast<std::size_t>(tree_.first_child[c]);
    for (std::size_t k = first; k < first + tree_.child_count[c]; ++k) {
      if (contains(tree_, k, p)) {
        c = k;
        descended = true;
        break;
      }
    }
  }
  return c;
}

void DebugOverlay::cell_lines(std::size_t cell, const double origin[3],
                              std::vector<float>& xyz) const {
  box_edges(tree_, cell, origin, xyz);
}

std::optional<std::size_t> pick_body(const ParticleSystem& ps, const render::Camera& camera,
                                     double px, double py, double max_pixels) {
  std::optional<std::size_t> best;
  double best_d2 = max_pixels * max_pixels;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    double bx = 0, by = 0, depth = 0;
    camera.project(ps.x[i], ps.y[i], ps.z[i], bx, by, depth);
    const double d2 = (bx - px) * (bx - px) + (by - py) * (by - py);
    if (d2 <= best_d2) {
      best_d2 = d2;
      best = i;
    }
  }
  return best;
}

std::optional<std::size_t> index_of(const ParticleSystem& ps, std::uint64_t id) {
  for (std::size_t i = 0; i < ps.size(); ++i)
    if (ps.id[i] == id) return i;
  return std::nullopt;
}

std::vector<std::size_t> collision_neighbours(const ParticleSystem& ps, std::size_t i,
                                              double skin) {
  std::vector<std::size_t> out;
  for (const IndexPair& p : find_contact_pairs(ps, skin)) {
    if (p.a == i) out.push_back(p.b);
    if (p.b == i) out.push_back(p.a);
  }
  return out;
}

}  // namespace nbody::viewer
