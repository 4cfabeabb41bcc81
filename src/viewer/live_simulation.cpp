#include "viewer/live_simulation.hpp"

#include <cmath>
#include <utility>

#include "nbody/diagnostics.hpp"
#include "nbody/error.hpp"

namespace nbody::viewer {

namespace {

constexpr std::size_t kHistoryLength = 600;  // energy samples kept for the plot
constexpr double kWindowSeconds = 0.5;       // rates averaged over this long

/// Above these sizes each exact (O(N^2)) energy measurement would stall the window for a
/// visible moment (CPU: ~0.1 s at 10k bodies on two cores); the Performance panel can
/// switch it on. Solver energies cost O(N) on the frames that ask for them: always on.
constexpr std::size_t kEnergyLimitCpu = 10000;
constexpr std::size_t kEnergyLimitGpu = 300000;

Simulation build(ParticleSystem ps, const SimulationOptions& options) {
  // Accelerations read with the bodies may belong to another G, softening or solver.
  ps.invalidate_accelerations();
  return Simulation(std::move(ps), options);
}

/// Cumulative seconds per key: the force stages ("stage:" + name) and the step's phases.
std::vector<std::pair<std::string, double>> totals(Simulation& sim) {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& [name, seconds] : sim.gravity_stages().entries())
    out.emplace_back("stage:" + name, seconds);
  for (const char* phase : {"gravity", "collisions", "integrate"})
    out.emplace_back(phase, sim.times().get(phase));
  return out;
}

void add_to(std::vector<std::pair<std::string, double>>& sums, const std::string& key,
            double seconds) {
  for (auto& [name, total] : sums) {
    if (name == key) {
      total += seconds;
      return;
    }
  }
  sums.emplace_back(key, seconds);
}

double value_of(const std::vector<std::pair<std::string, double>>& sums, const std::string& key) {
  for (const auto& [name, total] : sums)
    if (name == key) return total;
  return 0.0;
}

}  // namespace

LiveSimulation::LiveSimulation(ParticleSystem initial, const SimulationOptions& options)
    : initial_(initial), options_(options), sim_(build(std::move(initial), options)) {
  switch (sim_.energy_method()) {
    case EnergyMethod::Exact:
      track_energy = sim_.size() <= (sim_.on_device() ? kEnergyLimitGpu : kEnergyLimitCpu);
      break;
    case EnergyMethod::Off:
      track_energy = false;
      break;
    default:
      track_energy = true;
  }
  reset_measurements();
}

std::string LiveSimulation::apply(const SimulationOptions& options) {
  try {
    sim_.reconfigure(options);
  } catch (const Error& e) {
    return e.what();
  }
  options_ = options;
  ++bodies_version_;
  reset_measurements();
  return {};
}

std::string LiveSimulation::restart() {
  try {
    sim_ = build(initial_, options_);
  } catch (const Error& e) {
    return e.what();
  }
  ++bodies_version_;
  reset_measurements();
  return {};
}

const ParticleSystem& LiveSimulation::particles() const {
  return sim_.particles();
}

ParticleSystem& LiveSimulation::edit_particles() {
  have_baseline_ = false;  // E0 of the old system means nothing for the new one
  ++bodies_version_;
  return sim_.edit_particles();
}

void LiveSimulation::reset_measurements() {
  have_baseline_ = false;
  next_energy_ = Clock::now();
  window_start_ = Clock::now();
  window_steps_ = 0;
  window_seconds_.clear();
  last_totals_ = totals(sim_);  // the clocks so far (a restart starts them at zero)
}

void LiveSimulation::step(int steps, double dt) {
  const std::size_t before = sim_.size();
  for (int s = 0; s < steps; ++s) {
    // Solver energies: the frame's last step computes the potentials with its forces when
    // a measurement is due, so update_energy() then costs O(N).
    if (s == steps - 1 && track_energy && Clock::now() >= next_energy_) sim_.request_potentials();
    sim_.step(dt);
  }
  if (sim_.size() != before) ++bodies_version_;  // bodies merged
  total_steps_ += static_cast<std::uint64_t>(steps);
  window_steps_ += static_cast<std::uint64_t>(steps);
  auto now_totals = totals(sim_);
  for (const auto& [key, seconds] : now_totals)
    add_to(window_seconds_, key, seconds - value_of(last_totals_, key));
  last_totals_ = std::move(now_totals);
  const double elapsed = std::chrono::duration<double>(Clock::now() - window_start_).count();
  if (elapsed >= kWindowSeconds) {
    steps_per_second_ = static_cast<double>(window_steps_) / elapsed;
    publish_stage_times();
    window_start_ = Clock::now();
    window_steps_ = 0;
    window_seconds_.clear();
  }
}

void LiveSimulation::publish_stage_times() {
  stage_times_.clear();
  if (window_steps_ == 0) return;
  const double per_step_ms = 1e3 / static_cast<double>(window_steps_);
  const double gravity = value_of(window_seconds_, "gravity");
  const double collisions = value_of(window_seconds_, "collisions");
  const double integrate = value_of(window_seconds_, "integrate");
  const double step = gravity + collisions + integrate;
  auto row = [&](std::string name, double seconds) {
    stage_times_.push_back(
        {std::move(name), seconds * per_step_ms, step > 0 ? seconds / step : 0.0});
  };
  // As `nbody run --timings`: the force stages when the solver reports them, else gravity whole.
  double staged = 0;
  for (const auto& [key, seconds] : window_seconds_) {
    if (key.rfind("stage:", 0) != 0) continue;
    row(key.substr(6), seconds);
    staged += seconds;
  }
  if (staged == 0) row("gravity", gravity);
  // Packing and transfers around the staged kernels; left out when it is only timer noise.
  if (staged > 0 && gravity - staged > 0.01 * step) row("gravity other", gravity - staged);
  if (collisions > 0) row("collisions", collisions);
  row("integrate", integrate);
  row("step", step);
}

void LiveSimulation::update_energy() {
  if (!track_energy || Clock::now() < next_energy_) return;
  const auto start = Clock::now();
  const Diagnostics d = sim_.diagnostics();
  if (!d.has_energy()) return;
  const double energy = d.total_energy;
  // Energy taken out by collisions is booked, so E + lost is what should stay constant.
  const double lost = sim_.collision_totals().energy_lost;
  if (!have_baseline_) {
    e0_ = energy;
    lost0_ = lost;
    have_baseline_ = true;
    drift_history_.clear();
  }
  const double change = energy + (lost - lost0_) - e0_;
  last_drift_ = e0_ != 0 ? change / std::abs(e0_) : change;
  if (drift_history_.size() == kHistoryLength) drift_history_.erase(drift_history_.begin());
  drift_history_.push_back(static_cast<float>(last_drift_));
  // Waiting nine times what it cost keeps the measurement at about 10% of the wall time.
  next_energy_ = Clock::now() + 9 * (Clock::now() - start);
}

std::string LiveSimulation::energy_label() const {
  switch (sim_.energy_method()) {
    case EnergyMethod::Exact:
      return "track energy (exact, O(N^2))";
    case EnergyMethod::Tree:
      return "track energy (float64 quadrupole tree)";
    case EnergyMethod::Off:
      return "track energy (off: --energy off)";
    default:
      return "track energy (solver's potential)";
  }
}

}  // namespace nbody::viewer
