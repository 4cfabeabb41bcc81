// nbody render: pictures and movies without a display. Draws a file as it is, runs a
// simulation like `nbody run` and draws a frame every K steps, or draws a series of snapshot
// files, with the software splatter of src/render, to PNG files in a folder or to an .mp4
// through ffmpeg.
#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <numbers>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/option_checks.hpp"
#include "cli/options.hpp"
#include "cli/progress.hpp"
#include "cli/usage_error.hpp"
#include "nbody/error.hpp"
#include "nbody/input_error.hpp"
#include "nbody/io.hpp"
#include "nbody/simulation.hpp"
#include "nbody/snapshot.hpp"
#include "render/camera.hpp"
#include "render/colormap.hpp"
#include "render/movie_writer.hpp"
#include "render/splat.hpp"

namespace nbody::cli {

namespace {

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
  FrameSink(const fs::path& out, int width, int height, double fps) : out_(out) {
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

/// --snapshots: each argument a file or a pattern with * ? [...] in its file name; the
/// matches of all of them, sorted by path (numbered names sort by step).
std::vector<fs::path> expand_snapshots(const std::vector<std::string>& patterns) {
  std::vector<fs::path> files;
  for (const std::string& pattern : patterns) {
    const fs::path p(pattern);
    const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
    const std::string name = p.filename().string();
    if (dir.string().find_first_of("*?[") != std::string::npos) {
      throw input_error("--snapshots", "wildcards only in the file name", pattern);
    }
    std::size_t matched = 0;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      if (entry.is_regular_file() &&
          ::fnmatch(name.c_str(), entry.path().filename().c_str(), FNM_PERIOD) == 0) {
        files.push_back(p.has_parent_path() ? entry.path() : entry.path().filename());
        ++matched;
      }
    }
    if (matched == 0) {
      throw input_error(
          "--snapshots",
          "no file matches" + (ec ? fmt::format(" ({}: {})", dir.string(), ec.message()) : ""),
          pattern);
    }
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

/// The label of a frame at simulated time t.
std::string time_text(double t) {
  return fmt::format("t = {:.6g}", t);
}

void check_args(const RenderArgs& a) {
  const fs::path out(a.output);
  const std::string ext = out.extension().string();
  for (const char* other : {".jpg", ".jpeg", ".gif", ".avi", ".mov", ".mkv", ".webm"}) {
    if (ext == other) {
      throw input_error("--output",
                        "OUT is a folder for PNG frames, a movie ending in .mp4, or "
                        "one picture (the last frame) ending in .png",
                        a.output);
    }
  }
  (void)render::parse_color_by(a.color);  // fail before any work
}

void render_snapshots(const RenderArgs& a, FrameSink& sink, FrameRenderer& renderer) {
  const std::vector<fs::path> files = expand_snapshots(a.snapshots);
  const bool talk = !a.quiet;
  if (talk) fmt::print("nbody render: {} snapshot files, {}x{}\n", files.size(), a.width, a.height);
  std::fflush(stdout);
  ProgressLine progress(stderr, files.size(), talk);
  for (std::size_t k = 0; k < files.size(); ++k) {
    // The first file fixes the view even when only the last one is drawn.
    if (k > 0 && !sink.wants(k, files.size())) continue;
    const ParticleSystem ps = read_particles(files[k], resolve_format(files[k], a.format));
    renderer.fix_view(ps);
    // HDF5 snapshots store their time; text and CSV files do not (they read as t = 0), so
    // their frames are labelled with the file name, which `run --every` numbers by step.
    const bool has_time = looks_like_hdf5(files[k]);
    const std::string label = has_time ? time_text(ps.time) : files[k].filename().string();
    if (sink.wants(k, files.size())) sink.write(renderer.draw(ps, label));
    progress.update(k + 1, ps.time, {});
  }
  progress.finish();
}

/// -i FILE without --frames or --every: the picture of the file, no step taken (and no
/// forces computed, which would cost O(N^2) with the direct sum for nothing).
bool draws_file_as_is(const RenderArgs& a, const CLI::App& app) {
  return !a.input.empty() && app.count("--frames") == 0 && app.count("--every") == 0;
}

void render_file(const RenderArgs& a, const ParticleSystem& ps, FrameSink& sink,
                 FrameRenderer& renderer) {
  if (!a.quiet) {
    fmt::print(
        "nbody render: {} as it is, {} bodies at t = {:g}, 0 steps (--frames N --every K "
        "to simulate), {}x{}\n",
        a.input, ps.size(), ps.time, a.width, a.height);
  }
  sink.write(renderer.draw(ps, time_text(ps.time)));
}

void render_run(const RenderArgs& a, const CLI::App& app, FrameSink& sink,
                FrameRenderer& renderer) {
  const bool talk = !a.quiet;
  check_collision_options(app, a.collisions);
  ParticleSystem initial =
      load_or_generate(a.input, a.format, a.model, a.gravity.G, a.dim, app, "render");
  // --radius with a file gives every body that radius, as in `nbody run`.
  if (!a.input.empty() && app.count("--radius")) {
    for (double& r : initial.radius) r = a.model.radius;
  }
  if (a.dim == 2) initial.make_planar();
  if (draws_file_as_is(a, app)) {
    render_file(a, initial, sink, renderer);
    return;
  }
  Simulation sim(std::move(initial), a.gravity, a.integrator, a.collisions);
  const std::uint64_t total_steps = (a.frames - 1) * a.every;
  if (talk) {
    fmt::print(
        "nbody render: {} bodies, {}, {} dt = {:g}, {} frames every {} steps ({} steps), "
        "{}x{}\n",
        sim.size(), sim.solver_name(), sim.integrator_name(), a.dt, a.frames, a.every, total_steps,
        a.width, a.height);
    std::fflush(stdout);  // before the progress line, which goes to stderr
  }
  renderer.fix_view(sim.particles());
  if (sink.wants(0, a.frames)) sink.write(renderer.draw(sim.particles(), time_text(sim.time())));
  ProgressLine progress(stderr, total_steps, talk);
  for (std::uint64_t s = 1; s <= total_steps; ++s) {
    sim.step(a.dt);
    if (s % a.every == 0 && sink.wants(s / a.every, a.frames)) {
      sink.write(renderer.draw(sim.particles(), time_text(sim.time())));
    }
    progress.update(s, sim.time(), {});
  }
  progress.finish();
}

void render(const RenderArgs& a, const CLI::App& app) {
  check_args(a);
  if (a.snapshots.empty() && a.input.empty() && app.count("--model") == 0) {
    throw UsageError(
        "nbody render needs bodies: --model NAME, -i FILE, or --snapshots 'out_*.txt'");
  }
  FrameRenderer renderer(a);
  FrameSink sink(a.output, a.width, a.height, a.fps);  // fails early when ffmpeg is missing
  if (a.snapshots.empty()) {
    render_run(a, app, sink, renderer);
  } else {
    render_snapshots(a, sink, renderer);
  }
  sink.finish();
  if (!a.quiet) fmt::print("wrote {}\n", sink.describe());
}

}  // namespace

void add_render_command(CLI::App& app) {
  auto args = std::make_shared<RenderArgs>();
  auto* cmd = app.add_subcommand(
      "render",
      "Draw a file, a simulation or snapshot files to PNG frames or an .mp4, without a display");
  const auto [input, model] = add_source_options(cmd, args->input, args->format, args->model.model);
  input->description(
      "Bodies from a file (text, CSV or HDF5 snapshot), drawn as they are unless --frames or "
      "--every asks for steps");
  auto* snapshots = cmd->add_option("--snapshots", args->snapshots,
                                    "Draw these snapshot files instead of running: a quoted "
                                    "pattern such as 'out_*.txt' (sorted), or a list of files");
  snapshots->excludes(input)->excludes(model);
  add_model_options(cmd, args->model);
  cmd->add_option("--dt", args->dt, "Time step")->check(time_step_check())->capture_default_str();
  add_gravity_options(cmd, args->gravity);
  add_integrator_options(cmd, args->integrator);
  add_collision_options(cmd, args->collisions);
  add_dim_option(cmd, args->dim);
  cmd->add_option("-o,--output", args->output,
                  "A folder for frame_000000.png ..., a movie ending in .mp4 (through ffmpeg), or "
                  "one picture of the last frame ending in .png")
      ->required();
  cmd->add_option("--width", args->width, "Image width in pixels (even for .mp4)")
      ->check(whole_in(16, 16384))
      ->capture_default_str();
  cmd->add_option("--height", args->height, "Image height in pixels (even for .mp4)")
      ->check(whole_in(16, 16384))
      ->capture_default_str();
  auto* frames =
      cmd->add_option("--frames", args->frames,
                      "Number of frames (frame 0 is the start); with -i, 1 unless this or --every "
                      "is given")
          ->check(whole_in(1, 1000000))
          ->capture_default_str();
  auto* every = cmd->add_option("--every", args->every, "Steps between frames")
                    ->check(whole_in(1, 1000000000))
                    ->capture_default_str();
  snapshots->excludes(frames)->excludes(every);
  cmd->add_option("--color", args->color, "Colour bodies by speed or mass")
      ->check(one_of({"speed", "mass"}))
      ->capture_default_str();
  cmd->add_option("--azimuth", args->azimuth,
                  "Turn the view about the vertical screen axis (degrees)")
      ->check(number_in(-360.0, 360.0));
  cmd->add_option("--elevation", args->elevation,
                  "Tilt the view about the horizontal screen axis (degrees)")
      ->check(number_in(-90.0, 90.0));
  cmd->add_option("--zoom", args->zoom,
                  "Magnify the fitted view (2 shows half the width; the camera is fitted to the "
                  "first frame, then fixed)")
      ->check(positive_number())
      ->capture_default_str();
  cmd->add_option("--fps", args->fps, "Frames per second of the movie")
      ->check(number_in(1.0, 240.0))
      ->capture_default_str();
  cmd->add_flag("--no-legend", args->no_legend, "Leave out the colour scale");
  cmd->add_flag("--time-label,!--no-time-label", args->time_label,
                "Write the simulated time (t = ...) in the top-left corner of every frame (on "
                "by default; a text or CSV snapshot, which stores no time, shows its file name)");
  cmd->add_flag("-q,--quiet", args->quiet, "No progress line or summary");
  cmd->callback([args, cmd] { render(*args, *cmd); });
}

}  // namespace nbody::cli
