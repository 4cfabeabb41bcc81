// nbody view: the interactive window (src/viewer/), with the run options of `nbody run`.
// Always registered; in a build without GLFW/ImGui/OpenGL the viewer stub says how to get it.
#include <memory>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/option_checks.hpp"
#include "cli/options.hpp"
#include "nbody/error.hpp"
#include "render/colormap.hpp"
#include "render/image.hpp"
#include "viewer/viewer.hpp"

namespace nbody::cli {

namespace {

struct ViewArgs {
  std::string input;
  std::string format = "auto";
  ModelOptions model;
  int dim = 3;
  viewer::ViewerOptions view;
};

void view(ViewArgs& a, const CLI::App& app) {
  // Before any bodies are generated: the stub throws the "how to enable it" message.
  if (!viewer::viewer_available()) viewer::run_viewer({}, a.view);
  check_collision_options(app, a.view.collisions);
  (void)render::parse_color_by(a.view.color_by);  // a bad name fails before the window opens
  if (!a.view.screenshot.empty()) {
    if (!render::png_supported()) {
      throw Error(
          "--screenshot: this nbody was built without a PNG writer (install libstb-dev and "
          "reconfigure)");
    }
    if (a.view.frames == 0) a.view.frames = 1;
  }
  ParticleSystem bodies =
      load_or_generate(a.input, a.format, a.model, a.view.gravity.G, a.dim, app, "view");
  if (!a.input.empty() && app.count("--radius")) {
    for (double& r : bodies.radius) r = a.model.radius;
  }
  if (a.dim == 2) bodies.make_planar();
  const viewer::ViewerResult result = viewer::run_viewer(std::move(bodies), a.view);
  // For scripts and tests: what the session ended with.
  const double ms_per_frame =
      result.frames > 0 ? 1e3 * result.seconds / static_cast<double>(result.frames) : 0.0;
  fmt::print(stderr, "frames: {}, steps: {}, {:.2f} ms per frame\nbodies: {}\n", result.frames,
             result.steps, ms_per_frame, result.bodies);
}

}  // namespace

void add_view_command(CLI::App& app) {
  auto args = std::make_shared<ViewArgs>();
  auto* cmd = app.add_subcommand(
      "view",
      "Open a window in which the simulation runs live (GLFW, OpenGL 3.3, Dear ImGui): "
      "scroll or Shift/Ctrl zoom at the cursor, right-drag pans, left-drag rotates, left click "
      "adds a body, R a disc, Space pauses, N steps, C resets the camera, H hides the panels");
  add_source_options(cmd, args->input, args->format, args->model.model);
  add_model_options(cmd, args->model);
  viewer::ViewerOptions& v = args->view;
  cmd->add_option("--dt", v.dt, "Time step (IAS15: its first step, default 0.001)")
      ->check(time_step_check())
      ->capture_default_str();
  add_gravity_options(cmd, v.gravity);
  add_integrator_options(cmd, v.integrator);
  add_collision_options(cmd, v.collisions);
  add_energy_option(cmd, v.energy);
  add_dim_option(cmd, args->dim);
  cmd->add_option("--steps-per-frame", v.steps_per_frame, "Simulation steps per drawn frame")
      ->check(whole_in(1, 100000))
      ->capture_default_str();
  cmd->add_flag("--paused", v.paused, "Start paused (Space resumes, N steps)");
  cmd->add_option("--width", v.width, "Window width")
      ->check(whole_in(64, 16384))
      ->capture_default_str();
  cmd->add_option("--height", v.height, "Window height")
      ->check(whole_in(64, 16384))
      ->capture_default_str();
  cmd->add_option("--azimuth", v.azimuth_degrees,
                  "Start turned about the vertical screen axis (degrees)")
      ->check(number_in(-360.0, 360.0));
  cmd->add_option("--elevation", v.elevation_degrees,
                  "Start tilted about the horizontal screen axis (degrees)")
      ->check(number_in(-90.0, 90.0));
  cmd->add_option("--zoom", v.zoom, "Magnify the fitted view (2 shows half the width)")
      ->check(positive_number())
      ->capture_default_str();
  cmd->add_option("--color", v.color_by, "Colour bodies by speed or mass")
      ->check(one_of({"speed", "mass"}))
      ->capture_default_str();
  cmd->add_flag("--discs", v.discs, "Draw bodies as discs sized by their radius (else points)");
  cmd->add_flag("--hide-ui", v.hide_ui, "Start with the panels hidden (H shows them)");
  cmd->add_option("--panel", v.panel, "The panel tab shown first")
      ->check(one_of({"settings", "performance", "spawn", "debug"}))
      ->capture_default_str();
  cmd->add_flag("--show-tree", v.show_tree, "Start with the Barnes-Hut cells drawn (Debug panel)");
  cmd->add_option("--screenshot", v.screenshot,
                  "Save the last frame as PNG and exit (after --frames frames; 1 if not given)");
  cmd->add_option("--frames", v.frames, "Exit after this many frames")->check(whole_at_least(1));
  cmd->add_option("--script", v.script,
                  "Scripted inputs, one per line: 'frame N click X Y', 'frame N disc X Y', "
                  "'frame N pick X Y', 'frame N scroll X Y NOTCHES', 'frame N "
                  "pause|resume|step|reset' (window pixels)")
      ->check(existing_file());
  cmd->callback([args, cmd] {
    default_ias15_first_step(*cmd, args->view.integrator, args->view.dt);
    view(*args, *cmd);
  });
}

}  // namespace nbody::cli
