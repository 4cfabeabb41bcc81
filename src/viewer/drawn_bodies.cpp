#include "viewer/drawn_bodies.hpp"

#include <algorithm>

namespace nbody::viewer {

namespace {

/// GPU path: speed colours are read again at most this often ...
constexpr std::chrono::milliseconds kSpeedInterval{500};
/// ... and only after waiting this many times what the last reading took (about 10% of the
/// wall time, the rule of the energy measurement).
constexpr int kSpeedCostFactor = 9;

}  // namespace

void DrawnBodies::update(LiveSimulation& live, render::ColorBy by) {
  Simulation& sim = live.simulation();
  const bool bodies_changed =
      !read_once_ || live.bodies_version() != bodies_version_ || sim.size() != bodies_.size();
  const bool speeds_due = by == render::ColorBy::Speed && live.steps_done() != coloured_at_step_ &&
                          Clock::now() >= next_speeds_;
  if (bodies_changed || by != by_ || speeds_due) read_state(live, by, bodies_changed);
  // Right after a reading the host copy is current, and this copies nothing across the bus.
  sim.positions(xyz_);
  positions_synced_ = false;
}

void DrawnBodies::read_state(LiveSimulation& live, render::ColorBy by, bool bodies_changed) {
  const auto start = Clock::now();
  const ParticleSystem& ps = live.particles();  // GPU path: the whole state, when stale
  if (bodies_changed) {
    const std::size_t n = ps.size();
    bodies_.dim = ps.dim;
    bodies_.time = ps.time;
    bodies_.mass = ps.mass;
    bodies_.radius = ps.radius;
    bodies_.id = ps.id;
    for (auto* v : {&bodies_.x, &bodies_.y, &bodies_.z}) v->resize(n);
    for (auto* v : {&bodies_.vx, &bodies_.vy, &bodies_.vz}) v->assign(n, 0.0);
    bodies_version_ = live.bodies_version();
    read_once_ = true;
  }
  range_ = render::color_range(ps, by);
  values_ = render::color_values(ps, by, range_);
  by_ = by;
  coloured_at_step_ = live.steps_done();
  ++attributes_version_;
  const auto now = Clock::now();
  const Clock::duration cost = now - start;
  const Clock::duration wait = std::max<Clock::duration>(kSpeedInterval, kSpeedCostFactor * cost);
  next_speeds_ = live.simulation().on_device() ? now + wait : now;
}

const ParticleSystem& DrawnBodies::system() {
  if (!positions_synced_) {
    const std::size_t n = std::min(bodies_.size(), xyz_.size() / 3);
    for (std::size_t i = 0; i < n; ++i) {
      bodies_.x[i] = xyz_[3 * i];
      bodies_.y[i] = xyz_[3 * i + 1];
      bodies_.z[i] = xyz_[3 * i + 2];
    }
    positions_synced_ = true;
  }
  return bodies_;
}

}  // namespace nbody::viewer
