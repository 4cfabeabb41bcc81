#include "render/camera.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace nbody::render {
namespace {

// The view rotation is R = Rx(elevation) * Ry(azimuth): azimuth turns the scene about the
// screen's vertical axis, elevation tilts it about the screen's horizontal axis (what dragging
// horizontally and vertically does in the viewer). View coordinates: x right, y up, z towards
// the viewer (so z is the depth, larger = nearer).
struct Rotation {
  double ca, sa, ce, se;
  explicit Rotation(const Camera& c)
      : ca(std::cos(c.azimuth)),
        sa(std::sin(c.azimuth)),
        ce(std::cos(c.elevation)),
        se(std::sin(c.elevation)) {}

  void to_view(double x, double y, double z, double& vx, double& vy, double& vz) const {
    const double x1 = ca * x - sa * z;
    const double z1 = sa * x + ca * z;
    vx = x1;
    vy = ce * y - se * z1;
    vz = se * y + ce * z1;
  }
  // The inverse of an orthogonal matrix is its transpose.
  void to_world(double vx, double vy, double vz, double& x, double& y, double& z) const {
    const double y1 = ce * vy + se * vz;
    const double z1 = -se * vy + ce * vz;
    x = ca * vx + sa * z1;
    y = y1;
    z = -sa * vx + ca * z1;
  }
};

// The 1st and 99th percentile of one coordinate (the smallest and largest value below 100
// bodies, so small systems are framed completely).
void central_range(std::vector<double> values, double& lo, double& hi) {
  const std::size_t n = values.size();
  const auto lo_index = static_cast<std::size_t>(std::floor(0.01 * static_cast<double>(n - 1)));
  const auto hi_index = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(n - 1)));
  const auto lo_it = values.begin() + static_cast<std::ptrdiff_t>(lo_index);
  const auto hi_it = values.begin() + static_cast<std::ptrdiff_t>(hi_index);
  std::nth_element(values.begin(), lo_it, values.end());
  lo = *lo_it;
  std::nth_element(values.begin(), hi_it, values.end());
  hi = *hi_it;
}

}  // namespace

double Camera::units_per_pixel() const {
  return 2 * half_width / std::max(width, 1);
}

bool Camera::project(double x, double y, double z, double& px, double& py, double& depth) const {
  double vx = 0, vy = 0;
  Rotation(*this).to_view(x - center[0], y - center[1], z - center[2], vx, vy, depth);
  const double scale = units_per_pixel();
  px = 0.5 * width + vx / scale;
  py = 0.5 * height - vy / scale;
  return px >= 0 && px < width && py >= 0 && py < height;
}

void Camera::unproject(double px, double py, double& x, double& y, double& z) const {
  const double scale = units_per_pixel();
  const double vx = (px - 0.5 * width) * scale;
  const double vy = (0.5 * height - py) * scale;
  Rotation(*this).to_world(vx, vy, 0, x, y, z);
  x += center[0];
  y += center[1];
  z += center[2];
}

Camera Camera::fit(const ParticleSystem& ps, int width, int height) {
  Camera camera;
  camera.width = width;
  camera.height = height;
  if (ps.empty()) return camera;
  double lo[3], hi[3];
  central_range(ps.x, lo[0], hi[0]);
  central_range(ps.y, lo[1], hi[1]);
  central_range(ps.z, lo[2], hi[2]);
  for (int axis = 0; axis < 3; ++axis) camera.center[axis] = 0.5 * (lo[axis] + hi[axis]);
  // The image must hold the x extent across and the y extent down. A 3D system may later be
  // rotated, so its depth extent must fit too, in the smaller of the two directions.
  const double aspect = static_cast<double>(std::max(width, 1)) / std::max(height, 1);
  const double half_x = 0.5 * (hi[0] - lo[0]);
  const double half_y = 0.5 * (hi[1] - lo[1]) * aspect;
  const double half_z = ps.dim == 3 ? 0.5 * (hi[2] - lo[2]) * std::max(aspect, 1.0) : 0.0;
  const double half = std::max({half_x, half_y, half_z});
  const double largest_radius =
      ps.radius.empty() ? 0.0 : *std::max_element(ps.radius.begin(), ps.radius.end());
  // A single body (or bodies on one spot) has no extent: show a unit-sized region around it,
  // or a few radii when it has one.
  camera.half_width =
      half > 0 ? 1.1 * half + largest_radius : (largest_radius > 0 ? 10 * largest_radius : 1.0);
  return camera;
}

}  // namespace nbody::render
