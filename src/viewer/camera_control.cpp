#include "viewer/camera_control.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace nbody::viewer {

void CameraControl::reset(const ParticleSystem& ps, int width, int height, double zoom,
                          double azimuth, double elevation) {
  camera = render::Camera::fit(ps, std::max(width, 1), std::max(height, 1));
  camera.half_width /= zoom;
  camera.azimuth = azimuth;
  camera.elevation = elevation;
}

void CameraControl::resize(int width, int height) {
  width = std::max(width, 1);
  height = std::max(height, 1);
  if (width == camera.width && height == camera.height) return;
  // half_width spans the image's width: scaling it with the width keeps units per pixel.
  camera.half_width *= static_cast<double>(width) / std::max(camera.width, 1);
  camera.width = width;
  camera.height = height;
}

void CameraControl::unproject(double px, double py, double out[3]) const {
  camera.unproject(px, py, out[0], out[1], out[2]);
}

void CameraControl::zoom_at(double px, double py, double factor) {
  if (!(factor > 0)) return;
  double before[3], after[3];
  unproject(px, py, before);
  camera.half_width *= factor;
  unproject(px, py, after);
  for (int a = 0; a < 3; ++a) camera.center[a] += before[a] - after[a];
}

void CameraControl::pan(double x0, double y0, double x1, double y1) {
  double from[3], to[3];
  unproject(x0, y0, from);
  unproject(x1, y1, to);
  for (int a = 0; a < 3; ++a) camera.center[a] += from[a] - to[a];
}

void CameraControl::rotate(double dx, double dy) {
  // Signs chosen so that the side facing the viewer follows the cursor.
  camera.azimuth -= dx * kRadiansPerPixel;
  camera.azimuth = std::remainder(camera.azimuth, 2 * std::numbers::pi);
  const double limit = 0.5 * std::numbers::pi;
  camera.elevation = std::clamp(camera.elevation + dy * kRadiansPerPixel, -limit, limit);
}

void CameraControl::screen_axes(double right[3], double up[3]) const {
  double o[3], r[3], u[3];
  unproject(0, 0, o);
  unproject(1, 0, r);
  unproject(0, -1, u);  // pixel y grows downwards
  double right_norm = 0, up_norm = 0;
  for (int a = 0; a < 3; ++a) {
    right[a] = r[a] - o[a];
    up[a] = u[a] - o[a];
    right_norm += right[a] * right[a];
    up_norm += up[a] * up[a];
  }
  right_norm = std::sqrt(right_norm);
  up_norm = std::sqrt(up_norm);
  for (int a = 0; a < 3; ++a) {
    right[a] /= right_norm;
    up[a] /= up_norm;
  }
}

ViewMatrix CameraControl::view_matrix() const {
  // Columns from the camera's own projection of the centre and of one step h along each
  // axis, so the shaders draw exactly where Camera::project says (h ~ the visible width
  // keeps the differences well conditioned at any zoom).
  const render::Camera& c = camera;
  const double h = c.half_width;
  double px0 = 0, py0 = 0, d0 = 0;
  c.project(c.center[0], c.center[1], c.center[2], px0, py0, d0);
  ViewMatrix v{};
  for (int axis = 0; axis < 3; ++axis) {
    double p[3] = {c.center[0], c.center[1], c.center[2]};
    p[axis] += h;
    double px = 0, py = 0, d = 0;
    c.project(p[0], p[1], p[2], px, py, d);
    // Pixels -> NDC: x right over [-1, 1] across the width, y up over [-1, 1] down the height.
    v.m[0 + axis] = static_cast<float>(2 * (px - px0) / h / c.width);
    v.m[3 + axis] = static_cast<float>(-2 * (py - py0) / h / c.height);
    v.m[6 + axis] = static_cast<float>((d - d0) / h);
  }
  return v;
}

}  // namespace nbody::viewer
