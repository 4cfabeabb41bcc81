#include "render/splat.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace nbody::render {
namespace {

// A body without a radius is a Gaussian of this width (pixels): wide enough to be seen and to
// move smoothly between pixels, small enough that 10^5 bodies stay apart at 800 px.
constexpr double kDotSigma = 0.75;
constexpr double kDotReach = 2.5;  // pixels beyond which the Gaussian is negligible (< 0.4%)

// Adds colour * weight(distance) to every pixel within `reach` of (px, py). Pixel centres
// are at +0.5, as Camera::project returns them.
template <class Weight>
void add_footprint(std::vector<float>& sum, int width, int height, double px, double py,
                   double reach, const Rgb& colour, Weight weight) {
  // Clamped as doubles first: a huge disc or a far body must not overflow the int casts.
  auto first = [](double v) { return static_cast<int>(std::max(0.0, std::floor(v))); };
  auto last = [](double v, int size) {
    return static_cast<int>(std::min(size - 1.0, std::floor(v)));
  };
  const int x0 = first(px - reach), x1 = last(px + reach, width);
  const int y0 = first(py - reach), y1 = last(py + reach, height);
  for (int y = y0; y <= y1; ++y) {
    const double dy = y + 0.5 - py;
    float* row = sum.data() + std::size_t(y) * std::size_t(width) * 3;
    for (int x = x0; x <= x1; ++x) {
      const double dx = x + 0.5 - px;
      const auto w = static_cast<float>(weight(dx * dx + dy * dy));
      if (w <= 0) continue;
      float* p = row + std::size_t(x) * 3;
      p[0] += w * colour.r;
      p[1] += w * colour.g;
      p[2] += w * colour.b;
    }
  }
}

}  // namespace

Image splat_bodies(const ParticleSystem& ps, const Camera& camera,
                   const std::vector<float>& values) {
  Image image(camera.width, camera.height);
  if (camera.width <= 0 || camera.height <= 0) return image;
  std::vector<float> sum(image.rgb.size(), 0.0f);  // linear sum, clamped at the end
  const double pixels_per_unit = 1.0 / camera.units_per_pixel();
  for (std::size_t i = 0; i < ps.size(); ++i) {
    double px = 0, py = 0, depth = 0;
    camera.project(ps.x[i], ps.y[i], ps.z[i], px, py, depth);  // off-image discs may overlap it
    if (!std::isfinite(px) || !std::isfinite(py)) continue;
    const double radius_px = ps.radius.empty() ? 0.0 : ps.radius[i] * pixels_per_unit;
    const double reach = radius_px > 0 ? std::max(1.0, radius_px) + 1 : kDotReach;
    if (px < -reach || py < -reach || px > camera.width + reach || py > camera.height + reach) {
      continue;  // nothing of it shows
    }
    const Rgb colour = colormap(i < values.size() ? values[i] : 0.5);
    if (radius_px > 0) {
      // A disc with a one-pixel antialiased rim: coverage falls from 1 to 0 across the edge.
      const double r = std::max(1.0, radius_px);
      add_footprint(sum, camera.width, camera.height, px, py, reach, colour,
                    [r](double d2) { return std::clamp(r + 0.5 - std::sqrt(d2), 0.0, 1.0); });
    } else {
      constexpr double inv_two_sigma2 = 1.0 / (2 * kDotSigma * kDotSigma);
      add_footprint(sum, camera.width, camera.height, px, py, reach, colour,
                    [](double d2) { return std::exp(-d2 * inv_two_sigma2); });
    }
  }
  for (std::size_t k = 0; k < sum.size(); ++k) {
    image.rgb[k] = static_cast<unsigned char>(std::lround(std::min(sum[k], 255.0f)));
  }
  return image;
}

}  // namespace nbody::render
