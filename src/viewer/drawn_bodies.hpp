#pragma once
// What the window draws of the bodies, read from the simulation as little as possible.
//
// Every frame: the positions only, through Simulation::positions() (x y z as float; on the
// GPU path 12 bytes a body cross the bus instead of the whole state's 96).
// The rest (masses, radii, ids, colour values) is read from the whole state
// (Simulation::particles()) only when it may have changed: LiveSimulation::bodies_version()
// (an edit, a step in which bodies merged, new options, a restart) or another colouring.
// Colours by speed change as the bodies move, so after steps they are read again when due:
// every frame on the CPU path, where reading the state copies nothing, and on the GPU path
// at most twice a second and at most about 10% of the wall time (each reading downloads
// the whole state). In between, each body keeps the colour of the last reading.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "nbody/particles.hpp"
#include "render/colormap.hpp"
#include "viewer/live_simulation.hpp"

namespace nbody::viewer {

class DrawnBodies {
 public:
  /// Reads this frame's positions, and what else is due (call once a frame).
  void update(LiveSimulation& live, render::ColorBy by);

  /// x y z per body, as Simulation::positions() gives them.
  [[nodiscard]] const std::vector<float>& positions() const { return xyz_; }
  /// Radii, and colour values in [0, 1] scaled by colour_range().
  [[nodiscard]] const std::vector<double>& radii() const { return bodies_.radius; }
  [[nodiscard]] const std::vector<float>& colour_values() const { return values_; }
  [[nodiscard]] const render::ColorRange& colour_range() const { return range_; }
  /// Changes when the radii or the colour values were read again.
  [[nodiscard]] std::uint64_t attributes_version() const { return attributes_version_; }

  /// The bodies as drawn, for the debug overlay and picking: the positions of the last
  /// update() (float precision), masses, radii and ids as last read; velocities are zero
  /// (nothing there needs them).
  [[nodiscard]] const ParticleSystem& system();

 private:
  using Clock = std::chrono::steady_clock;
  /// Reads the whole state: the colour values, and with `bodies_changed` masses, radii, ids.
  void read_state(LiveSimulation& live, render::ColorBy by, bool bodies_changed);

  std::vector<float> xyz_;
  ParticleSystem bodies_;  // masses, radii, ids; positions filled in by system()
  bool positions_synced_ = false;
  std::vector<float> values_;
  render::ColorRange range_;
  std::uint64_t attributes_version_ = 0;

  bool read_once_ = false;
  std::uint64_t bodies_version_ = 0;  // LiveSimulation::bodies_version() at the last reading
  render::ColorBy by_ = render::ColorBy::Speed;
  std::uint64_t coloured_at_step_ = 0;  // LiveSimulation::steps_done() at the last reading
  Clock::time_point next_speeds_ = Clock::now();
};

}  // namespace nbody::viewer
