// The software renderer of `nbody render` and the camera and colour map it shares with
// `nbody view`: geometry round trips, framing, the colour scale, and that a rendered frame
// shows bodies where the camera says they are.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <vector>

#include "nbody/error.hpp"
#include "render/camera.hpp"
#include "render/colormap.hpp"
#include "render/splat.hpp"
#include "test_helpers.hpp"

namespace nbody::render {
namespace {

double luminance(const Rgb& c) {
  return 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b;
}

double brightness(const Image& image, int x, int y) {
  const unsigned char* p = image.pixel(x, y);
  return double(p[0]) + p[1] + p[2];
}

ParticleSystem bodies_at(const std::vector<Vec3>& positions, double radius = 0) {
  ParticleSystem ps;
  for (const Vec3& p : positions) ps.add(Body{p, {}, 1.0, radius, 0});
  return ps;
}

/// Connected groups (4-neighbour) of pixels brighter than `threshold`; for each, its
/// brightness-weighted centre in pixel coordinates (pixel centres at +0.5, as in project()).
std::vector<std::pair<double, double>> blobs(const Image& image, double threshold) {
  std::vector<int> seen(std::size_t(image.width) * std::size_t(image.height), 0);
  std::vector<std::pair<double, double>> centres;
  for (int y0 = 0; y0 < image.height; ++y0) {
    for (int x0 = 0; x0 < image.width; ++x0) {
      const std::size_t k0 = std::size_t(y0) * std::size_t(image.width) + std::size_t(x0);
      if (seen[k0] || brightness(image, x0, y0) <= threshold) continue;
      std::vector<std::pair<int, int>> stack = {{x0, y0}};
      seen[k0] = 1;
      double sum = 0, sum_x = 0, sum_y = 0;
      while (!stack.empty()) {
        const auto [x, y] = stack.back();
        stack.pop_back();
        const double b = brightness(image, x, y);
        sum += b;
        sum_x += b * (x + 0.5);
        sum_y += b * (y + 0.5);
        const int next[4][2] = {{x + 1, y}, {x - 1, y}, {x, y + 1}, {x, y - 1}};
        for (const auto& n : next) {
          if (n[0] < 0 || n[1] < 0 || n[0] >= image.width || n[1] >= image.height) continue;
          const std::size_t k = std::size_t(n[1]) * std::size_t(image.width) + std::size_t(n[0]);
          if (seen[k] || brightness(image, n[0], n[1]) <= threshold) continue;
          seen[k] = 1;
          stack.push_back({n[0], n[1]});
        }
      }
      centres.push_back({sum_x / sum, sum_y / sum});
    }
  }
  return centres;
}

TEST(Camera, DefaultViewHasXRightYUpAndPixelCentres) {
  Camera c;
  c.center[0] = 1;
  c.center[1] = 2;
  c.half_width = 4;
  c.width = 800;
  c.height = 600;
  double px = 0, py = 0, depth = 0;
  ASSERT_TRUE(c.project(1, 2, 0, px, py, depth));
  EXPECT_DOUBLE_EQ(px, 400);
  EXPECT_DOUBLE_EQ(py, 300);
  ASSERT_TRUE(c.project(3, 3, 0.5, px, py, depth));  // half_width 4 over 400 px: 100 px a unit
  EXPECT_DOUBLE_EQ(px, 600);
  EXPECT_DOUBLE_EQ(py, 200);     // y up on screen means a smaller row
  EXPECT_DOUBLE_EQ(depth, 0.5);  // towards the viewer
  EXPECT_FALSE(c.project(5.01, 2, 0, px, py, depth));
  EXPECT_FALSE(c.project(1, 5.01, 0, px, py, depth));
  double x = 0, y = 0, z = 0;
  c.unproject(600.5, 199.5, x, y, z);
  EXPECT_DOUBLE_EQ(x, 3.005);
  EXPECT_DOUBLE_EQ(y, 3.005);
  EXPECT_DOUBLE_EQ(z, 0);
}

TEST(Camera, RotatedRoundTripStaysOnTheViewPlane) {
  Camera c;
  c.center[0] = 0.3;
  c.center[1] = -1.2;
  c.center[2] = 2.5;
  c.azimuth = 0.7;
  c.elevation = -0.4;
  c.half_width = 2.5;
  c.width = 640;
  c.height = 480;
  for (const auto& [qx, qy] : {std::pair{0.5, 0.5}, {123.4, 456.7}, {639.5, 10.25}}) {
    double x = 0, y = 0, z = 0, px = 0, py = 0, depth = 0;
    c.unproject(qx, qy, x, y, z);
    EXPECT_TRUE(c.project(x, y, z, px, py, depth));
    EXPECT_NEAR(px, qx, 1e-9);
    EXPECT_NEAR(py, qy, 1e-9);
    EXPECT_NEAR(depth, 0, 1e-12);
  }
  // A point off the plane comes back moved along the view direction by exactly its depth.
  const double p[3] = {1.1, 0.4, 3.3};
  double px = 0, py = 0, depth = 0, q[3];
  c.project(p[0], p[1], p[2], px, py, depth);
  c.unproject(px, py, q[0], q[1], q[2]);
  const double moved = std::hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]);
  EXPECT_NEAR(moved, std::abs(depth), 1e-12);
  EXPECT_GT(std::abs(depth), 0.1);
}

TEST(Camera, FitFramesAllBodiesAndIgnoresFarOutliers) {
  ParticleSystem ps = test::random_system(80, 3);
  for (double& x : ps.x) x = 5 + 3 * x;  // off centre and stretched
  for (int dim : {2, 3}) {
    ParticleSystem planar = ps;
    if (dim == 2) planar.make_planar();
    for (const auto& [w, h] : {std::pair{800, 800}, {1280, 720}, {300, 900}}) {
      const Camera c = Camera::fit(planar, w, h);
      for (std::size_t i = 0; i < planar.size(); ++i) {
        double px = 0, py = 0, depth = 0;
        EXPECT_TRUE(c.project(planar.x[i], planar.y[i], planar.z[i], px, py, depth))
            << "body " << i << " " << w << "x" << h << " dim " << dim;
      }
    }
  }
  // One body in a thousand far away must not shrink everything else to a dot.
  ParticleSystem many = test::random_system(1000, 4);
  const Camera before = Camera::fit(many, 800, 800);
  many.add(Body{{1e6, -1e6, 1e6}, {}, 1, 0, 0});
  const Camera after = Camera::fit(many, 800, 800);
  EXPECT_LT(after.half_width, 1.1 * before.half_width);
  EXPECT_NEAR(after.center[0], before.center[0], 0.1 * before.half_width);
}

TEST(Camera, FitsEmptyAndSingleBodySystems) {
  const Camera empty = Camera::fit(ParticleSystem{}, 100, 50);
  EXPECT_EQ(empty.width, 100);
  EXPECT_GT(empty.half_width, 0);
  const Camera one = Camera::fit(bodies_at({{2, 3, 4}}), 100, 100);
  EXPECT_GT(one.half_width, 0);
  double px = 0, py = 0, depth = 0;
  EXPECT_TRUE(one.project(2, 3, 4, px, py, depth));
  EXPECT_DOUBLE_EQ(px, 50);
  EXPECT_DOUBLE_EQ(py, 50);
}

TEST(Colormap, ClampsAndBrightensMonotonically) {
  EXPECT_EQ(luminance(colormap(-1)), luminance(colormap(0)));
  EXPECT_EQ(luminance(colormap(2)), luminance(colormap(1)));
  EXPECT_EQ(luminance(colormap(std::nan(""))), luminance(colormap(0)));
  EXPECT_LT(luminance(colormap(0)), 60);  // dark, but visible on black
  EXPECT_GT(luminance(colormap(0)), 15);
  EXPECT_GT(luminance(colormap(1)), 230);  // near white
  double previous = luminance(colormap(0));
  for (int k = 1; k <= 1000; ++k) {
    const double l = luminance(colormap(k / 1000.0));
    EXPECT_GE(l, previous - 0.75) << k;  // rounding to bytes may wobble below one unit
    previous = l;
  }
  for (int k = 1; k <= 15; ++k) {  // and it rises from stop to stop
    EXPECT_GT(luminance(colormap(k / 15.0)), luminance(colormap((k - 1) / 15.0)) + 2) << k;
  }
}

TEST(Colormap, ParsesItsOptionAndScalesRobustly) {
  EXPECT_EQ(parse_color_by("speed"), ColorBy::Speed);
  EXPECT_EQ(parse_color_by("mass"), ColorBy::Mass);
  try {
    (void)parse_color_by("temperature");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--color"), std::string::npos);
  }
  ParticleSystem ps;
  for (int i = 1; i <= 200; ++i) ps.add(Body{{}, {double(i), 0, 0}, double(i), 0, 0});
  ps.add(Body{{}, {1e6, 0, 0}, 1, 0, 0});  // one runaway body
  const std::vector<float> speed = color_values(ps, ColorBy::Speed);
  ASSERT_EQ(speed.size(), ps.size());
  EXPECT_EQ(speed.back(), 1.0f);
  EXPECT_LT(speed[0], 0.05f);
  EXPECT_NEAR(speed[99], 0.5f, 0.05f);  // the outlier does not squash the rest to 0
  const std::vector<float> mass = color_values(ps, ColorBy::Mass);
  EXPECT_LT(mass[0], mass[9]);
  EXPECT_LT(mass[9], mass[99]);
  for (float v : mass) {
    EXPECT_GE(v, 0.0f);
    EXPECT_LE(v, 1.0f);
  }
  // All alike: one mid colour; no bodies: nothing.
  for (float v : color_values(bodies_at({{0, 0, 0}, {1, 0, 0}}), ColorBy::Mass)) {
    EXPECT_EQ(v, 0.5f);
  }
  EXPECT_TRUE(color_values(ParticleSystem{}, ColorBy::Speed).empty());
}

TEST(Splat, TwoBodiesGiveTwoBlobsWhereTheCameraPutsThem) {
  for (double radius : {0.0, 0.05}) {
    const ParticleSystem ps = bodies_at({{-1, 0.3, 0}, {1, -0.2, 0}}, radius);
    const Camera camera = Camera::fit(ps, 200, 120);
    const Image image = splat_bodies(ps, camera, {0.0f, 1.0f});
    ASSERT_EQ(image.width, 200);
    ASSERT_EQ(image.height, 120);
    const auto found = blobs(image, 30);
    ASSERT_EQ(found.size(), 2u) << "radius " << radius;
    for (std::size_t i = 0; i < ps.size(); ++i) {
      double px = 0, py = 0, depth = 0;
      ASSERT_TRUE(camera.project(ps.x[i], ps.y[i], ps.z[i], px, py, depth));
      bool matched = false;
      for (const auto& [x, y] : found) {
        matched |= std::abs(x - px) <= 0.25 && std::abs(y - py) <= 0.25;
      }
      EXPECT_TRUE(matched) << "body " << i << " at pixel " << px << ", " << py;
    }
    // The colours follow the values: the faster body (value 1) is the brighter one.
    double px0 = 0, py0 = 0, px1 = 0, py1 = 0, depth = 0;
    camera.project(ps.x[0], ps.y[0], 0, px0, py0, depth);
    camera.project(ps.x[1], ps.y[1], 0, px1, py1, depth);
    EXPECT_LT(brightness(image, int(px0), int(py0)), brightness(image, int(px1), int(py1)));
  }
}

TEST(Splat, DenseRegionsSaturateAndEmptyFramesAreBlack) {
  ParticleSystem ps = bodies_at(std::vector<Vec3>(50, Vec3{0, 0, 0}));
  ps.add(Body{{1, 1, 0}, {}, 1, 0, 0});
  const Camera camera = Camera::fit(ps, 64, 64);
  const Image image = splat_bodies(ps, camera, std::vector<float>(ps.size(), 0.0f));
  double px = 0, py = 0, depth = 0;
  camera.project(0, 0, 0, px, py, depth);
  const unsigned char* centre = image.pixel(int(px), int(py));
  EXPECT_EQ(centre[2], 255);  // 50 dim bodies on one spot: saturated, not wrapped around

  const Image empty = splat_bodies(ParticleSystem{}, Camera::fit(ParticleSystem{}, 32, 32), {});
  for (unsigned char c : empty.rgb) ASSERT_EQ(c, 0);
  const ParticleSystem one = bodies_at({{5, 5, 5}}, 0.1);
  Image single = splat_bodies(one, Camera::fit(one, 64, 64), {});  // no values: mid colour
  EXPECT_GT(brightness(single, 32, 32), 100);
  draw_legend(single, ColorBy::Speed, {});  // degenerate range, small image: no crash
  Image tiny(8, 8);
  draw_legend(tiny, ColorBy::Mass, {0, 1});
}

TEST(Splat, BodiesFarOutsideTheImageAreSkippedSafely) {
  const ParticleSystem ps = bodies_at({{0, 0, 0}, {1e300, -1e300, 0}, {3, 3, 0}}, 1e-3);
  Camera camera;
  camera.width = camera.height = 32;
  const Image image = splat_bodies(ps, camera, {0.5f, 0.5f, 0.5f});
  EXPECT_EQ(blobs(image, 30).size(), 1u);  // the view spans -1..1: only the first shows
}

}  // namespace
}  // namespace nbody::render
