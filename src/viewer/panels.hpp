#pragma once
// The Dear ImGui panels of seed 001 §8.2 in one window with tabs: Settings (solver, device,
// threads, theta, dt, G, softening, collisions; drawing), Performance (rates, per-stage bars,
// the energy drift plot), Spawn and Debug, with the colour legend above the tabs.
#include "viewer/live_simulation.hpp"
#include "viewer/view_state.hpp"

namespace nbody::viewer {

/// Builds this frame's panels (between ImGui::NewFrame and ImGui::Render). A changed solver
/// setting goes to live.apply() (Simulation::reconfigure on the current bodies).
void draw_panels(ViewState& state, LiveSimulation& live);

}  // namespace nbody::viewer
