#pragma once
// The Debug panel's geometry (seed 001 §8.2, fig. 8.5): the Barnes-Hut cells of the current
// bodies, the cell under the cursor, and a picked body with its collision neighbours.
// Plain C++: it produces line vertices; scene_renderer.hpp draws them.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "nbody/particles.hpp"
#include "render/camera.hpp"
#include "tree/tree.hpp"

namespace nbody::viewer {

class DebugOverlay {
 public:
  /// Builds the tree of ps (the solver's layout: leaves of <= 8 bodies, octree in 3D,
  /// quadtree in 2D) for the drawing and cell queries below.
  void build_tree(const ParticleSystem& ps, int threads);
  [[nodiscard]] std::size_t cells() const { return tree_.cells(); }

  /// Edges of the cells down to max_depth (at most max_cells cells, shallowest first) as
  /// pairs of points relative to origin, appended to xyz.
  void tree_lines(int max_depth, std::size_t max_cells, const double origin[3],
                  std::vector<float>& xyz) const;
  /// The deepest cell containing point p, if any; its edges are appended by cell_lines.
  [[nodiscard]] std::optional<std::size_t> cell_at(const double p[3]) const;
  void cell_lines(std::size_t cell, const double origin[3], std::vector<float>& xyz) const;
  [[nodiscard]] int cell_level(std::size_t cell) const { return tree_.level[cell]; }
  [[nodiscard]] std::size_t cell_bodies(std::size_t cell) const {
    return tree_.end[cell] - tree_.begin[cell];
  }

 private:
  tree::Tree tree_;
  tree::BuildScratch scratch_;
};

/// The body whose centre is drawn nearest to pixel (px, py), within max_pixels.
[[nodiscard]] std::optional<std::size_t> pick_body(const ParticleSystem& ps,
                                                   const render::Camera& camera, double px,
                                                   double py, double max_pixels);

/// The index of the body with this id, if it still exists (merges remove bodies).
[[nodiscard]] std::optional<std::size_t> index_of(const ParticleSystem& ps, std::uint64_t id);

/// Bodies within (1 + skin) (r_i + r_j) of body i, by the collision grid search
/// (find_contact_pairs) the collision handlers use.
[[nodiscard]] std::vector<std::size_t> collision_neighbours(const ParticleSystem& ps, std::size_t i,
                                                            double skin);

}  // namespace nbody::viewer
