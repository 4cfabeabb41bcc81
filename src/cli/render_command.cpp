// nbody render: pictures and movies without a display. Draws a file as it is, runs a
// simulation like `nbody run` and draws a frame every K steps, or draws a series of snapshot
// files, with the software splatter of src/render, to PNG files in a folder or to an .mp4
// through ffmpeg.
#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
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
#include "cli/render_frames.hpp"
#include "cli/render_ranks.hpp"
#include "cli/usage_error.hpp"
#include "nbody/distributed.hpp"
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

void render_run(const RenderArgs& a, const CLI::App& app, FrameSink& sink, FrameRenderer& renderer,
                const std::shared_ptr<ForceReducer>& ranks) {
  // Under mpirun every rank steps (owning its bodies where the run decomposes) and rank 0
  // draws the bodies gathered to it (render_ranks.hpp).
  const bool writer = !ranks || ranks->part() == 0;
  const bool talk = !a.quiet && writer;
  check_collision_options(app, a.collisions);
  if (draws_file_as_is(a, app)) {
    ParticleSystem initial =
        load_or_generate(a.input, a.format, a.model, a.gravity.G, a.dim, app, "render");
    if (app.count("--radius")) {  // as in `nbody run`
      for (double& r : initial.radius) r = a.model.radius;
    }
    if (a.dim == 2) initial.make_planar();
    render_file(a, initial, sink, renderer);
    return;
  }
  Simulation sim = render_simulation(
      a.input, a.format, a.model,
      SimulationOptions{a.gravity, a.integrator, a.collisions, EnergyMethod::Auto}, a.dim, app,
      ranks);
  const std::uint64_t total_steps = (a.frames - 1) * a.every;
  if (talk) {
    fmt::print(
        "nbody render: {} bodies, {}, {} dt = {:g}, {} frames every {} steps ({} steps), "
        "{}x{}{}\n",
        sim.size(), sim.solver_name(), sim.integrator_name(), a.dt, a.frames, a.every, total_steps,
        a.width, a.height,
        ranks ? fmt::format(", on {} MPI ranks (rank 0 draws)", ranks->parts()) : "");
    std::fflush(stdout);  // before the progress line, which goes to stderr
  }
  ParticleSystem gathered;
  // The camera is fitted to the first frame, drawn or not.
  const auto frame = [&](std::uint64_t index, bool first) {
    if (!first && !sink.wants(index, a.frames)) return;
    const ParticleSystem& drawn = drawn_bodies(sim, ranks.get(), gathered);
    if (!writer) return;
    renderer.fix_view(drawn);
    if (sink.wants(index, a.frames)) sink.write(renderer.draw(drawn, time_text(sim.time())));
  };
  frame(0, true);
  ProgressLine progress(stderr, total_steps, talk);
  for (std::uint64_t s = 1; s <= total_steps; ++s) {
    sim.step(a.dt);
    if (s % a.every == 0) frame(s / a.every, false);
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
  std::shared_ptr<ForceReducer> ranks = world();
  if (ranks && ranks->parts() == 1) ranks = nullptr;
  if (ranks && (!a.snapshots.empty() || draws_file_as_is(a, app))) {
    throw UsageError(fmt::format(
        "nbody render draws files as one process; under mpirun (here {} ranks) it runs a "
        "simulation: --model NAME or -i FILE with --frames or --every",
        ranks->parts()));
  }
  const bool writer = !ranks || ranks->part() == 0;
  FrameRenderer renderer(a);
  // Fails early when ffmpeg is missing; under mpirun on rank 0, and then every rank stops.
  std::optional<FrameSink> sink;
  std::exception_ptr failure;
  try {
    sink.emplace(a.output, a.width, a.height, a.fps, writer);
  } catch (...) {
    failure = std::current_exception();
  }
  if (ranks && ranks->max(failure ? 1 : 0) != 0 && !writer)
    throw CommandExit{kExitError};  // rank 0 says why
  if (failure) std::rethrow_exception(failure);
  if (a.snapshots.empty()) {
    render_run(a, app, *sink, renderer, ranks);
  } else {
    render_snapshots(a, *sink, renderer);
  }
  sink->finish();
  if (!a.quiet && writer) fmt::print("wrote {}\n", sink->describe());
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
  cmd->add_option("--dt", args->dt, "Time step (IAS15: its first step, default 0.001)")
      ->check(time_step_check())
      ->capture_default_str();
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
  cmd->callback([args, cmd] {
    default_ias15_first_step(*cmd, args->integrator, args->dt);
    render(*args, *cmd);
  });
}

}  // namespace nbody::cli
