// `nbody view`: the frame loop. Each frame: input (mouse, keys, scripted actions), a few
// simulation steps, the ImGui panels, then the bodies, the debug lines and the panels drawn.
#include "viewer/viewer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numbers>
#include <utility>

#include <fmt/format.h>
#include <imgui.h>

#include "render/colormap.hpp"
#include "render/image.hpp"
#include "viewer/camera_control.hpp"
#include "viewer/debug_overlay.hpp"
#include "viewer/drawn_bodies.hpp"
#include "viewer/input_script.hpp"
#include "viewer/live_simulation.hpp"
#include "viewer/panels.hpp"
#include "viewer/scene_renderer.hpp"
#include "viewer/spawner.hpp"
#include "viewer/view_state.hpp"
#include "viewer/window.hpp"

namespace nbody::viewer {

namespace {

constexpr double kDragThreshold = 3;           // pixels: a left press that moves less is a click
constexpr double kScrollFactor = 0.85;         // visible width per scroll notch towards the viewer
constexpr double kHeldZoomPerSecond = 2;       // Shift / Ctrl held: zoom in / out by 2x per second
constexpr double kPickPixels = 20;             // a pick takes the nearest body within this distance
constexpr std::size_t kMaxTreeCells = 200000;  // drawing more lines than this stalls the frame

ViewState initial_state(const ViewerOptions& o, const ParticleSystem& ps, double visible_width) {
  ViewState s;
  s.paused = o.paused;
  s.steps_per_frame = std::max(o.steps_per_frame, 1);
  s.dt = o.dt;
  s.dt_range[0] = o.dt / 100;
  s.dt_range[1] = o.dt * 100;
  const double g = o.gravity.G != 0 ? std::abs(o.gravity.G) : 1.0;
  s.G_range[0] = g / 100;
  s.G_range[1] = g * 100;
  s.softening_max = std::max(10 * o.gravity.softening, 0.1 * visible_width);
  s.color_by = render::parse_color_by(o.color_by);
  s.discs = o.discs;
  s.show_ui = !o.hide_ui;
  s.draw_tree = o.show_tree;
  s.open_tab = o.panel;
  s.spawn = default_spawn_settings(ps, visible_width);
  return s;
}

class ViewerApp {
 public:
  ViewerApp(ParticleSystem initial, const ViewerOptions& options)
      : options_(options),
        script_(options.script.empty() ? std::vector<ScriptAction>{}
                                       : read_input_script(options.script)),
        live_(std::move(initial), SimulationOptions{options.gravity, options.integrator,
                                                    options.collisions, options.energy}),
        // Scripted and screenshot runs go as fast as they can; a person gets vsync.
        window_(options.width, options.height, fmt::format("nbody view: {} bodies", live_.size()),
                options.frames == 0) {
    int width = 0, height = 0;
    window_.framebuffer_size(width, height);
    reset_camera(width, height);
    state_ = initial_state(options, live_.particles(), 2 * camera_.camera.half_width);
    drawn_.update(live_, state_.color_by);  // what a pick before the first drawing sees
  }

  ViewerResult run();

 private:
  void handle_events();
  void handle_held_keys(double seconds);
  void apply_script();
  void click(double px, double py);
  void pick(double px, double py);
  /// count 0: the Spawn panel's count.
  void spawn_disc(double px, double py, int count = 0);
  void update_cursor();
  void reset_camera(int width, int height) {
    const double to_radians = std::numbers::pi / 180;
    camera_.reset(live_.particles(), width, height, options_.zoom,
                  options_.azimuth_degrees * to_radians, options_.elevation_degrees * to_radians);
  }
  void draw_scene(int width, int height);
  void save_screenshot(int width, int height) const;
  [[nodiscard]] bool planar() const { return live_.dim() == 2; }

  ViewerOptions options_;
  std::vector<ScriptAction> script_;
  std::size_t next_action_ = 0;
  LiveSimulation live_;
  DrawnBodies drawn_;  // what is drawn of live_'s bodies (positions read every frame)
  std::uint64_t uploaded_attributes_ = 0;  // drawn_.attributes_version() the renderer has
  Window window_;                          // the GL context: everything below needs it
  SceneRenderer renderer_;
  CameraControl camera_;
  DebugOverlay debug_;
  ViewState state_;
  std::uint64_t frame_ = 0;

  // Mouse drags, in framebuffer pixels.
  bool left_down_ = false, right_down_ = false, dragged_ = false;
  double press_x_ = 0, press_y_ = 0, last_x_ = 0, last_y_ = 0;
  double cursor_x_ = 0, cursor_y_ = 0;
  std::vector<float> tree_lines_, cell_lines_;
};

ViewerResult ViewerApp::run() {
  using Clock = std::chrono::steady_clock;
  const auto loop_start = Clock::now();
  auto frame_start = loop_start;
  double frame_seconds = 1.0 / 60;
  while (!window_.should_close()) {
    window_.begin_frame();
    ++frame_;
    int width = 0, height = 0;
    window_.framebuffer_size(width, height);
    camera_.resize(width, height);
    update_cursor();
    handle_events();
    handle_held_keys(frame_seconds);
    apply_script();

    if (!state_.paused || state_.step_once) live_.step(state_.steps_per_frame, state_.dt);
    state_.step_once = false;
    live_.update_energy();
    // The panels may reconfigure or restart the simulation, so the bodies are read only
    // after them.
    if (state_.show_ui) draw_panels(state_, live_);
    if (std::exchange(state_.restart, false)) state_.settings_error = live_.restart();
    if (std::exchange(state_.reset_camera, false)) reset_camera(width, height);

    if (width > 0 && height > 0) draw_scene(width, height);  // 0 x 0 while minimised
    window_.render_ui(state_.show_ui);
    const bool last_frame = options_.frames > 0 && frame_ >= options_.frames;
    if (last_frame && !options_.screenshot.empty()) save_screenshot(width, height);
    window_.swap();

    const auto now = Clock::now();
    frame_seconds = std::chrono::duration<double>(now - frame_start).count();
    frame_start = now;
    state_.frame_ms = 0.9 * state_.frame_ms + 0.1 * 1e3 * frame_seconds;  // smoothed
    if (last_frame) break;
  }
  const render::Camera& c = camera_.camera;
  fmt::print(stderr,
             "camera: center {:.17g} {:.17g} {:.17g}, half_width {:.17g}, azimuth {:.17g}, "
             "elevation {:.17g}, {}x{}\n",
             c.center[0], c.center[1], c.center[2], c.half_width, c.azimuth, c.elevation, c.width,
             c.height);
  return {live_.size(), frame_, live_.steps_done(),
          std::chrono::duration<double>(Clock::now() - loop_start).count()};
}

void ViewerApp::update_cursor() {
  double x = 0, y = 0, sx = 1, sy = 1;
  window_.cursor(x, y);
  window_.pixel_scale(sx, sy);
  cursor_x_ = x * sx;
  cursor_y_ = y * sy;
  state_.cursor_in_window = cursor_x_ >= 0 && cursor_y_ >= 0 && cursor_x_ < camera_.camera.width &&
                            cursor_y_ < camera_.camera.height;
  camera_.unproject(cursor_x_, cursor_y_, state_.cursor);

  // Drags follow the cursor between frames.
  const double dx = cursor_x_ - last_x_, dy = cursor_y_ - last_y_;
  if (left_down_) {
    if (std::hypot(cursor_x_ - press_x_, cursor_y_ - press_y_) > kDragThreshold) dragged_ = true;
    if (dragged_) {
      if (planar()) {
        camera_.pan(last_x_, last_y_, cursor_x_, cursor_y_);  // nothing to rotate in 2D
      } else {
        camera_.rotate(dx, dy);
      }
    }
  }
  if (right_down_) camera_.pan(last_x_, last_y_, cursor_x_, cursor_y_);
  last_x_ = cursor_x_;
  last_y_ = cursor_y_;
}

void ViewerApp::handle_events() {
  const ImGuiIO& io = ImGui::GetIO();
  double sx = 1, sy = 1;
  window_.pixel_scale(sx, sy);
  for (const InputEvent& e : window_.events()) {
    const double px = e.x * sx, py = e.y * sy;
    switch (e.kind) {
      case InputEvent::Kind::Button:
        if (e.action == GLFW_PRESS && io.WantCaptureMouse) break;  // a click on a panel
        if (e.button == GLFW_MOUSE_BUTTON_LEFT) {
          if (e.action == GLFW_PRESS) {
            left_down_ = true;
            dragged_ = false;
            press_x_ = px;
            press_y_ = py;
          } else if (left_down_) {
            left_down_ = false;
            if (!dragged_) click(press_x_, press_y_);
          }
        } else if (e.button == GLFW_MOUSE_BUTTON_RIGHT) {
          right_down_ = e.action == GLFW_PRESS;
        } else if (e.button == GLFW_MOUSE_BUTTON_MIDDLE && e.action == GLFW_PRESS) {
          pick(px, py);
        }
        break;
      case InputEvent::Kind::Scroll:
        if (!io.WantCaptureMouse) camera_.zoom_at(px, py, std::pow(kScrollFactor, e.amount));
        break;
      case InputEvent::Kind::Key:
        if (e.action == GLFW_RELEASE || io.WantCaptureKeyboard) break;
        switch (e.key) {
          case GLFW_KEY_SPACE:
            if (e.action == GLFW_PRESS) state_.paused = !state_.paused;
            break;
          case GLFW_KEY_N:
            state_.step_once = true;  // held down: steps on every key repeat
            break;
          case GLFW_KEY_R:
            if (e.action == GLFW_PRESS) spawn_disc(px, py);
            break;
          case GLFW_KEY_C:
          case GLFW_KEY_HOME:
            state_.reset_camera = true;
            break;
          case GLFW_KEY_H:
            if (e.action == GLFW_PRESS) state_.show_ui = !state_.show_ui;
            break;
          case GLFW_KEY_ESCAPE:
            window_.close();
            break;
          default:
            break;
        }
        break;
    }
  }
}

void ViewerApp::handle_held_keys(double seconds) {
  // Seed 001: Shift zooms in and Ctrl zooms out at the cursor while held.
  if (ImGui::GetIO().WantCaptureKeyboard || !state_.cursor_in_window) return;
  const bool in = window_.key_down(GLFW_KEY_LEFT_SHIFT) || window_.key_down(GLFW_KEY_RIGHT_SHIFT);
  const bool out =
      window_.key_down(GLFW_KEY_LEFT_CONTROL) || window_.key_down(GLFW_KEY_RIGHT_CONTROL);
  if (in == out) return;
  const double factor = std::pow(kHeldZoomPerSecond, std::min(seconds, 0.1));
  camera_.zoom_at(cursor_x_, cursor_y_, in ? 1 / factor : factor);
}

void ViewerApp::apply_script() {
  double sx = 1, sy = 1;
  window_.pixel_scale(sx, sy);
  for (; next_action_ < script_.size() && script_[next_action_].frame <= frame_; ++next_action_) {
    const ScriptAction& a = script_[next_action_];
    const double px = a.x * sx, py = a.y * sy;
    switch (a.kind) {
      case ScriptAction::Kind::Click:
        click(px, py);
        break;
      case ScriptAction::Kind::Disc:
        spawn_disc(px, py, static_cast<int>(a.amount));
        break;
      case ScriptAction::Kind::Pick:
        pick(px, py);
        break;
      case ScriptAction::Kind::Scroll:
        camera_.zoom_at(px, py, std::pow(kScrollFactor, a.amount));
        break;
      case ScriptAction::Kind::Pause:
        state_.paused = true;
        break;
      case ScriptAction::Kind::Resume:
        state_.paused = false;
        break;
      case ScriptAction::Kind::Step:
        state_.step_once = true;
        break;
      case ScriptAction::Kind::ResetCamera:
        state_.reset_camera = true;
        break;
    }
  }
}

void ViewerApp::click(double px, double py) {
  if (state_.pick_on_click) {
    pick(px, py);
    return;
  }
  double at[3];
  camera_.unproject(px, py, at);
  add_body(live_.edit_particles(), at, state_.spawn);
}

void ViewerApp::pick(double px, double py) {
  const ParticleSystem& ps = drawn_.system();  // the bodies where the last frame drew them
  if (const auto i = pick_body(ps, camera_.camera, px, py, kPickPixels)) {
    state_.picked_id = ps.id[*i];
  } else {
    state_.picked_id.reset();
  }
}

void ViewerApp::spawn_disc(double px, double py, int count) {
  double at[3], right[3], up[3];
  camera_.unproject(px, py, at);
  camera_.screen_axes(right, up);
  SpawnSettings s = state_.spawn;
  if (count > 0) s.count = count;
  add_disc(live_.edit_particles(), at, right, up, s);
}

void ViewerApp::draw_scene(int width, int height) {
  // Positions only, unless the bodies changed or speed colours are due (drawn_bodies.hpp).
  drawn_.update(live_, state_.color_by);
  const double* origin = camera_.camera.center;
  state_.color_range = drawn_.colour_range();
  if (drawn_.attributes_version() != uploaded_attributes_) {
    renderer_.set_body_attributes(drawn_.radii(), drawn_.colour_values());
    uploaded_attributes_ = drawn_.attributes_version();
  }
  renderer_.set_body_positions(drawn_.positions(), origin);

  DrawParams p;
  p.view = camera_.view_matrix();
  p.width = width;
  p.height = height;
  p.units_per_pixel = camera_.camera.units_per_pixel();
  p.discs = state_.discs;
  p.point_pixels = state_.point_pixels;
  renderer_.clear(width, height);
  renderer_.draw_bodies(p);

  if (state_.draw_tree) {
    debug_.build_tree(drawn_.system(), live_.options().gravity.threads);
    state_.tree_cells = debug_.cells();
    tree_lines_.clear();
    debug_.tree_lines(state_.tree_depth, kMaxTreeCells, origin, tree_lines_);
    const float tree_colour[4] = {0.3f, 0.6f, 1.0f, 0.35f};
    renderer_.draw_lines(tree_lines_, p, tree_colour);
    state_.cursor_cell_level = -1;
    const auto cell = state_.cursor_in_window ? debug_.cell_at(state_.cursor) : std::nullopt;
    if (state_.show_cursor_cell && cell) {
      cell_lines_.clear();
      debug_.cell_lines(*cell, origin, cell_lines_);
      const float cell_colour[4] = {1.0f, 0.9f, 0.2f, 1.0f};
      renderer_.draw_lines(cell_lines_, p, cell_colour);
      state_.cursor_cell_level = debug_.cell_level(*cell);
      state_.cursor_cell_bodies = debug_.cell_bodies(*cell);
    }
  }

  if (state_.picked_id) {
    const ParticleSystem& ps = drawn_.system();
    const auto picked = index_of(ps, *state_.picked_id);
    if (!picked) {
      state_.picked_id.reset();  // merged away
      return;
    }
    const auto neighbours = collision_neighbours(ps, *picked, state_.skin);
    state_.neighbour_count = neighbours.size();
    const float neighbour_colour[3] = {1.0f, 0.55f, 0.1f}, picked_colour[3] = {1, 1, 1};
    renderer_.set_highlights(ps, neighbours, origin);
    renderer_.draw_highlights(p, neighbour_colour);
    renderer_.set_highlights(ps, {*picked}, origin);
    renderer_.draw_highlights(p, picked_colour);
  }
}

void ViewerApp::save_screenshot(int width, int height) const {
  render::write_png(options_.screenshot, read_back_buffer(width, height));
  fmt::print(stderr, "nbody view: wrote {} ({}x{})\n", options_.screenshot, width, height);
}

}  // namespace

bool viewer_available() {
  return true;
}

ViewerResult run_viewer(ParticleSystem initial, const ViewerOptions& options) {
  ViewerApp app(std::move(initial), options);
  return app.run();
}

}  // namespace nbody::viewer
