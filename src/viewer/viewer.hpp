#pragma once
// `nbody view`: a window (GLFW, OpenGL 3.3 core, Dear ImGui) in which a Simulation steps
// live. Plain C++ on purpose: the command line includes this header in every build, and a
// build without GLFW/ImGui/OpenGL links viewer_none.cpp, whose run_viewer() says how to
// enable the viewer.
#include <cstddef>
#include <cstdint>
#include <string>

#include "nbody/collisions.hpp"
#include "nbody/diagnostics.hpp"
#include "nbody/gravity.hpp"
#include "nbody/integrator.hpp"
#include "nbody/particles.hpp"

namespace nbody::viewer {

struct ViewerOptions {
  GravityOptions gravity;
  IntegratorOptions integrator;
  CollisionOptions collisions;
  EnergyMethod energy = EnergyMethod::Auto;  // the Performance panel's energy (--energy)
  double dt = 0.01;
  int steps_per_frame = 1;
  bool paused = false;             // start paused (Space resumes)
  int width = 1280, height = 800;  // window size in screen coordinates
  // The starting view (and the one C resets to): Camera::fit, magnified and turned.
  double zoom = 1;
  double azimuth_degrees = 0, elevation_degrees = 0;
  std::string color_by = "speed";  // speed | mass
  bool discs = false;              // bodies as discs sized by radius (else round points)
  bool hide_ui = false;            // no ImGui panels (H toggles)
  bool show_tree = false;          // start with the Debug panel's tree cells drawn
  std::string panel = "settings";  // the tab shown first: settings|performance|spawn|debug
  std::string screenshot;          // with frames: PNG of the last frame
  std::uint64_t frames = 0;        // > 0: exit after this many frames
  std::string script;              // scripted inputs (input_script.hpp)
};

struct ViewerResult {
  std::size_t bodies = 0;  // at exit
  std::uint64_t frames = 0;
  std::uint64_t steps = 0;
  double seconds = 0;  // wall time of the frame loop
};

/// True when this nbody was built with the viewer.
[[nodiscard]] bool viewer_available();

/// Opens the window and runs until it is closed or options.frames have been drawn.
/// Throws nbody::Error when no window can be opened (no display, no OpenGL 3.3) or the
/// viewer was not built.
ViewerResult run_viewer(ParticleSystem initial, const ViewerOptions& options);

}  // namespace nbody::viewer
