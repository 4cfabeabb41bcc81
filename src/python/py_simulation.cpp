#include "python/py_simulation.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "nbody/error.hpp"
#include "nbody/input_error.hpp"
#include "nbody/integrator.hpp"
#include "python/checks.hpp"

namespace nbody::python {

namespace {

/// A 64-bit FNV-1a style hash of some arrays of the state, in four interleaved lanes (four
/// independent multiply chains run about four times as fast as one).
template <class... Vectors>
std::uint64_t hash_of(std::size_t n, const Vectors&... vectors) {
  constexpr std::uint64_t kPrime = 0x100000001b3ull;
  std::uint64_t lane[4] = {0xcbf29ce484222325ull ^ n, 1, 2, 3};
  auto add = [&lane](const auto& v) {
    std::size_t i = 0;
    for (; i + 4 <= v.size(); i += 4) {
      for (int k = 0; k < 4; ++k)
        lane[k] = (lane[k] ^ std::bit_cast<std::uint64_t>(v[i + k])) * kPrime;
    }
    for (; i < v.size(); ++i) lane[0] = (lane[0] ^ std::bit_cast<std::uint64_t>(v[i])) * kPrime;
  };
  (add(vectors), ...);
  return ((lane[0] * kPrime ^ lane[1]) * kPrime ^ lane[2]) * kPrime ^ lane[3];
}

}  // namespace

/// Hashes of the state, to see what writes through the views changed: O(N), a few ms at
/// N = 1e6 for all nine arrays, against a force evaluation that costs far more (an N^2
/// sum, or a tree build and walk of N log N steps of hundreds of operations each).
PySimulation::Fingerprint PySimulation::fingerprint(const ParticleSystem& ps) {
  return {hash_of(ps.size(), ps.x, ps.y, ps.z, ps.mass),
          hash_of(ps.size(), ps.vx, ps.vy, ps.vz, ps.radius), hash_of(ps.size(), ps.id)};
}

namespace {}  // namespace

PySimulation::Busy::Busy(PySimulation& sim) : sim_(sim) {
  if (sim_.busy_.exchange(true)) {
    throw std::runtime_error(
        "nbody.Simulation is busy in another thread (step, evolve, energy and accelerations "
        "release the GIL); wait for that call to return");
  }
}

PySimulation::Busy::~Busy() {
  sim_.busy_ = false;
}

PySimulation::PySimulation(ParticleSystem particles, const RunOptions& options)
    : options_(options), n_active_given_(!follows_masses(particles)) {
  check_state(particles);
  validate(options_, particles.dim);
  sim_ = std::make_unique<Simulation>(std::move(particles), options_);
}

const ParticleSystem& PySimulation::state() const {
  return sim_->particles();
}

ParticleSystem& PySimulation::mutable_state() {
  return sim_->edit_particles();
}

void PySimulation::set_time(double t) {
  if (!std::isfinite(t)) throw input_error("time", "must be finite", t);
  mutable_state().time = t;
}

void PySimulation::edit_state(const std::function<void(ParticleSystem&)>& edit, bool moves_bodies) {
  ParticleSystem edited = state();
  edit(edited);
  if (edited.dim == 2) edited.make_planar();  // a planar system stays planar
  check_state(edited);
  // Into the existing buffers, so that views stay attached.
  ParticleSystem& s = mutable_state();
  auto copy_into = [](const auto& from, auto& to) {
    std::copy(from.begin(), from.end(), to.begin());
  };
  copy_into(edited.x, s.x), copy_into(edited.y, s.y), copy_into(edited.z, s.z);
  copy_into(edited.vx, s.vx), copy_into(edited.vy, s.vy), copy_into(edited.vz, s.vz);
  copy_into(edited.mass, s.mass), copy_into(edited.radius, s.radius), copy_into(edited.id, s.id);
  s.time = edited.time;
  if (moves_bodies) s.invalidate_accelerations();
}

void PySimulation::set_options(const RunOptions& next, bool reconfigure) {
  validate(next, dim());
  if (reconfigure) {
    const bool was_on_device = on_device();
    sim_->reconfigure(next);  // throws before changing anything
    probe_solver_.reset();
    if (!was_on_device && on_device()) detach_views();
  }
  options_ = next;
}

void PySimulation::check_has_bodies(const char* caller) const {
  // As REBOUND's integrate() on an empty simulation (NoParticles): an error, not a clock
  // that ticks over nothing.
  if (size() == 0)
    throw Error(fmt::format("{}: the simulation has no bodies (add some with sim.add())", caller));
}

std::uint64_t PySimulation::step(std::uint64_t count, const std::function<bool()>& keep_going) {
  if (count > 0) check_has_bodies("step");
  check_view_edits();
  std::uint64_t done = 0;
  while (done < count) {
    if (sim_->own_steps()) {  // IAS15: one of its own steps (dt: the first one's guess)
      sim_->own_step(options_.step(), std::numeric_limits<double>::infinity());
    } else {
      sim_->step(options_.step());
    }
    ++done;
    if (after_step_) after_step_();
    if (done < count && !keep_going()) break;
  }
  remember_fingerprint();
  return done;
}

void PySimulation::check_evolve(double t_end) const {
  if (!(t_end > time()) || !std::isfinite(t_end)) {
    throw input_error("evolve", "t must be after the current time " + printable(time()), t_end);
  }
  check_has_bodies("evolve");
  // The CLI's checks and messages: every step advancing the time up to t_end, at most
  // 2^53 of them (IAS15: its first step advancing it).
  check_run_until(options_.integrator, time(), t_end, options_.step());
}

std::uint64_t PySimulation::evolve(double t_end, const std::function<bool()>& keep_going) {
  if (t_end == time()) return 0;
  check_evolve(t_end);
  check_view_edits();
  std::uint64_t done = 0;
  if (sim_->own_steps()) {  // IAS15: its own steps, the last one landing on t_end
    while (time() < t_end) {
      sim_->own_step(options_.step(), t_end);
      ++done;
      if (after_step_) after_step_();
      if (time() < t_end && !keep_going()) break;
    }
    remember_fingerprint();
    return done;
  }
  for (double h = step_toward(time(), t_end, options_.step()); h > 0;
       h = step_toward(time(), t_end, options_.step())) {
    sim_->step(h);
    ++done;
    if (after_step_) after_step_();
    if (step_toward(time(), t_end, options_.step()) > 0 && !keep_going()) break;
  }
  remember_fingerprint();
  return done;
}

Diagnostics PySimulation::diagnostics(EnergyMethod method) {
  return sim_->diagnostics(method);
}

const ParticleSystem& PySimulation::accelerations() {
  check_view_edits();
  if (state().accelerations_valid()) return state();
  if (!probe_solver_) {
    // The CPU solver of the same force law (on the GPU path: the CPU kernel of the same
    // algorithm, theta and precision).
    GravityOptions g = options_.gravity;
    g.dim = dim();
    g.device = Device::Cpu;
    if (g.kernel != ForceKernel::Scalar) g.kernel = ForceKernel::Fast;
    g.block_size = 0;
    probe_solver_ = make_gravity_solver(g);
  }
  ParticleSystem& s = mutable_state();  // GPU path: uploaded with them before the next step
  probe_solver_->compute_accelerations(s);
  remember_fingerprint();
  return s;
}

std::vector<std::uint64_t> PySimulation::add(const std::vector<Body>& bodies) {
  const ParticleSystem& s = state();
  std::unordered_map<std::uint64_t, std::size_t> used;
  std::uint64_t largest = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    used.emplace(s.id[i], i);
    largest = std::max(largest, s.id[i]);
  }
  // Ids first (given ones checked against the system, 0 -> the next free one), then the
  // same checks as every other way in.
  ParticleSystem incoming;
  incoming.dim = s.dim;
  std::vector<std::uint64_t> ids;
  for (Body b : bodies) {
    if (b.id == 0) {
      if (largest == std::numeric_limits<std::uint64_t>::max())
        throw input_error("id", "0 asks for the next free id, and none is left above 2^64 - 1");
      b.id = ++largest;
    } else if (const auto it = used.find(b.id); it != used.end()) {
      throw Error(fmt::format("add: id {} is already used by body {}", b.id, it->second));
    }
    used.emplace(b.id, s.size() + ids.size());  // ids given twice in one call, or 0 then given
    largest = std::max(largest, b.id);
    incoming.add(b);
    ids.push_back(b.id);
  }
  const std::size_t n_active = n_active_with(incoming);
  validate_bodies(incoming);
  retire_viewed_buffers();
  ParticleSystem& target = mutable_state();
  for (std::size_t i = 0; i < incoming.size(); ++i) target.add(incoming.body(i));
  target.n_active = n_active;
  return ids;
}

void PySimulation::remove(const std::vector<std::size_t>& indices) {
  for (std::size_t i : indices) {
    if (i >= size())
      throw Error(fmt::format("remove: index {} is out of range ({} bodies)", i, size()));
  }
  retire_viewed_buffers();
  ParticleSystem& s = mutable_state();
  s.remove(indices);  // n_active counts the active bodies removed
  // Following the masses: without test particles left, every body (also those added
  // later) is active again.
  if (!n_active_given_ && !s.has_test_particles()) s.n_active = ParticleSystem::kAllActive;
}

double PySimulation::initial_energy() {
  if (std::isnan(initial_energy_)) initial_energy_ = diagnostics().total_energy;
  return initial_energy_;
}

void PySimulation::resume(const CheckpointState& state) {
  sim_->resume(state.step, state.collisions, state.integrator);
  initial_energy_ = state.initial_energy;
  // A checkpoint written while outputs were on records where their series stand.
  const bool had_outputs = state.parameters.find("output-dir") != std::string::npos;
  resumed_outputs = {had_outputs, state.next_snapshot, state.next_snapshot_time,
                     state.snapshot_origin};
}

void PySimulation::view_created() {
  ++live_views_;
  if (!fingerprint_set_) remember_fingerprint();
}

void PySimulation::view_released() {
  if (--live_views_ == 0) retired_.clear();
}

void PySimulation::retire_viewed_buffers() {
  if (!on_device()) detach_views();
}

void PySimulation::detach_views() {
  if (live_views_ == 0) return;
  ParticleSystem& current = sim_->edit_particles();
  auto old = std::make_unique<ParticleSystem>(std::move(current));
  current = *old;  // a copy on fresh buffers; the views keep the old ones
  retired_.push_back(std::move(old));
}

void PySimulation::check_bodies() const {
  check_state(state());
}

void PySimulation::check_view_edits() {
  if (!fingerprint_set_) return;
  if (on_device()) {  // the views there were copies
    fingerprint_set_ = false;
    return;
  }
  const Fingerprint now = fingerprint(state());
  if (now.forces == fingerprint_.forces && now.others == fingerprint_.others &&
      now.ids == fingerprint_.ids) {
    fingerprint_set_ = false;
    return;
  }
  // Edited through a view: the values are checked as at construction. On an error the
  // fingerprint stays, so the next step checks again (after the user mends the value).
  check_state(state(), now.ids != fingerprint_.ids);
  fingerprint_set_ = false;
  if (now.forces != fingerprint_.forces) sim_->edit_particles().invalidate_accelerations();
}

void PySimulation::remember_fingerprint() {
  if (live_views_ == 0 || on_device()) return;
  fingerprint_ = fingerprint(state());
  fingerprint_set_ = true;
}

}  // namespace nbody::python
