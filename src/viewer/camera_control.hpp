#pragma once
// The viewer's camera moves: zoom at the cursor, pan, rotate, reset, all through the
// shared orthographic render::Camera (so `nbody view` and `nbody render` frame a system
// the same way), and the matrix the shaders use, derived from Camera::project itself.
#include "nbody/particles.hpp"
#include "render/camera.hpp"

namespace nbody::viewer {

/// Maps a position relative to the camera centre, p - centre, to (NDC x, NDC y, depth):
/// row-major 3x3, depth in simulation units (larger = nearer). Orthographic projection is
/// linear in p - centre, so three columns describe it exactly.
struct ViewMatrix {
  float m[9];
};

class CameraControl {
 public:
  render::Camera camera;

  /// Camera::fit for a framebuffer of width x height pixels, magnified by zoom and turned
  /// (radians).
  void reset(const ParticleSystem& ps, int width, int height, double zoom = 1, double azimuth = 0,
             double elevation = 0);
  /// A new framebuffer size; keeps the scale (units per pixel) and the centre.
  void resize(int width, int height);
  /// Scales the visible width by factor (< 1 zooms in) keeping the simulation point under
  /// pixel (px, py) where it is on the screen.
  void zoom_at(double px, double py, double factor);
  /// Moves the scene with a drag from pixel (x0, y0) to (x1, y1).
  void pan(double x0, double y0, double x1, double y1);
  /// Turns the scene by a drag of (dx, dy) pixels: horizontal about the screen's vertical
  /// axis, vertical about its horizontal axis (elevation kept within +-90 degrees).
  void rotate(double dx, double dy);
  /// The simulation point under a pixel, on the plane through the centre facing the camera.
  void unproject(double px, double py, double out[3]) const;
  /// Unit vectors of the screen plane in simulation coordinates: right and up.
  void screen_axes(double right[3], double up[3]) const;
  [[nodiscard]] ViewMatrix view_matrix() const;

 private:
  static constexpr double kRadiansPerPixel = 0.008;
};

}  // namespace nbody::viewer
