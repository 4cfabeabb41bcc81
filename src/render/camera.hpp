#pragma once
// An orthographic camera shared by `nbody render` and `nbody view`: it maps simulation
// coordinates to pixels and back. Orthographic because sizes then read directly as
// simulation lengths, and a fixed camera shows motion without perspective distortion.
#include "nbody/particles.hpp"

namespace nbody::render {

struct Camera {
  double center[3] = {0, 0, 0};       // look-at point, simulation units
  double azimuth = 0, elevation = 0;  // radians; (0, 0) looks down the -z axis with x right, y up
  double half_width = 1;              // half the visible width in simulation units (zoom)
  int width = 800, height = 800;      // pixels

  /// Orthographic. Simulation point -> pixel (x right, y DOWN, pixel centres at +0.5) and depth
  /// (larger = nearer); false when outside the image.
  bool project(double x, double y, double z, double& px, double& py, double& depth) const;
  /// Pixel -> the simulation point on the plane through `center` facing the camera.
  void unproject(double px, double py, double& x, double& y, double& z) const;
  /// Simulation units per pixel (the same along x and y: pixels are square).
  [[nodiscard]] double units_per_pixel() const;
  /// Frames the bodies: centre = centre of the bounding box of the central 98% of bodies (so far
  /// outliers do not shrink everything), half_width from that extent with a 10% margin.
  static Camera fit(const ParticleSystem& ps, int width, int height);
};

}  // namespace nbody::render
