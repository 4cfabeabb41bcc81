#include "viewer/panels.hpp"

#include <algorithm>
#include <cfloat>
#include <initializer_list>
#include <iterator>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <imgui.h>

#include "nbody/collisions.hpp"

namespace nbody::viewer {

namespace {

bool slider_double(const char* label, double* value, double lo, double hi, bool logarithmic,
                   const char* format = "%.4g") {
  return ImGui::SliderScalar(label, ImGuiDataType_Double, value, &lo, &hi, format,
                             logarithmic ? ImGuiSliderFlags_Logarithmic : 0);
}

/// A combo over the values of an option enum, shown by their names (to_string).
template <class Enum>
bool combo(const char* label, Enum& value, std::initializer_list<Enum> values) {
  bool changed = false;
  if (ImGui::BeginCombo(label, std::string(to_string(value)).c_str())) {
    for (const Enum v : values) {
      const bool selected = value == v;
      if (ImGui::Selectable(std::string(to_string(v)).c_str(), selected) && !selected) {
        value = v;
        changed = true;
      }
    }
    ImGui::EndCombo();
  }
  return changed;
}

/// The colormap as a strip with the values at its ends (speed, or mass undoing the log).
void legend(const ViewState& state) {
  const auto by = state.color_by;
  ImGui::Text("colour: %s", render::color_by_name(by));
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float width = std::max(ImGui::GetContentRegionAvail().x, 50.0f), height = 12;
  constexpr int kSteps = 64;
  for (int i = 0; i < kSteps; ++i) {
    const render::Rgb c = render::colormap((i + 0.5) / kSteps);
    const float x0 = origin.x + width * static_cast<float>(i) / kSteps;
    const float x1 = origin.x + width * static_cast<float>(i + 1) / kSteps;
    draw->AddRectFilled(ImVec2(x0, origin.y), ImVec2(x1, origin.y + height),
                        IM_COL32(c.r, c.g, c.b, 255));
  }
  ImGui::Dummy(ImVec2(width, height));
  const double lo = render::color_range_value(by, state.color_range.lo);
  const double hi = render::color_range_value(by, state.color_range.hi);
  ImGui::Text("%.3g", lo);
  const std::string right = fmt::format("{:.3g}", hi);
  ImGui::SameLine(std::max(width - ImGui::CalcTextSize(right.c_str()).x, 0.0f));
  ImGui::TextUnformatted(right.c_str());
}

void settings_tab(ViewState& state, LiveSimulation& live) {
  SimulationOptions s = live.options();
  bool changed = false;
  ImGui::TextDisabled("Solver (a change applies to the running simulation)");
  changed |=
      combo("algorithm", s.gravity.algorithm, {GravityAlgorithm::Direct, GravityAlgorithm::Tree});
  changed |= combo("device", s.gravity.device, {Device::Cpu, Device::Gpu});
  const int max_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  ImGui::BeginDisabled(s.gravity.device == Device::Gpu);
  changed |= ImGui::SliderInt("CPU threads (0 = all)", &s.gravity.threads, 0, max_threads);
  ImGui::EndDisabled();
  ImGui::BeginDisabled(s.gravity.algorithm != GravityAlgorithm::Tree);
  changed |= slider_double("theta", &s.gravity.theta, 0.0, 1.5, false, "%.2f");
  changed |= ImGui::Checkbox("quadrupole", &s.gravity.quadrupole);
  ImGui::EndDisabled();
  slider_double("dt", &state.dt, state.dt_range[0], state.dt_range[1], true, "%.3g");
  ImGui::SliderInt("steps per frame", &state.steps_per_frame, 1, 200);
  changed |= slider_double("G", &s.gravity.G, state.G_range[0], state.G_range[1], true, "%.4g");
  changed |= slider_double("softening", &s.gravity.softening, 0.0, state.softening_max, true);
  changed |= combo("integrator", s.integrator.scheme,
                   {IntegratorScheme::Leapfrog, IntegratorScheme::Euler,
                    IntegratorScheme::Kinematic, IntegratorScheme::Ias15});
  ImGui::BeginDisabled(has_bins(s.integrator.timestep));
  changed |= slider_double("damping", &s.integrator.damping, 0.9, 1.0, false, "%.4f");
  ImGui::EndDisabled();
  changed |= combo("time steps", s.integrator.timestep,
                   {TimestepMode::Fixed, TimestepMode::Adaptive, TimestepMode::Hierarchical});
  ImGui::BeginDisabled(!has_bins(s.integrator.timestep));
  changed |= slider_double("eta", &s.integrator.eta, 1e-4, 0.5, true, "%.4f");
  ImGui::EndDisabled();
  // IAS15 takes its own steps up to each dt of the frame; its accuracy is epsilon's.
  ImGui::BeginDisabled(s.integrator.scheme != IntegratorScheme::Ias15);
  changed |= slider_double("ias15 epsilon", &s.integrator.ias15_epsilon, 1e-12, 1e-4, true, "%.1e");
  ImGui::EndDisabled();

  changed |= combo("collisions", s.collisions.model,
                   {CollisionModel::None, CollisionModel::Bounce, CollisionModel::Merge});
  ImGui::BeginDisabled(s.collisions.model != CollisionModel::Bounce);
  changed |= slider_double("restitution", &s.collisions.restitution, 0.0, 1.0, false, "%.2f");
  ImGui::EndDisabled();
  ImGui::BeginDisabled(s.collisions.model == CollisionModel::None);
  changed |= ImGui::SliderInt("iterations", &s.collisions.iterations, 1, 16);
  ImGui::EndDisabled();
  if (changed) state.settings_error = live.apply(s);
  if (!state.settings_error.empty()) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(ImVec4(1, 0.4f, 0.3f, 1), "%s", state.settings_error.c_str());
    ImGui::PopTextWrapPos();
  }

  ImGui::Separator();
  if (ImGui::Button(state.paused ? "Resume (Space)" : "Pause (Space)"))
    state.paused = !state.paused;
  ImGui::SameLine();
  if (ImGui::Button("Step (N)")) state.step_once = true;
  ImGui::SameLine();
  if (ImGui::Button("Reset camera (C)")) state.reset_camera = true;
  ImGui::SameLine();
  if (ImGui::Button("Restart")) state.restart = true;

  ImGui::Separator();
  int by = state.color_by == render::ColorBy::Mass ? 1 : 0;
  const char* colourings[] = {"speed", "mass"};
  if (ImGui::Combo("colour by", &by, colourings, 2)) {
    state.color_by = by == 1 ? render::ColorBy::Mass : render::ColorBy::Speed;
  }
  int shape = state.discs ? 1 : 0;
  ImGui::RadioButton("points", &shape, 0);
  ImGui::SameLine();
  ImGui::RadioButton("discs (radius)", &shape, 1);
  state.discs = shape == 1;
  ImGui::BeginDisabled(state.discs);
  ImGui::SliderFloat("point size (px)", &state.point_pixels, 1, 16, "%.0f");
  ImGui::EndDisabled();
  ImGui::TextDisabled("H hides the panels, Esc quits");
}

void performance_tab(const ViewState& state, LiveSimulation& live) {
  Simulation& sim = live.simulation();
  ImGui::Text("%zu bodies (%dD), t = %.5g, %llu steps", sim.size(), live.dim(), sim.time(),
              static_cast<unsigned long long>(live.steps_done()));
  ImGui::Text("solver: %s, %s", sim.solver_name().c_str(), sim.integrator_name().c_str());
  ImGui::Text("%.1f steps/s   frame %.2f ms (%.0f fps)", live.steps_per_second(), state.frame_ms,
              state.frame_ms > 0 ? 1e3 / state.frame_ms : 0.0);
  ImGui::Separator();
  ImGui::TextDisabled("time per step, by stage");
  for (const StageTime& t : live.stage_times()) {
    const std::string bar = fmt::format("{:.3f} ms  {:.1f}%", t.ms, 100 * t.share);
    ImGui::ProgressBar(static_cast<float>(t.share),
                       ImVec2(ImGui::GetContentRegionAvail().x * 0.6f, 0), bar.c_str());
    ImGui::SameLine();
    ImGui::TextUnformatted(t.name.c_str());
  }
  if (sim.collision_model() != CollisionModel::None) {
    const CollisionTotals& c = sim.collision_totals();
    ImGui::Text("collisions: %llu contacts, %llu merges, energy lost %.4g",
                static_cast<unsigned long long>(c.contacts),
                static_cast<unsigned long long>(c.merges), c.energy_lost);
  }
  if (has_bins(sim.options().integrator.timestep)) {
    // The bodies per bin at the end of the last step: bin k steps by dt / 2^k.
    const TimestepStats& ts = sim.timestep_stats();
    std::vector<float> bins(ts.bins.begin(), ts.bins.end());
    const std::string label = fmt::format(
        "bins 0..{} (dt/2^k): {:.3g} force evaluations per body per step",
        bins.empty() ? 0 : bins.size() - 1,
        live.steps_done() > 0 && sim.size() > 0
            ? double(ts.force_evaluations) / double(sim.size()) / double(live.steps_done())
            : 0.0);
    ImGui::TextDisabled("%s", label.c_str());
    ImGui::PlotHistogram("##bins", bins.data(), static_cast<int>(bins.size()), 0, nullptr, 0.0f,
                         FLT_MAX, ImVec2(ImGui::GetContentRegionAvail().x, 60));
  }
  ImGui::Separator();
  ImGui::Checkbox(live.energy_label().c_str(), &live.track_energy);
  const auto& drift = live.drift_history();
  const std::string overlay = fmt::format("(E - E0)/|E0| = {:.3e}", live.last_drift());
  ImGui::PlotLines("##drift", drift.data(), static_cast<int>(drift.size()), 0, overlay.c_str(),
                   FLT_MAX, FLT_MAX, ImVec2(ImGui::GetContentRegionAvail().x, 90));
}

void spawn_tab(ViewState& state) {
  SpawnSettings& s = state.spawn;
  ImGui::TextWrapped(
      "Left click: one body at the cursor. R: a filled disc of bodies at the cursor.");
  ImGui::DragFloat("mass", &s.mass, std::max(s.mass * 0.01f, 1e-9f), 0.0f, FLT_MAX, "%.4g");
  ImGui::DragFloat("radius", &s.radius, std::max(s.radius * 0.01f, 1e-6f), 0.0f, FLT_MAX, "%.4g");
  ImGui::SliderInt("disc bodies", &s.count, 1, 5000);
  ImGui::DragFloat("disc radius", &s.disc_radius, std::max(s.disc_radius * 0.01f, 1e-6f), 0.0f,
                   FLT_MAX, "%.4g");
  ImGui::DragFloat3("velocity", s.velocity, 0.01f, -FLT_MAX, FLT_MAX, "%.3g");
  ImGui::DragFloat("disc spin", &s.spin, 0.01f, -FLT_MAX, FLT_MAX, "%.3g");
}

void debug_tab(ViewState& state) {
  ImGui::Checkbox("draw tree cells", &state.draw_tree);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(120);
  ImGui::SliderInt("depth", &state.tree_depth, 0, 21);
  if (state.draw_tree) ImGui::Text("%zu cells (leaves of <= 8 bodies)", state.tree_cells);
  ImGui::Checkbox("highlight the cell under the cursor", &state.show_cursor_cell);
  if (state.cursor_in_window) {
    ImGui::Text("cursor: (%.5g, %.5g, %.5g)", state.cursor[0], state.cursor[1], state.cursor[2]);
    if (state.cursor_cell_level >= 0) {
      ImGui::Text("cell: level %d, %zu bodies", state.cursor_cell_level, state.cursor_cell_bodies);
    }
  }
  ImGui::Separator();
  ImGui::Checkbox("left click picks a body (middle click always does)", &state.pick_on_click);
  ImGui::SliderFloat("neighbour skin", &state.skin, 0.0f, 5.0f, "%.2f");
  if (state.picked_id) {
    ImGui::Text("picked id %llu: %zu neighbours within (1 + skin)(r_i + r_j)",
                static_cast<unsigned long long>(*state.picked_id), state.neighbour_count);
    if (ImGui::Button("Clear pick")) state.picked_id.reset();
  } else {
    ImGui::TextDisabled("no body picked");
  }
}

}  // namespace

void draw_panels(ViewState& state, LiveSimulation& live) {
  ImGui::SetNextWindowPos(ImVec2(10, 10), ImGuiCond_FirstUseEver);
  ImGui::SetNextWindowSize(ImVec2(440, 500), ImGuiCond_FirstUseEver);
  ImGui::Begin("nbody");
  ImGui::PushItemWidth(ImGui::GetWindowWidth() * 0.5f);  // room for the labels
  legend(state);
  if (ImGui::BeginTabBar("tabs")) {
    // --panel NAME: that tab in front on the first frame.
    const std::string open = std::exchange(state.open_tab, std::string());
    auto flags = [&](const char* name) {
      return open == name ? ImGuiTabItemFlags_SetSelected : ImGuiTabItemFlags_None;
    };
    if (ImGui::BeginTabItem("Settings", nullptr, flags("settings"))) {
      settings_tab(state, live);
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Performance", nullptr, flags("performance"))) {
      performance_tab(state, live);
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Spawn", nullptr, flags("spawn"))) {
      spawn_tab(state);
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Debug", nullptr, flags("debug"))) {
      debug_tab(state);
      ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
  }
  ImGui::PopItemWidth();
  ImGui::End();
}

}  // namespace nbody::viewer
