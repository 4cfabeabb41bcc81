#pragma once
// nbody.Simulation's C++ side: an nbody::Simulation plus its run options, so that any
// option can change between steps. A change of any option but dt goes to
// Simulation::reconfigure(), which keeps the state, time, ids, step count, collision totals
// and phase times (the accelerations are marked stale when the gravity options changed).
//
// The numpy views (sim.x, sim.masses, ...) alias the ParticleSystem's vectors on the CPU
// path. Four rules keep them safe:
//  - reconfigure() keeps the Simulation's host copy where it is (it is held by
//    unique_ptr), so across option changes on the CPU the buffers (and the views) stay;
//  - a switch to the GPU lets the views go the way a change of N does (below): on the GPU
//    the host copy is no longer the state, and the arrays handed out there are copies;
//  - an operation that changes N (add, remove) while views exist first retires the
//    current buffers (kept alive until the last view is gone) and continues on a copy:
//    old views stay readable but no longer alias the simulation;
//  - writes through a view cannot be seen as they happen, so while views exist a
//    fingerprint of the state is kept; when it changed, the bodies are checked (finite,
//    masses > 0 (>= 0 for test particles), ids >= 1 and unique: checks.hpp) and, when positions or
//    masses changed, the stored accelerations are marked stale, before the next step.
#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <vector>

#include "nbody/particles.hpp"
#include "nbody/phase_times.hpp"
#include "nbody/simulation.hpp"
#include "nbody/snapshot.hpp"
#include "python/run_options.hpp"

namespace nbody::python {

class PySimulation {
 public:
  /// Throws nbody::Error for bad bodies (checks.hpp) or options (the CLI's messages).
  PySimulation(ParticleSystem particles, const RunOptions& options);

  // ---- State ----------------------------------------------------------------------
  /// The state for reading (GPU path: downloaded when the device has stepped since).
  [[nodiscard]] const ParticleSystem& state() const;
  /// The state for writing: GPU path: uploaded before the next step or diagnostics.
  [[nodiscard]] ParticleSystem& mutable_state();
  [[nodiscard]] bool on_device() const { return sim_->on_device(); }
  [[nodiscard]] double time() const { return sim_->time(); }
  void set_time(double t);
  [[nodiscard]] std::size_t size() const { return sim_->size(); }
  [[nodiscard]] int dim() const { return state().dim; }
  /// Copies values into the state's existing buffers (views stay attached) after
  /// checking the edited copy with check_state(); `edit` writes into that copy.
  void edit_state(const std::function<void(ParticleSystem&)>& edit, bool moves_bodies);

  /// Throws nbody::Error "CALLER: the simulation has no bodies ..." when it has none.
  void check_has_bodies(const char* caller) const;

  /// Throws nbody::Error for the first bad body (check_state): writes through the views
  /// are not seen as they happen.
  void check_bodies() const;

  // ---- Options --------------------------------------------------------------------
  [[nodiscard]] const RunOptions& options() const { return options_; }
  /// Validates, then (reconfigure: anything but dt changed) hands the options to
  /// Simulation::reconfigure(); on nbody::Error nothing has changed.
  void set_options(const RunOptions& next, bool reconfigure);

  // ---- Stepping and measuring (call with the GIL released) ----------------------
  /// `count` steps of size dt; `keep_going` is polled between steps (false stops).
  /// Returns the number of steps done.
  std::uint64_t step(std::uint64_t count, const std::function<bool()>& keep_going);
  /// evolve()'s checks of t_end (after now, finite, reachable in steps of dt), bodies.
  void check_evolve(double t_end) const;
  /// Steps of size dt until the time is exactly t_end (the last step shortened).
  std::uint64_t evolve(double t_end, const std::function<bool()>& keep_going);
  /// method Auto: the simulation's own (options().energy, resolved at construction).
  [[nodiscard]] Diagnostics diagnostics(EnergyMethod method = EnergyMethod::Auto);
  /// Makes the stored accelerations those at the current positions (computing them when
  /// stale: on the GPU path, before the first step or after edits, with the CPU solver of
  /// the same algorithm, theta and precision) and returns the state holding them.
  const ParticleSystem& accelerations();

  // ---- Bodies -----------------------------------------------------------------------
  /// Appends bodies (ids 0 get fresh ones); returns their ids. Checks them first.
  std::vector<std::uint64_t> add(const std::vector<Body>& bodies);
  /// Removes bodies by index.
  void remove(const std::vector<std::size_t>& indices);

  // ---- Test particles (REBOUND's N_active; test_particles_binding.cpp) -----------
  /// -1 (every body active, REBOUND's default) or the number of active bodies.
  [[nodiscard]] long long n_active() const;
  /// Throws nbody::Error "n_active: ..." for a value outside -1..N or an active body
  /// without mass; then nothing changes. From here on, bodies added are test particles.
  void set_n_active(long long value);
  [[nodiscard]] int testparticle_type() const { return state().test_particle_type; }
  /// Throws nbody::Error "testparticle_type: ..." for a value but 0 and 1.
  void set_testparticle_type(long long value);
  /// Whether n_active was set (sim.n_active, or a file's) rather than following the
  /// massless bodies: bodies of mass 0 after every body with mass are test particles
  /// until n_active is set, and a body with mass added after them is refused.
  [[nodiscard]] bool n_active_given() const { return n_active_given_; }
  void set_n_active_given(bool given) { n_active_given_ = given; }

  // ---- Run totals (over every option change) -------------------------------------
  [[nodiscard]] std::uint64_t steps_done() const { return sim_->steps_done(); }
  [[nodiscard]] const CollisionTotals& collision_totals() const { return sim_->collision_totals(); }
  [[nodiscard]] const TimestepStats& timestep_stats() const { return sim_->timestep_stats(); }
  [[nodiscard]] const PhaseTimes& times() { return sim_->times(); }
  [[nodiscard]] std::string solver_name() const { return sim_->solver_name(); }
  [[nodiscard]] std::string integrator_name() const { return sim_->integrator_name(); }

  // ---- Run outputs (run_outputs.hpp) and checkpoints ------------------------------
  /// Called after every step of step() and evolve() (GIL released): the output series.
  void set_after_step(std::function<void()> hook) { after_step_ = std::move(hook); }
  /// The energy at the start of the run (the energy log's and checkpoints' E0): taken at
  /// the first use, kept through checkpoints.
  [[nodiscard]] double initial_energy();
  void set_initial_energy(double e0) { initial_energy_ = e0; }
  /// What a checkpoint recorded of the output series, for the next evolve() with outputs.
  struct ResumedOutputs {
    bool valid = false;
    std::uint64_t next_snapshot = 0;
    double next_snapshot_time = 0;
    double snapshot_origin = 0;
  };
  ResumedOutputs resumed_outputs;
  /// The output series of the last evolve() that asked for outputs (run_outputs.hpp).
  std::shared_ptr<class RunOutputs> outputs;
  /// Steps done, collision totals and integrator state from a checkpoint.
  void resume(const CheckpointState& state);
  [[nodiscard]] IntegratorState integrator_state() const { return sim_->integrator_state(); }

  // ---- Views and threads ----------------------------------------------------------
  void view_created();
  void view_released();
  [[nodiscard]] int live_views() const { return live_views_; }
  /// Held while a method uses the simulation; a second thread gets a RuntimeError
  /// (step, evolve, energy and accelerations release the GIL).
  class Busy {
   public:
    explicit Busy(PySimulation& sim);
    ~Busy();
    Busy(const Busy&) = delete;
    Busy& operator=(const Busy&) = delete;

   private:
    PySimulation& sim_;
  };

 private:
  /// Before N changes on the CPU path: with live views, retire the buffers (detach_views).
  void retire_viewed_buffers();
  /// With live views: moves the buffers to retired_ and goes on with a copy.
  void detach_views();
  /// With views out: when the state changed since remember_fingerprint(), checks it
  /// (nbody::Error) and marks the accelerations stale if positions or masses changed.
  void check_view_edits();
  void remember_fingerprint();
  /// add(): the state's n_active once `incoming` is appended; sets incoming.n_active to
  /// its own (for validate_bodies). Throws nbody::Error for a body with mass after the
  /// massless ones while n_active follows them.
  [[nodiscard]] std::size_t n_active_with(ParticleSystem& incoming) const;
  /// Whether ps's n_active is the one its masses give (kAllActive, or the massless bodies
  /// last and only they test particles).
  [[nodiscard]] static bool follows_masses(const ParticleSystem& ps);

  std::unique_ptr<Simulation> sim_;
  RunOptions options_;
  std::unique_ptr<GravitySolver> probe_solver_;  // accelerations() on stale state
  std::atomic<int> live_views_{0};               // released by numpy, maybe while a step runs
  std::vector<std::unique_ptr<ParticleSystem>> retired_;
  struct Fingerprint {
    std::uint64_t forces = 0;  // positions and masses
    std::uint64_t others = 0;  // velocities and radii
    std::uint64_t ids = 0;
  };
  static Fingerprint fingerprint(const ParticleSystem& ps);
  bool fingerprint_set_ = false;
  Fingerprint fingerprint_;
  std::atomic<bool> busy_{false};
  std::function<void()> after_step_;
  double initial_energy_ = std::numeric_limits<double>::quiet_NaN();
  bool n_active_given_ = false;
};

}  // namespace nbody::python
