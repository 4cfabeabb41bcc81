#pragma once
// What the window's controls edit besides the solver settings (which live in
// LiveSimulation): stepping, drawing, spawning and debugging choices, and the read-outs the
// panels show.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "render/colormap.hpp"
#include "viewer/spawner.hpp"

namespace nbody::viewer {

struct ViewState {
  // Stepping.
  bool paused = false;
  bool step_once = false;  // N or the Step button: one frame's steps while paused
  int steps_per_frame = 1;
  double dt = 0.01;
  // Slider ranges, set around the starting values (G may be 1 or 6.7e-11).
  double dt_range[2] = {1e-4, 1};
  double G_range[2] = {1e-2, 1e2};
  double softening_max = 1;

  // Drawing.
  render::ColorBy color_by = render::ColorBy::Speed;
  render::ColorRange color_range;  // of the current frame, for the legend
  bool discs = false;
  float point_pixels = 4;
  bool show_ui = true;
  std::string open_tab;       // a tab to bring to the front on the next frame ("" none)
  bool reset_camera = false;  // asked for by the button (C / Home are keys)
  bool restart = false;

  SpawnSettings spawn;

  // Debug panel.
  bool draw_tree = false;
  int tree_depth = 6;
  bool show_cursor_cell = true;
  bool pick_on_click = false;  // left click picks instead of spawning (middle click always picks)
  float skin = 0.5f;           // neighbours within (1 + skin)(r_i + r_j)
  std::optional<std::uint64_t> picked_id;
  std::size_t neighbour_count = 0;
  std::size_t tree_cells = 0;
  bool cursor_in_window = false;
  double cursor[3] = {0, 0, 0};  // simulation coordinates under the cursor
  int cursor_cell_level = -1;
  std::size_t cursor_cell_bodies = 0;

  // Read-outs.
  double frame_ms = 0;
  std::string settings_error;
};

}  // namespace nbody::viewer
