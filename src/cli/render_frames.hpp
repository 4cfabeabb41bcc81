#pragma once
// nbody render's options, where its frames go (FrameSink) and how they are drawn
// (FrameRenderer), for render_command.cpp.
#include <cstdint>
#include <filesystem>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "nbody/collisions.hpp"
#include "nbody/gravity.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/input_error.hpp"
#include "nbody/integrator.hpp"
#include "nbody/particles.hpp"
#include "render/camera.hpp"
#include "render/colormap.hpp"
#include "render/image.hpp"
#include "render/movie_writer.hpp"
#include "render/splat.hpp"

namespace nbody::cli {

namespace fs = std::filesystem;

struct RenderArgs {
  std::string input;
  std::string format = "auto";
  ModelOptions model;
  double dt = 0.01;
  GravityOptions gravity;
  IntegratorOptions integrator;
  CollisionOptions collisions;
  int dim = 3;
  std::vector<std::string> snapshots;
  std::string output;
  int width = 800;
  int height = 800;
  std::uint64_t frames = 60;
  std::uint64_t every = 10;
  std::string color = "speed";
  double azimuth = 0;    // degrees
  double elevation = 0;  // degrees
  double zoom = 1;
  double fps = 30;
  bool no_legend = false;
  bool time_label = true;
  bool quiet = false;
};

/// Where the frames go: numbered PNG files in a folder, one movie, or (OUT ending in .png)
/// one picture of the last frame, for documentation.
class FrameSink {
 public:
  /// `writer` false: a rank other than 0 under mpirun, which decides which frames are drawn
  /// (wants) but writes nothing.
  FrameSink(const fs::path& out, int width, int height, double fps, bool writer = true)
      : out_(out), writer_(writer) {
    if (!writer) {
      single_ = out.extension() == ".png";
      return;
    }
    if (out.extension() == ".mp4") {
      movie_.emplace(out, width, height, fps);
      return;
    }
    if (!render::png_supported()) {
      throw input_error("--output",
                        "PNG output needs stb, and nbody was built without it "
                        "(install libstb-dev and rebuild), or write an .mp4",
                        out.string());
    }
    if (out.extension() == ".png") {
      single_ = true;
      return;
    }
    std::error_code ec;
    if (fs::exists(out, ec) && !fs::is_directory(out, ec)) {
      throw input_error("--output",
                        "exists and is not a folder (OUT is a folder for PNG "
                        "frames, or a file ending in .mp4)",
                        out.string());
    }
    fs::create_directories(out, ec);
    if (ec)
      throw input_error("--output", "cannot create the folder: " + ec.message(), out.string());
  }

  /// Whether frame `index` of `count` is written (a single picture takes only the last).
  [[nodiscard]] bool wants(std::uint64_t index, std::uint64_t count) const {
    return !single_ || index + 1 == count;
  }

  void write(const render::Image& frame) {
    if (!writer_) return;
    if (movie_) {
      movie_->add(frame);
    } else if (single_) {
      render::write_png(out_, frame);
    } else {
      render::write_png(out_ / fmt::format("frame_{:06d}.png", count_), frame);
    }
    ++count_;
  }

  void finish() {
    if (movie_) movie_->finish();
  }

  [[nodiscard]] std::string describe() const {
    if (single_) return out_.string();
    return movie_ ? fmt::format("{} ({} frames)", out_.string(), count_)
                  : fmt::format("{} frames to {}/frame_*.png", count_, out_.string());
  }

 private:
  fs::path out_;
  bool writer_ = true;
  std::optional<render::MovieWriter> movie_;
  bool single_ = false;
  int count_ = 0;
};

/// Draws frames with the camera and colour scale of the first one, so that motion and
/// changes of speed show instead of being framed away.
class FrameRenderer {
 public:
  explicit FrameRenderer(const RenderArgs& a)
      : args_(a), color_by_(render::parse_color_by(a.color)) {}

  /// Fits the camera and the colour scale to these bodies, if not done yet.
  void fix_view(const ParticleSystem& ps) {
    if (!camera_) {
      camera_ = render::Camera::fit(ps, args_.width, args_.height);
      camera_->half_width /= args_.zoom;
      camera_->azimuth = args_.azimuth * std::numbers::pi / 180;
      camera_->elevation = args_.elevation * std::numbers::pi / 180;
      range_ = render::color_range(ps, color_by_);
    }
  }

  /// `label` goes in the top-left corner unless --no-time-label: the simulated time, or
  /// the file name for a snapshot whose format stores no time.
  render::Image draw(const ParticleSystem& ps, const std::string& label) {
    fix_view(ps);
    render::Image image =
        render::splat_bodies(ps, *camera_, render::color_values(ps, color_by_, range_));
    if (!args_.no_legend) render::draw_legend(image, color_by_, range_);
    if (args_.time_label) render::draw_corner_label(image, label);
    return image;
  }

 private:
  const RenderArgs& args_;
  render::ColorBy color_by_;
  std::optional<render::Camera> camera_;
  render::ColorRange range_;
};

}  // namespace nbody::cli
